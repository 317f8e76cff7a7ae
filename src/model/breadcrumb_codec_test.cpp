#include "model/breadcrumb_codec.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <set>
#include <string>

namespace cairn::model {
namespace {

namespace json = boost::json;

constexpr int64_t kNow = 1'795'225'252'000'000;  // 2026-11-21T01:40:52Z

json::value J(std::string_view text) { return json::parse(text); }

Result<BreadcrumbDraft> Draft(std::string_view body, const Limits& limits = {}) {
  return ParseDraft(J(body), limits, kNow);
}
Result<BreadcrumbPatch> Patch(std::string_view body, const Limits& limits = {}) {
  return ParsePatch(J(body), limits, kNow);
}

template <typename T>
void ExpectValidation(const Result<T>& result, const std::string& field, std::string_view context) {
  ASSERT_FALSE(result.ok()) << context;
  EXPECT_EQ(result.status().code(), StatusCode::kValidation) << context << ": " << result.status().ToString();
  EXPECT_EQ(result.status().field(), field) << context << ": " << result.status().ToString();
}

std::set<std::string> Keys(const json::object& obj) {
  std::set<std::string> keys;
  for (const auto& kv : obj) keys.insert(std::string(kv.key()));
  return keys;
}

TEST(ParseDraftTest, MinimalBodyGetsDefaults) {
  auto draft = Draft(R"({"title":"hello"})");
  ASSERT_TRUE(draft.ok()) << draft.status().ToString();
  EXPECT_EQ(draft->title, "hello");
  EXPECT_FALSE(draft->schema_name);
  EXPECT_FALSE(draft->description);
  EXPECT_TRUE(draft->tags.empty());
  EXPECT_EQ(draft->context, json::value(json::object()));
  EXPECT_FALSE(draft->path);
  EXPECT_TRUE(draft->llm_hints.is_null());
  EXPECT_EQ(draft->visibility, "team");
  EXPECT_EQ(draft->sensitivity, "low");
  EXPECT_FALSE(draft->ttl_micros);
  EXPECT_FALSE(draft->trace);
}

TEST(ParseDraftTest, FullBody) {
  auto draft = Draft(R"({"title":"t","schema_name":"user.message.v1","description":"d","tags":["a","b"],
      "context":{"x":[1,{"y":2}]},"path":"users/u1/chats/c1","llm_hints":{"include":["x"],"template":"{{x}}"},
      "visibility":"private","sensitivity":"pii","ttl":"2026-11-21T03:40:52+01:00",
      "trace":{"trace_id":"tr","caused_by":"parent","depth":3}})");
  ASSERT_TRUE(draft.ok()) << draft.status().ToString();
  EXPECT_EQ(draft->schema_name, "user.message.v1");
  EXPECT_EQ(draft->description, "d");
  EXPECT_EQ(draft->tags, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(draft->context, J(R"({"x":[1,{"y":2}]})"));
  EXPECT_EQ(draft->path, "users/u1/chats/c1");
  EXPECT_EQ(draft->llm_hints, J(R"({"include":["x"],"template":"{{x}}"})"));
  EXPECT_EQ(draft->visibility, "private");
  EXPECT_EQ(draft->sensitivity, "pii");
  EXPECT_EQ(draft->ttl_micros, kNow + 3'600'000'000LL);
  ASSERT_TRUE(draft->trace);
  EXPECT_EQ(draft->trace->trace_id, "tr");
  EXPECT_EQ(draft->trace->caused_by, "parent");
  EXPECT_EQ(draft->trace->depth, 3);
}

TEST(ParseDraftTest, ContextMayBeAnyJson) {
  for (const char* context : {"[1,2]", "\"text\"", "7", "null", "true", R"({"a":{"b":{}}})"}) {
    auto draft = Draft(std::string(R"({"title":"t","context":)") + context + "}");
    ASSERT_TRUE(draft.ok()) << context;
    EXPECT_EQ(draft->context, J(context));
  }
}

TEST(ParseDraftTest, TitleIsRequiredAndNotBlank) {
  ExpectValidation(Draft(R"({})"), "title", "missing");
  ExpectValidation(Draft(R"({"tags":["a"]})"), "title", "missing with others");
  ExpectValidation(Draft(R"({"title":""})"), "title", "empty");
  ExpectValidation(Draft(R"({"title":"  \t\n "})"), "title", "blank");
  Limits limits;
  limits.max_title_bytes = 5;
  EXPECT_TRUE(Draft(R"({"title":"12345"})", limits).ok());
  ExpectValidation(Draft(R"({"title":"123456"})", limits), "title", "too long");
}

TEST(ParseDraftTest, BodyMustBeAnObject) {
  ExpectValidation(Draft(R"([{"title":"t"}])"), "body", "array");
  ExpectValidation(Draft(R"("t")"), "body", "string");
  ExpectValidation(Draft("null"), "body", "null");
}

TEST(ParseDraftTest, EveryWrongType) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"title":1})", "title"},
      {R"({"title":null})", "title"},
      {R"({"title":["t"]})", "title"},
      {R"({"title":"t","schema_name":5})", "schema_name"},
      {R"({"title":"t","schema_name":{}})", "schema_name"},
      {R"({"title":"t","description":[]})", "description"},
      {R"({"title":"t","description":false})", "description"},
      {R"({"title":"t","tags":"a"})", "tags"},
      {R"({"title":"t","tags":null})", "tags"},
      {R"({"title":"t","tags":{"a":1}})", "tags"},
      {R"({"title":"t","tags":["a","b",3]})", "tags[2]"},
      {R"({"title":"t","tags":[null]})", "tags[0]"},
      {R"({"title":"t","path":3})", "path"},
      {R"({"title":"t","llm_hints":"x"})", "llm_hints"},
      {R"({"title":"t","llm_hints":[]})", "llm_hints"},
      {R"({"title":"t","visibility":1})", "visibility"},
      {R"({"title":"t","visibility":null})", "visibility"},
      {R"({"title":"t","sensitivity":true})", "sensitivity"},
      {R"({"title":"t","ttl":5})", "ttl"},
      {R"({"title":"t","ttl":{}})", "ttl"},
      {R"({"title":"t","trace":"x"})", "trace"},
      {R"({"title":"t","trace":null})", "trace"},
      {R"({"title":"t","trace":{"trace_id":1}})", "trace.trace_id"},
      {R"({"title":"t","trace":{"caused_by":[]}})", "trace.caused_by"},
      {R"({"title":"t","trace":{"depth":"1"}})", "trace.depth"},
      {R"({"title":"t","trace":{"depth":1.5}})", "trace.depth"},
  };
  for (const auto& [body, field] : cases) ExpectValidation(Draft(body), field, body);
}

