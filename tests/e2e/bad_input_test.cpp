// Bad input changes nothing: a table of malformed create and update bodies, each answered with a
// 4xx JSON error, after which the store is exactly as it was.
#include "e2e_support.h"

namespace cairn::e2e {
namespace {

struct BadCase {
  std::string name;
  std::string body;  // raw bytes
  long status;       // 400 or 422
  std::string code;
  std::optional<std::string> field;  // see IsError(); nullopt: not checked
};

std::string Nested(int depth, bool objects) {
  std::string s;
  for (int i = 0; i < depth; ++i) s += objects ? "{\"a\":" : "[";
  s += "1";
  for (int i = 0; i < depth; ++i) s += objects ? "}" : "]";
  return s;
}

std::string ManyTags(int n) {
  std::string s = "[";
  for (int i = 0; i < n; ++i) s += (i ? ",\"t" : "\"t") + std::to_string(i) + "\"";
  return s + "]";
}

// Cases that are bad for both POST and PATCH (a PATCH body needs no title, so each one that
// exercises some other field also carries a valid title).
std::vector<BadCase> CommonCases() {
  const std::string big_title(100 * 1024, 'T');
  return {
      // Not JSON at all.
      {"invalid json", R"({"title": nope})", 400, "bad_request", std::nullopt},
      {"truncated json", R"({"title":"abc","tags":["a")", 400, "bad_request", std::nullopt},
      {"truncated string", R"({"title":"abc)", 400, "bad_request", std::nullopt},
      {"empty body", "", 400, "bad_request", std::nullopt},
      {"whitespace body", "  \n ", 400, "bad_request", std::nullopt},
      {"trailing garbage", R"({"title":"a"} {"title":"b"})", 400, "bad_request", std::nullopt},
      {"trailing comma", R"({"title":"a",})", 400, "bad_request", std::nullopt},
      {"single quotes", R"({'title':'a'})", 400, "bad_request", std::nullopt},
      {"NaN", R"({"title":"a","context":{"x":NaN}})", 400, "bad_request", std::nullopt},
      {"comment", "{\"title\":\"a\" /* c */}", 400, "bad_request", std::nullopt},
      {"unescaped control char", "{\"title\":\"a\x01" "b\"}", 400, "bad_request", std::nullopt},
      {"100 nested arrays in context", "{\"title\":\"a\",\"context\":" + Nested(100, false) + "}",
       400, "bad_request", std::nullopt},
      {"100 nested objects", "{\"title\":\"a\",\"context\":" + Nested(100, true) + "}", 400, "bad_request",
       std::nullopt},
      {"deep nesting in tags", "{\"title\":\"a\",\"tags\":" + Nested(100, false) + "}", 400, "bad_request",
       std::nullopt},
      {"invalid utf-8 in title", "{\"title\":\"ab\xff\xfe\"}", 400, "bad_request", std::nullopt},
      {"invalid utf-8 in context", "{\"title\":\"a\",\"context\":{\"k\":\"\xc3\x28\"}}", 400, "bad_request",
       std::nullopt},
      {"invalid utf-8 in a key", "{\"title\":\"a\",\"context\":{\"\xed\xa0\x80\":1}}", 400, "bad_request",
       std::nullopt},
      {"overlong utf-8", "{\"title\":\"\xc0\xaf\"}", 400, "bad_request", std::nullopt},
      // Well-formed JSON that is not an object.
      {"array body", R"([{"title":"a"}])", 422, "validation_failed", std::nullopt},
      {"string body", R"("title")", 422, "validation_failed", std::nullopt},
      {"number body", "42", 422, "validation_failed", std::nullopt},
      {"null body", "null", 422, "validation_failed", std::nullopt},
      // Wrong types, field by field.
      {"title number", R"({"title":1})", 422, "validation_failed", "title"},
      {"title array", R"({"title":["a"]})", 422, "validation_failed", "title"},
      {"title object", R"({"title":{"a":1}})", 422, "validation_failed", "title"},
      {"title blank", R"({"title":"   "})", 422, "validation_failed", "title"},
      {"title empty", R"({"title":""})", 422, "validation_failed", "title"},
      {"title 100 KB", "{\"title\":\"" + big_title + "\"}", 422, "validation_failed", "title"},
      {"schema_name number", R"({"title":"a","schema_name":5})", 422, "validation_failed", "schema_name"},
      {"schema_name with space", R"({"title":"a","schema_name":"has space"})", 422, "validation_failed",
       "schema_name"},
      {"schema_name empty", R"({"title":"a","schema_name":""})", 422, "validation_failed", "schema_name"},
      {"schema_name too long", "{\"title\":\"a\",\"schema_name\":\"" + std::string(300, 's') + "\"}", 422,
       "validation_failed", "schema_name"},
      {"description number", R"({"title":"a","description":5})", 422, "validation_failed", "description"},
      {"description 17 KiB", "{\"title\":\"a\",\"description\":\"" + std::string(17 * 1024, 'd') + "\"}", 422,
       "validation_failed", "description"},
      {"tags string", R"({"title":"a","tags":"x"})", 422, "validation_failed", "tags*"},
      {"tags object", R"({"title":"a","tags":{"x":1}})", 422, "validation_failed", "tags*"},
      {"tags null", R"({"title":"a","tags":null})", 422, "validation_failed", "tags*"},
      {"tag number", R"({"title":"a","tags":["ok",1]})", 422, "validation_failed", "tags[1]"},
      {"tag null", R"({"title":"a","tags":[null]})", 422, "validation_failed", "tags[0]"},
      {"tag empty", R"({"title":"a","tags":[""]})", 422, "validation_failed", "tags[0]"},
      {"tag of 300 bytes", "{\"title\":\"a\",\"tags\":[\"" + std::string(300, 'g') + "\"]}", 422,
       "validation_failed", "tags[0]"},
      {"tag with control char", R"({"title":"a","tags":["a\u0007b"]})", 422, "validation_failed", "tags[0]"},
      {"tag with newline", R"({"title":"a","tags":["ok","a\nb"]})", 422, "validation_failed", "tags[1]"},
      {"65 tags", "{\"title\":\"a\",\"tags\":" + ManyTags(65) + "}", 422, "validation_failed", "tags*"},
      {"200 tags", "{\"title\":\"a\",\"tags\":" + ManyTags(200) + "}", 422, "validation_failed", "tags*"},
      {"path number", R"({"title":"a","path":1})", 422, "validation_failed", "path"},
      {"path empty", R"({"title":"a","path":""})", 422, "validation_failed", "path"},
      {"path empty segment", R"({"title":"a","path":"a//b"})", 422, "validation_failed", "path"},
      {"path leading slash", R"({"title":"a","path":"/a/b"})", 422, "validation_failed", "path"},
      {"path trailing slash", R"({"title":"a","path":"a/b/"})", 422, "validation_failed", "path"},
      {"path with space", R"({"title":"a","path":"a b"})", 422, "validation_failed", "path"},
      {"path with star", R"({"title":"a","path":"a/*"})", 422, "validation_failed", "path"},
      {"path with question mark", R"({"title":"a","path":"a/b?"})", 422, "validation_failed", "path"},
      {"llm_hints string", R"({"title":"a","llm_hints":"x"})", 422, "validation_failed", "llm_hints*"},
      {"llm_hints array", R"({"title":"a","llm_hints":["a"]})", 422, "validation_failed", "llm_hints*"},
      {"llm_hints include string", R"({"title":"a","llm_hints":{"include":"a"}})", 422, "validation_failed",
       "llm_hints*"},
      {"llm_hints include number item", R"({"title":"a","llm_hints":{"include":[1]}})", 422, "validation_failed",
       "llm_hints*"},
      {"llm_hints template number", R"({"title":"a","llm_hints":{"template":5}})", 422, "validation_failed",
       "llm_hints*"},
      {"llm_hints unknown key", R"({"title":"a","llm_hints":{"format":"md"}})", 422, "validation_failed",
       "llm_hints*"},
      {"visibility unknown", R"({"title":"a","visibility":"everyone"})", 422, "validation_failed", "visibility"},
      {"visibility number", R"({"title":"a","visibility":1})", 422, "validation_failed", "visibility"},
      {"visibility wrong case", R"({"title":"a","visibility":"PUBLIC"})", 422, "validation_failed", "visibility"},
      {"sensitivity unknown", R"({"title":"a","sensitivity":"high"})", 422, "validation_failed", "sensitivity"},
      {"sensitivity bool", R"({"title":"a","sensitivity":true})", 422, "validation_failed", "sensitivity"},
      {"ttl not a date", R"({"title":"a","ttl":"tomorrow"})", 422, "validation_failed", "ttl"},
      {"ttl number", R"({"title":"a","ttl":1700000000})", 422, "validation_failed", "ttl"},
      {"ttl in the past", R"({"title":"a","ttl":"2001-01-01T00:00:00Z"})", 422, "validation_failed", "ttl"},
      {"ttl without zone", R"({"title":"a","ttl":"2999-01-01T00:00:00"})", 422, "validation_failed", "ttl"},
      {"unknown field", R"({"title":"a","colour":"red"})", 422, "validation_failed", "colour"},
      {"server-owned id", R"({"title":"a","id":"0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"})", 422, "validation_failed",
       "id"},
      {"server-owned version", R"({"title":"a","version":7})", 422, "validation_failed", "version"},
      {"server-owned checksum", R"({"title":"a","checksum":"sha256:00"})", 422, "validation_failed", "checksum"},
      {"server-owned created_by", R"({"title":"a","created_by":"root"})", 422, "validation_failed", "created_by"},
      {"server-owned owner_id", R"({"title":"a","owner_id":"other-tenant"})", 422, "validation_failed",
       "owner_id"},
  };
}

std::vector<BadCase> CreateOnlyCases() {
  return {
      {"empty object", "{}", 422, "validation_failed", "title"},
      {"missing title", R"({"tags":["a"],"context":{}})", 422, "validation_failed", "title"},
      {"title null", R"({"title":null})", 422, "validation_failed", "title"},
      {"trace string", R"({"title":"a","trace":"t"})", 422, "validation_failed", "trace*"},
      {"trace depth string", R"({"title":"a","trace":{"depth":"deep"}})", 422, "validation_failed", "trace*"},
      {"trace depth negative", R"({"title":"a","trace":{"depth":-1}})", 422, "validation_failed", "trace*"},
      {"trace unknown key", R"({"title":"a","trace":{"span":"x"}})", 422, "validation_failed", "trace*"},
      {"trace_id number", R"({"title":"a","trace":{"trace_id":5}})", 422, "validation_failed", "trace*"},
  };
}

std::vector<BadCase> PatchOnlyCases() {
  return {
      {"empty patch", "{}", 422, "validation_failed", std::nullopt},
      {"title null", R"({"title":null})", 422, "validation_failed", "title"},
      {"trace not patchable", R"({"trace":{"depth":1}})", 422, "validation_failed", "trace"},
  };
}

class e2e_bad_input : public ServerTest {
 protected:
  void SeedStore() {
    CreateOk(json::parse(R"({"title":"seed one","tags":["s"],"path":"seed/one","context":{"n":1}})"));
    json::object two = CreateOk(json::parse(R"({"title":"seed two","context":{"n":2}})"));
    target_ = StringAt(two, "id");
    PatchOk(target_, json::parse(R"({"title":"seed two v2","context":{"n":22},"description":"d"})"));
  }
  std::string target_;
};

TEST_F(e2e_bad_input, CreateBodiesAreRejectedAndChangeNothing) {
  SeedStore();
  const auto before = StoreSnapshot();
  ASSERT_EQ(before.size(), 2u);
  std::vector<BadCase> cases = CommonCases();
  for (auto& c : CreateOnlyCases()) cases.push_back(std::move(c));
  for (const auto& c : cases) {
    SCOPED_TRACE("POST case: " + c.name);
    Response r = client().Post("/breadcrumbs", c.body, {{"X-Cairn-Actor", "fuzzer"}});
    EXPECT_TRUE(IsClientError(r));
    EXPECT_TRUE(IsError(r, c.status, c.code, c.field));
    EXPECT_FALSE(r.Header("location").has_value());
    EXPECT_EQ(StoreSnapshot(), before);
  }
  // The server is still fine.
  EXPECT_EQ(client().Get("/health").status, 200);
  json::object ok = CreateTitled("after the storm");
  EXPECT_EQ(IntAt(ok, "version"), 1);
}

TEST_F(e2e_bad_input, PatchBodiesAreRejectedAndChangeNothing) {
  SeedStore();
  const auto before = StoreSnapshot();
  const json::object full_before = FullOk(target_);
  const Response history_before = client().Get("/breadcrumbs/" + target_ + "/history");
  ASSERT_EQ(IntAt(full_before, "version"), 2);
  std::vector<BadCase> cases = CommonCases();
  for (auto& c : PatchOnlyCases()) cases.push_back(std::move(c));
  for (const auto& c : cases) {
    SCOPED_TRACE("PATCH case: " + c.name);
    Response r = client().Patch("/breadcrumbs/" + target_, c.body, {{"X-Cairn-Actor", "fuzzer"}});
    EXPECT_TRUE(IsClientError(r));
    EXPECT_TRUE(IsError(r, c.status, c.code, c.field));
    // With a matching If-Match too: the precondition holds, the body is still bad.
    Response r2 = client().Patch("/breadcrumbs/" + target_, c.body, {{"If-Match", "2"}});
    EXPECT_TRUE(IsError(r2, c.status, c.code, c.field));
    EXPECT_EQ(FullOk(target_), full_before);
  }
  EXPECT_EQ(StoreSnapshot(), before);
  Response history_after = client().Get("/breadcrumbs/" + target_ + "/history");
  EXPECT_EQ(history_after.Json(), history_before.Json());
  // The record still takes a good patch, as version 3.
  EXPECT_EQ(IntAt(PatchOk(target_, json::parse(R"({"title":"fine"})"), {{"If-Match", "2"}}), "version"), 3);
}

TEST_F(e2e_bad_input, PathConflictOnPatchChangesNothing) {
  SeedStore();
  const json::object full_before = FullOk(target_);
  Response r = client().Patch("/breadcrumbs/" + target_, R"({"title":"stolen","path":"seed/one"})");
  EXPECT_TRUE(IsError(r, 409, "conflict"));
  EXPECT_EQ(FullOk(target_), full_before);
}

TEST_F(e2e_bad_input, ValidBoundaryValuesAreAccepted) {
  // Just inside every limit, so the table above is testing the limits and not something else.
  json::object rec = CreateOk(json::parse("{\"title\":\"" + std::string(1024, 'T') + "\",\"tags\":" + ManyTags(64) +
                                          ",\"schema_name\":\"" + std::string(256, 's') +
                                          "\",\"description\":\"" + std::string(16 * 1024, 'd') + "\"}"));
  EXPECT_EQ(rec.at("tags").as_array().size(), 64u);
  CreateOk(json::parse("{\"title\":\"a\",\"tags\":[\"" + std::string(256, 'g') + "\"]}"));
  CreateOk(json::parse(R"({"title":"a","schema_name":"a.b_c-d:e/f","path":"a/b-c/d_e.f"})"));
  json::parse_options deep;
  deep.max_depth = 256;
  CreateOk(json::parse("{\"title\":\"a\",\"context\":" + Nested(32, false) + "}", {}, deep));
  CreateOk(json::parse(R"({"title":"unicode \u00e9\u4e2d\ud83d\ude00","tags":["caf\u00e9"]})"));
  CreateOk(json::parse(R"({"title":"a","context":[1,"two",null,true]})"));
  CreateOk(json::parse(R"({"title":"a","context":"just a string"})"));
  CreateOk(json::parse(R"({"title":"a","schema_name":null,"description":null,"path":null,"llm_hints":null,"ttl":null})"));
  EXPECT_EQ(ListIds().size(), 8u);
}

}  // namespace
}  // namespace cairn::e2e
