// Every error of docs/api.md: its status, its code and the {"error":{...}} shape.
#include <cstdio>

#include "e2e_support.h"

namespace cairn::e2e {
namespace {

const std::string kUnknownId = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";

class e2e_errors : public ServerTest {};

TEST_F(e2e_errors, MalformedJsonIs400) {
  json::object rec = CreateTitled("x");
  const std::string id = StringAt(rec, "id");
  auto before = StoreSnapshot();
  EXPECT_TRUE(IsError(client().Post("/breadcrumbs", R"({"title": )"), 400, "bad_request"));
  EXPECT_TRUE(IsError(client().Patch("/breadcrumbs/" + id, R"({"title": "a",})"), 400, "bad_request"));
  EXPECT_EQ(StoreSnapshot(), before);
}

TEST_F(e2e_errors, BodyWithoutJsonContentTypeIs415) {
  json::object rec = CreateTitled("x");
  const std::string id = StringAt(rec, "id");
  auto before = StoreSnapshot();
  const std::string body = R"({"title":"t"})";
  EXPECT_TRUE(IsError(client().Send({"POST", "/breadcrumbs", {}, body, std::string("text/plain")}), 415,
                      "unsupported_media_type"));
  EXPECT_TRUE(IsError(client().Send({"POST", "/breadcrumbs", {}, body, std::nullopt}), 415, "unsupported_media_type"));
  EXPECT_TRUE(IsError(client().Send({"POST", "/breadcrumbs", {}, body, std::string("application/x-www-form-urlencoded")}),
                      415, "unsupported_media_type"));
  EXPECT_TRUE(IsError(client().Send({"PATCH", "/breadcrumbs/" + id, {}, body, std::string("text/json-ish")}), 415,
                      "unsupported_media_type"));
  EXPECT_TRUE(IsError(client().Send({"PATCH", "/breadcrumbs/" + id, {}, body, std::nullopt}), 415,
                      "unsupported_media_type"));
  EXPECT_EQ(StoreSnapshot(), before);
}

TEST_F(e2e_errors, ValidationErrorNamesTheField) {
  EXPECT_TRUE(IsError(client().Post("/breadcrumbs", R"({"title":"t","tags":["a","b",3]})"), 422, "validation_failed",
                      "tags[2]"));
  EXPECT_TRUE(IsError(client().Post("/breadcrumbs", R"({"tags":["a"]})"), 422, "validation_failed", "title"));
  EXPECT_TRUE(IsError(client().Post("/breadcrumbs", R"({"title":"t","visibility":"world"})"), 422,
                      "validation_failed", "visibility"));
  EXPECT_TRUE(
      IsError(client().Post("/breadcrumbs", R"({"title":"t","colour":"red"})"), 422, "validation_failed", "colour"));
  EXPECT_TRUE(IsError(client().Post("/breadcrumbs", R"({"title":"t","llm_hints":{"include":"a"}})"), 422,
                      "validation_failed", "llm_hints*"));
  json::object rec = CreateTitled("x");
  EXPECT_TRUE(IsError(client().Patch("/breadcrumbs/" + StringAt(rec, "id"), R"({"sensitivity":"top"})"), 422,
                      "validation_failed", "sensitivity"));
  EXPECT_EQ(ListIds().size(), 1u);
}

TEST_F(e2e_errors, UnknownIdIs404) {
  CreateTitled("present");
  for (std::string suffix : {"", "/full", "/history"}) {
    EXPECT_TRUE(IsError(client().Get("/breadcrumbs/" + kUnknownId + suffix), 404, "not_found")) << suffix;
    EXPECT_TRUE(IsError(client().Get("/breadcrumbs/not-a-uuid" + suffix), 404, "not_found")) << suffix;
  }
  EXPECT_TRUE(IsError(client().Delete("/breadcrumbs/" + kUnknownId), 404, "not_found"));
  EXPECT_TRUE(IsError(client().Patch("/breadcrumbs/" + kUnknownId, R"({"title":"t"})"), 404, "not_found"));
}

TEST_F(e2e_errors, UnknownRouteIs404) {
  json::object rec = CreateTitled("present");
  const std::string id = StringAt(rec, "id");
  for (std::string target :
       {std::string("/"), std::string("/nope"), std::string("/breadcrumb"), "/breadcrumbs/" + id + "/nope",
        "/breadcrumbs/" + id + "/full/extra", std::string("/health/x"), std::string("/v1/breadcrumbs")}) {
    EXPECT_TRUE(IsError(client().Get(target), 404, "not_found")) << "GET " << target;
  }
  EXPECT_TRUE(IsError(client().Post("/nope", R"({"title":"t"})"), 404, "not_found"));
  EXPECT_EQ(ListIds().size(), 1u);
}

TEST_F(e2e_errors, BadIfMatchIs400) {
  json::object rec = CreateTitled("x");
  const std::string id = StringAt(rec, "id");
  for (std::string bad : {"abc", "\"abc\"", "-1", "1.5", "\"1"}) {
    EXPECT_TRUE(IsError(client().Patch("/breadcrumbs/" + id, R"({"title":"t"})", {{"If-Match", bad}}), 400,
                        "bad_request"))
        << "If-Match: " << bad;
    EXPECT_TRUE(IsError(client().Delete("/breadcrumbs/" + id, {{"If-Match", bad}}), 400, "bad_request"))
        << "If-Match: " << bad;
  }
  json::object after = FullOk(id);
  EXPECT_EQ(IntAt(after, "version"), 1);
  EXPECT_EQ(StringAt(after, "title"), "x");
}

TEST_F(e2e_errors, BadActorIs400) {
  const std::string body = R"({"title":"t"})";
  EXPECT_TRUE(IsError(client().Post("/breadcrumbs", body, {{"X-Cairn-Actor", std::string(129, 'a')}}), 400,
                      "bad_request"));
  EXPECT_TRUE(IsError(client().Post("/breadcrumbs", body, {{"X-Cairn-Actor", ""}}), 400, "bad_request"));
  EXPECT_TRUE(ListIds().empty());
}

TEST_F(e2e_errors, BadQueryParametersAre400) {
  for (int i = 0; i < 3; ++i) CreateTitled("r" + std::to_string(i));
  const std::vector<std::string> bad = {
      "foo=1",
      "limt=10",
      "limit=0",
      "limit=5000",
      "limit=1001",
      "limit=abc",
      "limit=-1",
      "limit=10x",
      "limit=",
      "cursor=not-a-cursor",
      "cursor=" + UrlEncode("{\"id\":\"x\"}"),
      "order=sideways",
      "order=DESCENDING",
      "context_match=" + UrlEncode("{not json"),
      "context_match=" + UrlEncode(R"({"path":"$.a","op":"like","value":1})"),
      "context_match=" + UrlEncode(R"({"path":"a.b","op":"eq","value":1})"),
      "context_match=" + UrlEncode(R"({"op":"eq","value":1})"),
      "context_match=" + UrlEncode(R"([{"path":"$.a","op":"eq","value":1}, 7])"),
      "context_match=" + UrlEncode("42"),
  };
  for (const auto& query : bad) {
    // `field` names the parameter (for a context rule, the part of it at fault).
    std::string field = query.substr(0, query.find('=')) + "*";
    EXPECT_TRUE(IsError(client().Get("/breadcrumbs?" + query), 400, "bad_request", field)) << "GET /breadcrumbs?" << query;
  }
  // The boundaries that are fine.
  for (std::string good : {"limit=1", "limit=1000", "order=asc", "order=desc", "include_context=true"}) {
    Response r = client().Get("/breadcrumbs?" + good);
    EXPECT_EQ(r.status, 200) << good << " -> " << r.Describe();
  }
}

TEST_F(e2e_errors, ACursorFromAnotherOrderOrQueryIsNotSilentlyWrong) {
  for (int i = 0; i < 5; ++i) CreateTitled("r" + std::to_string(i));
  Response r = client().Get("/breadcrumbs?limit=2");
  ASSERT_EQ(r.status, 200) << r.Describe();
  json::object page = ObjectOf(r);
  ASSERT_TRUE(page.at("next_cursor").is_string()) << r.body;
  std::string cursor(page.at("next_cursor").as_string());
  // A truncated or altered cursor is a bad cursor.
  std::string altered = cursor.substr(0, cursor.size() / 2);
  EXPECT_TRUE(IsError(client().Get("/breadcrumbs?limit=2&cursor=" + UrlEncode(altered)), 400, "bad_request", "cursor"));
  EXPECT_TRUE(
      IsError(client().Get("/breadcrumbs?limit=2&cursor=" + UrlEncode(cursor + "!!")), 400, "bad_request", "cursor"));
}

TEST_F(e2e_errors, MalformedHttpDoesNotHurtTheServer) {
  for (std::string garbage :
       {std::string("GARBAGE\r\n\r\n"), std::string("GET / HTTP/9.9\r\n\r\n"),
        std::string("GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n"),
        std::string("POST /breadcrumbs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\n"
                    "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
        std::string("GET /health HTTP/1.1\r\nBad Header Without Colon\r\n\r\n"), std::string("\x01\x02\x03\r\n\r\n")}) {
    Response r = RawExchange(server().port(), garbage, std::chrono::seconds(10));
    // Either a 400 (with the JSON error shape) or a closed connection; never a success or a hang.
    if (r.status != 0) {
      EXPECT_EQ(r.status, 400) << JsonText(json::string(garbage)) << " -> " << r.Describe();
    } else {
      EXPECT_TRUE(r.connection_closed) << JsonText(json::string(garbage)) << " -> " << r.Describe();
    }
  }
  EXPECT_EQ(client().Get("/health").status, 200);
  EXPECT_TRUE(ListIds().empty());
}

TEST_F(e2e_errors, RawRequestGetsTheSameAnswersAsCurl) {
  Response r = RawExchange(server().port(),
                           "POST /breadcrumbs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                           "Content-Length: 13\r\nConnection: close\r\n\r\n{\"title\":\"r\"}");
  EXPECT_EQ(r.status, 201) << r.Describe();
  EXPECT_EQ(StringAt(ObjectOf(r), "title"), "r");
}

// Small limits so that the bounds are cheap to cross.
class e2e_limits : public ServerTest {
 protected:
  std::vector<std::string> ServerArgs() const override {
    return {"--max-body-bytes", "4096", "--max-header-bytes", "4096", "--max-tags", "3", "--max-title-bytes", "16",
            "--max-json-depth", "8"};
  }
};

std::string BodyOfSize(size_t size) {
  std::string prefix = R"({"title":"big","context":{"pad":")";
  std::string suffix = R"("}})";
  return prefix + std::string(size - prefix.size() - suffix.size(), 'x') + suffix;
}