TEST(ParseDraftTest, UnknownAndServerOwnedFieldsAreRejected) {
  for (const char* field : {"id", "version", "checksum", "owner_id", "created_by", "updated_by", "created_at",
                            "updated_at", "size_bytes", "expires_at", "Title", "colour"}) {
    std::string body = std::string(R"({"title":"t",")") + field + R"(":1})";
    ExpectValidation(Draft(body), field, body);
  }
}

TEST(ParseDraftTest, TagLimits) {
  Limits limits;
  limits.max_tags = 3;
  limits.max_tag_bytes = 4;
  EXPECT_TRUE(Draft(R"({"title":"t","tags":["a","bb","cccc"]})", limits).ok());
  ExpectValidation(Draft(R"({"title":"t","tags":["a","b","c","d"]})", limits), "tags", "too many");
  ExpectValidation(Draft(R"({"title":"t","tags":["a","b","ccccc"]})", limits), "tags[2]", "too long");
  ExpectValidation(Draft(R"({"title":"t","tags":["a",""]})", limits), "tags[1]", "empty");
  ExpectValidation(Draft(R"({"title":"t","tags":["a\nb"]})", limits), "tags[0]", "control character");
  ExpectValidation(Draft(R"({"title":"t","tags":["ok","\u0007"]})", limits), "tags[1]", "bell");
  EXPECT_TRUE(Draft(R"({"title":"t","tags":[]})", limits).ok());
}

TEST(ParseDraftTest, DuplicateTagsCollapseKeepingFirstOrder) {
  auto draft = Draft(R"({"title":"t","tags":["b","a","b","c","a","b"]})");
  ASSERT_TRUE(draft.ok()) << draft.status().ToString();
  EXPECT_EQ(draft->tags, (std::vector<std::string>{"b", "a", "c"}));
}

TEST(ParseDraftTest, PathRules) {
  for (const char* path : {"a", "users/u1/chats/c1/tasks/t9", "a-b_c.d:e/f", "x/\u00e9"}) {
    auto draft = Draft(std::string(R"({"title":"t","path":")") + path + "\"}");
    ASSERT_TRUE(draft.ok()) << path << ": " << draft.status().ToString();
    EXPECT_EQ(draft->path, std::string(path));
  }
  for (const char* path : {"", "/a", "a/", "a//b", "/", "a b", "a/*", "a/b?", "a\\tb", "a\\u0001b"}) {
    ExpectValidation(Draft(std::string(R"({"title":"t","path":")") + path + "\"}"), "path", path);
  }
  Limits limits;
  limits.max_path_bytes = 5;
  EXPECT_TRUE(Draft(R"({"title":"t","path":"a/b/c"})", limits).ok());
  ExpectValidation(Draft(R"({"title":"t","path":"a/b/cd"})", limits), "path", "too long");
  auto null_path = Draft(R"({"title":"t","path":null})");
  ASSERT_TRUE(null_path.ok());
  EXPECT_FALSE(null_path->path);
}

TEST(ParseDraftTest, SchemaNameRules) {
  EXPECT_TRUE(Draft(R"({"title":"t","schema_name":"agent.def.v1"})").ok());
  EXPECT_TRUE(Draft(R"({"title":"t","schema_name":"ns:kind/sub-name_2"})").ok());
  for (const char* name : {"", "a b", "a*", "caf\u00e9", "a\\nb"}) {
    ExpectValidation(Draft(std::string(R"({"title":"t","schema_name":")") + name + "\"}"), "schema_name", name);
  }
  Limits limits;
  limits.max_schema_name_bytes = 3;
  ExpectValidation(Draft(R"({"title":"t","schema_name":"abcd"})", limits), "schema_name", "too long");
}

TEST(ParseDraftTest, DescriptionLimit) {
  Limits limits;
  limits.max_description_bytes = 3;
  EXPECT_TRUE(Draft(R"({"title":"t","description":"abc"})", limits).ok());
  ExpectValidation(Draft(R"({"title":"t","description":"abcd"})", limits), "description", "too long");
}

TEST(ParseDraftTest, Ttl) {
  auto future = Draft(R"({"title":"t","ttl":"2026-11-21T01:40:53Z"})");
  ASSERT_TRUE(future.ok()) << future.status().ToString();
  EXPECT_EQ(future->ttl_micros, kNow + 1'000'000);
  ExpectValidation(Draft(R"({"title":"t","ttl":"2026-11-21T01:40:51Z"})"), "ttl", "past");
  ExpectValidation(Draft(R"({"title":"t","ttl":"2026-11-21T01:40:52Z"})"), "ttl", "exactly now");
  ExpectValidation(Draft(R"({"title":"t","ttl":"2026-11-21T02:40:53+02:00"})"), "ttl", "past with offset");
  for (const char* bad : {"tomorrow", "2026-11-21", "2030-02-30T00:00:00Z", "2030-01-01T00:00:00", ""}) {
    ExpectValidation(Draft(std::string(R"({"title":"t","ttl":")") + bad + "\"}"), "ttl", bad);
  }
  auto none = Draft(R"({"title":"t","ttl":null})");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->ttl_micros);
}