TEST_F(e2e_limits, BodyOverMaxBodyBytesIs413) {
  EXPECT_TRUE(IsError(client().Post("/breadcrumbs", BodyOfSize(8192)), 413, "payload_too_large"));
  EXPECT_TRUE(IsError(client().Post("/breadcrumbs", BodyOfSize(4097)), 413, "payload_too_large"));
  EXPECT_TRUE(ListIds().empty());
  json::object rec = CreateOk(json::parse(BodyOfSize(4000)));
  ASSERT_FALSE(rec.empty());
  json::object before = FullOk(StringAt(rec, "id"));
  EXPECT_TRUE(IsError(client().Patch("/breadcrumbs/" + StringAt(rec, "id"), BodyOfSize(8192)), 413,
                      "payload_too_large"));
  EXPECT_EQ(FullOk(StringAt(rec, "id")), before);
  EXPECT_EQ(client().Get("/health").status, 200);
}

TEST_F(e2e_limits, HeadersOverMaxHeaderBytesAre431) {
  // Over a raw socket, so the bytes are exactly ours.
  std::string request = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Filler: " + std::string(8192, 'f') +
                        "\r\nConnection: close\r\n\r\n";
  Response raw = RawExchange(server().port(), request);
  EXPECT_TRUE(IsError(raw, 431, "header_too_large"));
  // Through curl too (many headers rather than one long one).
  Headers many;
  for (int i = 0; i < 100; ++i) many.emplace_back("X-Pad-" + std::to_string(i), std::string(60, 'p'));
  EXPECT_TRUE(IsError(client().Post("/breadcrumbs", R"({"title":"t"})", many), 431, "header_too_large"));
  EXPECT_TRUE(ListIds().empty());
  // A modest header is fine.
  EXPECT_EQ(client().Get("/health", {{"X-Filler", std::string(1024, 'f')}}).status, 200);
}