TEST(ParseDraftTest, VisibilityAndSensitivityEnums) {
  for (const char* v : {"public", "team", "private"}) {
    auto draft = Draft(std::string(R"({"title":"t","visibility":")") + v + "\"}");
    ASSERT_TRUE(draft.ok()) << v;
    EXPECT_EQ(draft->visibility, v);
  }
  for (const char* s : {"low", "pii", "secret"}) {
    auto draft = Draft(std::string(R"({"title":"t","sensitivity":")") + s + "\"}");
    ASSERT_TRUE(draft.ok()) << s;
    EXPECT_EQ(draft->sensitivity, s);
  }
  for (const char* v : {"Public", "", "internal"}) {
    ExpectValidation(Draft(std::string(R"({"title":"t","visibility":")") + v + "\"}"), "visibility", v);
  }
  for (const char* s : {"LOW", "high", ""}) {
    ExpectValidation(Draft(std::string(R"({"title":"t","sensitivity":")") + s + "\"}"), "sensitivity", s);
  }
}

TEST(ParseDraftTest, Trace) {
  auto empty = Draft(R"({"title":"t","trace":{}})");
  ASSERT_TRUE(empty.ok());
  ASSERT_TRUE(empty->trace);
  EXPECT_EQ(empty->trace->trace_id, "");
  EXPECT_EQ(empty->trace->depth, 0);
  ExpectValidation(Draft(R"({"title":"t","trace":{"depth":-1}})"), "trace.depth", "negative");
  ExpectValidation(Draft(R"({"title":"t","trace":{"parent":"x"}})"), "trace.parent", "unknown");
  std::string long_id(129, 'x');
  ExpectValidation(Draft(R"({"title":"t","trace":{"trace_id":")" + long_id + "\"}}"), "trace", "long id");
  EXPECT_TRUE(Draft(R"({"title":"t","trace":{"trace_id":")" + std::string(128, 'x') + "\"}}").ok());
}

TEST(ParseDraftTest, LlmHintsAreValidated) {
  ExpectValidation(Draft(R"({"title":"t","llm_hints":{"fields":["a"]}})"), "llm_hints.fields", "unknown key");
  ExpectValidation(Draft(R"({"title":"t","llm_hints":{"include":["a",2]}})"), "llm_hints.include[1]", "bad item");
  EXPECT_TRUE(Draft(R"({"title":"t","llm_hints":null})").ok());
}

TEST(ParsePatchTest, EmptyPatchIsAnError) {
  auto patch = Patch("{}");
  ASSERT_FALSE(patch.ok());
  EXPECT_EQ(patch.status().code(), StatusCode::kValidation);
  ExpectValidation(Patch("[]"), "body", "not an object");
}

TEST(ParsePatchTest, OnlyNamedFieldsAreSet) {
  auto patch = Patch(R"({"title":"new","tags":["x","x","y"]})");
  ASSERT_TRUE(patch.ok()) << patch.status().ToString();
  EXPECT_TRUE(patch->title.set);
  EXPECT_EQ(patch->title.value, "new");
  EXPECT_TRUE(patch->tags.set);
  EXPECT_EQ(patch->tags.value, (std::vector<std::string>{"x", "y"}));
  EXPECT_FALSE(patch->schema_name.set);
  EXPECT_FALSE(patch->description.set);
  EXPECT_FALSE(patch->context.set);
  EXPECT_FALSE(patch->path.set);
  EXPECT_FALSE(patch->llm_hints.set);
  EXPECT_FALSE(patch->visibility.set);
  EXPECT_FALSE(patch->sensitivity.set);
  EXPECT_FALSE(patch->ttl_micros.set);
}

TEST(ParsePatchTest, NullClearsNullableFields) {
  auto patch = Patch(R"({"schema_name":null,"description":null,"path":null,"ttl":null,"llm_hints":null})");
  ASSERT_TRUE(patch.ok()) << patch.status().ToString();
  EXPECT_TRUE(patch->schema_name.set);
  EXPECT_FALSE(patch->schema_name.value);
  EXPECT_TRUE(patch->description.set);
  EXPECT_FALSE(patch->description.value);
  EXPECT_TRUE(patch->path.set);
  EXPECT_FALSE(patch->path.value);
  EXPECT_TRUE(patch->ttl_micros.set);
  EXPECT_FALSE(patch->ttl_micros.value);
  EXPECT_TRUE(patch->llm_hints.set);
  EXPECT_TRUE(patch->llm_hints.value.is_null());
}

TEST(ParsePatchTest, SetsEveryField) {
  auto patch = Patch(R"({"schema_name":"s.v1","description":"d","context":[1],"path":"a/b","llm_hints":{"exclude":["k"]},
      "visibility":"public","sensitivity":"secret","ttl":"2027-01-01T00:00:00Z"})");
  ASSERT_TRUE(patch.ok()) << patch.status().ToString();
  EXPECT_EQ(patch->schema_name.value, "s.v1");
  EXPECT_EQ(patch->description.value, "d");
  EXPECT_EQ(patch->context.value, J("[1]"));
  EXPECT_EQ(patch->path.value, "a/b");
  EXPECT_EQ(patch->llm_hints.value, J(R"({"exclude":["k"]})"));
  EXPECT_EQ(patch->visibility.value, "public");
  EXPECT_EQ(patch->sensitivity.value, "secret");
  ASSERT_TRUE(patch->ttl_micros.value);
  EXPECT_GT(*patch->ttl_micros.value, kNow);
}