TEST_F(e2e_limits, ConfiguredFieldLimitsAreEnforced) {
  EXPECT_TRUE(IsError(client().Post("/breadcrumbs", R"({"title":"0123456789abcdefg"})"), 422, "validation_failed",
                      "title"));
  EXPECT_TRUE(IsError(client().Post("/breadcrumbs", R"({"title":"t","tags":["a","b","c","d"]})"), 422,
                      "validation_failed", "tags*"));
  EXPECT_TRUE(IsError(client().Post("/breadcrumbs", R"({"title":"t","context":[[[[[[[[[[1]]]]]]]]]]})"), 400,
                      "bad_request"));
  EXPECT_TRUE(ListIds().empty());
  EXPECT_EQ(StringAt(CreateTitled("0123456789abcdef"), "title"), "0123456789abcdef");
  CreateOk(json::parse(R"({"title":"t","tags":["a","b","c"],"context":[[[1]]]})"));
  EXPECT_EQ(ListIds().size(), 2u);
}

std::string Chunked(const std::string& target, const std::string& body, size_t chunk) {
  std::string out = "POST " + target +
                    " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
  for (size_t pos = 0; pos < body.size(); pos += chunk) {
    std::string part = body.substr(pos, chunk);
    char size[32];
    std::snprintf(size, sizeof(size), "%zx\r\n", part.size());
    out += size + part + "\r\n";
  }
  return out + "0\r\n\r\n";
}

TEST_F(e2e_limits, ChunkedBodiesAreAcceptedAndBounded) {
  Response ok = RawExchange(server().port(), Chunked("/breadcrumbs", BodyOfSize(3000), 512));
  EXPECT_EQ(ok.status, 201) << ok.Describe();
  ASSERT_EQ(ListIds().size(), 1u);
  // The body limit holds when no Content-Length announces the size.
  Response big = RawExchange(server().port(), Chunked("/breadcrumbs", BodyOfSize(8192), 1000));
  EXPECT_TRUE(IsError(big, 413, "payload_too_large"));
  EXPECT_EQ(ListIds().size(), 1u);
}

class e2e_default_limits : public ServerTest {};

TEST_F(e2e_default_limits, BodyOverTwoMebibytesIs413) {
  EXPECT_TRUE(IsError(client().Post("/breadcrumbs", BodyOfSize(2 * 1024 * 1024 + 1)), 413, "payload_too_large"));
  EXPECT_TRUE(ListIds().empty());
  EXPECT_EQ(client().Get("/health").status, 200);
}

}  // namespace
}  // namespace cairn::e2e