TEST(ParsePatchTest, SameRulesAsCreate) {
  ExpectValidation(Patch(R"({"title":null})"), "title", "title is not nullable");
  ExpectValidation(Patch(R"({"title":" "})"), "title", "blank title");
  ExpectValidation(Patch(R"({"visibility":null})"), "visibility", "not nullable");
  ExpectValidation(Patch(R"({"tags":null})"), "tags", "not nullable");
  ExpectValidation(Patch(R"({"tags":["a","b",false]})"), "tags[2]", "tag type");
  ExpectValidation(Patch(R"({"path":"a//b"})"), "path", "path");
  ExpectValidation(Patch(R"({"ttl":"2020-01-01T00:00:00Z"})"), "ttl", "past");
  ExpectValidation(Patch(R"({"title":"ok","id":"x"})"), "id", "id");
  ExpectValidation(Patch(R"({"version":2})"), "version", "version");
  ExpectValidation(Patch(R"({"trace":{}})"), "trace", "trace is create-only");
}

Breadcrumb SampleCrumb() {
  Breadcrumb c;
  c.id = "0190b3c4-5d6e-7f80-9a1b-2c3d4e5f6a7b";
  c.title = "T";
  c.tags = {"a", "b"};
  c.context = J(R"({"keep":1,"drop":{"secret":2,"other":3}})");
  c.version = 4;
  c.checksum = "sha256:abc";
  c.owner_id = "default";
  c.created_by = "alice";
  c.updated_by = "bob";
  c.trace.trace_id = c.id;
  c.created_at = 0;
  c.updated_at = 1'795'225'252'123'456;
  c.size_bytes = 40;
  return c;
}

const std::set<std::string> kFullKeys = {
    "id",          "schema_name", "title",      "description", "tags",       "context",    "path",
    "llm_hints",   "version",     "checksum",   "visibility",  "sensitivity", "acl",       "ttl",
    "owner_id",    "created_by",  "updated_by", "trace",       "created_at", "updated_at", "size_bytes"};

TEST(ParseDraftTest, AclIsParsedValidatedAndPatchable) {
  auto draft = Draft(R"({"title":"t","visibility":"private","acl":{"read":["bob","role:developer"]}})");
  ASSERT_TRUE(draft.ok()) << draft.status().ToString();
  ASSERT_TRUE(draft->acl.has_value());
  EXPECT_EQ(draft->acl->read, (std::vector<std::string>{"bob", "role:developer"}));
  EXPECT_FALSE(draft->acl->write.has_value());
  ExpectValidation(Draft(R"({"title":"t","acl":{"read":["role:root"]}})"), "acl.read[0]", "unknown role");
  auto patch = Patch(R"({"acl":null})");
  ASSERT_TRUE(patch.ok());
  EXPECT_TRUE(patch->acl.set);
  EXPECT_FALSE(patch->acl.value.has_value());
  EXPECT_TRUE(patch->changes_access());
  EXPECT_FALSE(Patch(R"({"title":"x"})")->changes_access());
}

TEST(ViewsTest, FullViewHasEveryField) {
  Breadcrumb c = SampleCrumb();
  json::object full = FullView(c);
  EXPECT_EQ(Keys(full), kFullKeys);
  EXPECT_EQ(full.at("id"), json::value(c.id));
  EXPECT_TRUE(full.at("schema_name").is_null());
  EXPECT_TRUE(full.at("description").is_null());
  EXPECT_TRUE(full.at("path").is_null());
  EXPECT_TRUE(full.at("ttl").is_null());
  EXPECT_TRUE(full.at("llm_hints").is_null());
  EXPECT_EQ(full.at("tags"), J(R"(["a","b"])"));
  EXPECT_EQ(full.at("context"), c.context);
  EXPECT_EQ(full.at("version"), json::value(4));
  EXPECT_EQ(full.at("visibility"), json::value("team"));
  EXPECT_EQ(full.at("sensitivity"), json::value("low"));
  EXPECT_EQ(full.at("created_at"), json::value("1970-01-01T00:00:00.000000Z"));
  EXPECT_EQ(full.at("updated_at"), json::value("2026-11-21T01:40:52.123456Z"));
  EXPECT_EQ(full.at("trace"), J(R"({"trace_id":"0190b3c4-5d6e-7f80-9a1b-2c3d4e5f6a7b","caused_by":null,"depth":0})"));
  EXPECT_EQ(full.at("size_bytes"), json::value(40));
}

TEST(ViewsTest, FullViewWithOptionalFieldsSet) {
  Breadcrumb c = SampleCrumb();
  c.schema_name = "s.v1";
  c.description = "d";
  c.path = "a/b";
  c.ttl_micros = 1'795'225'252'000'000;
  c.trace = {"tr", "parent", 2};
  json::object full = FullView(c);
  EXPECT_EQ(full.at("schema_name"), json::value("s.v1"));
  EXPECT_EQ(full.at("description"), json::value("d"));
  EXPECT_EQ(full.at("path"), json::value("a/b"));
  EXPECT_EQ(full.at("ttl"), json::value("2026-11-21T01:40:52.000000Z"));
  EXPECT_EQ(full.at("trace"), J(R"({"trace_id":"tr","caused_by":"parent","depth":2})"));
}

TEST(ViewsTest, ContextViewAppliesHints) {
  Breadcrumb c = SampleCrumb();
  json::object plain = ContextView(c);
  EXPECT_EQ(Keys(plain), (std::set<std::string>{"id", "schema_name", "title", "tags", "version", "updated_at",
                                                "context"}));
  EXPECT_EQ(plain.at("context"), c.context);

  c.llm_hints = J(R"({"exclude":["drop.secret"],"template":"keep={{keep}} other={{drop.other}}"})");
  json::object hinted = ContextView(c);
  EXPECT_EQ(hinted.at("context"), J(R"({"keep":1,"drop":{"other":3}})"));
  EXPECT_EQ(hinted.at("rendered"), json::value("keep=1 other=3"));
}

TEST(ViewsTest, ListItemViewContextOnlyOnRequest) {
  Breadcrumb c = SampleCrumb();
  json::object without = ListItemView(c, false);
  std::set<std::string> expected = kFullKeys;
  expected.erase("context");
  EXPECT_EQ(Keys(without), expected);
  json::object with = ListItemView(c, true);
  EXPECT_EQ(Keys(with), kFullKeys);
  EXPECT_EQ(with.at("context"), c.context);
}

TEST(ViewsTest, VersionView) {
  BreadcrumbVersion v{2, "T", {"x"}, J(R"({"a":1})"), "sha256:00", "carol", 0};
  EXPECT_EQ(json::value(VersionView(v)),
            J(R"({"version":2,"title":"T","tags":["x"],"context":{"a":1},"checksum":"sha256:00",
                  "updated_by":"carol","updated_at":"1970-01-01T00:00:00.000000Z"})"));
}

}  // namespace
}  // namespace cairn::model

namespace cairn::model {
namespace {

TEST(SerializedViewsTest, SameBytesAsSerialisingTheViewObjects) {
  Breadcrumb crumb;
  crumb.id = "01a1fbf2-cb0d-71e0-973d-ff3d59cbbd4d";
  crumb.schema_name = "note.v1";
  crumb.title = "t";
  crumb.tags = {"a", "b"};
  crumb.context = boost::json::parse(R"({"x":1,"nested":{"y":[1,2,"z"]},"s":"a\"b"})");
  crumb.version = 3;
  crumb.updated_at = 1'795'225'252'000'001;
  EXPECT_EQ(SerializeContextView(crumb), boost::json::serialize(ContextView(crumb)));
  EXPECT_EQ(SerializeFullView(crumb), boost::json::serialize(FullView(crumb)));
  crumb.llm_hints = boost::json::parse(R"({"include":["x"],"template":"x={{x}}"})");
  EXPECT_EQ(SerializeContextView(crumb), boost::json::serialize(ContextView(crumb)));
  crumb.llm_hints = nullptr;
  crumb.context = boost::json::array{1, 2};
  EXPECT_EQ(SerializeContextView(crumb), boost::json::serialize(ContextView(crumb)));
}

}  // namespace
}  // namespace cairn::model
