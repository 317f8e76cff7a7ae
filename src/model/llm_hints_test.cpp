#include "model/llm_hints.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <string>

namespace cairn::model {
namespace {

namespace json = boost::json;

json::value J(std::string_view text) { return json::parse(text); }

const char* kContext = R"({"title":"Fix bug","user":{"name":"ana","email":"a@x","address":{"city":"Oslo","zip":"0150"}},
                          "items":[1,2],"secret":"s3","count":3,"done":false,"nothing":null})";

RenderedContext Apply(std::string_view hints) { return ApplyLlmHints(J(kContext), J(hints)); }

TEST(ApplyLlmHintsTest, NullHintsLeaveContextAlone) {
  RenderedContext out = ApplyLlmHints(J(kContext), json::value(nullptr));
  EXPECT_EQ(out.context, J(kContext));
  EXPECT_FALSE(out.text);
  out = Apply("{}");
  EXPECT_EQ(out.context, J(kContext));
  EXPECT_FALSE(out.text);
}

TEST(ApplyLlmHintsTest, IncludeKeepsOnlyNamedPaths) {
  RenderedContext out = Apply(R"({"include":["title","count"]})");
  EXPECT_EQ(out.context, J(R"({"title":"Fix bug","count":3})"));
  EXPECT_FALSE(out.text);
}

TEST(ApplyLlmHintsTest, IncludeNestedDottedPaths) {
  RenderedContext out = Apply(R"({"include":["user.name","user.address.city","items"]})");
  EXPECT_EQ(out.context, J(R"({"user":{"name":"ana","address":{"city":"Oslo"}},"items":[1,2]})"));
}

TEST(ApplyLlmHintsTest, IncludeOfMissingPathsIsSkipped) {
  RenderedContext out = Apply(R"({"include":["nope","user.nope","title.deeper","items.0"]})");
  EXPECT_EQ(out.context, J("{}"));  // nothing matched; not even empty parents are created
  out = Apply(R"({"include":["nothing"]})");
  EXPECT_EQ(out.context, J(R"({"nothing":null})"));  // a present null is kept
}

TEST(ApplyLlmHintsTest, IncludeParentAndChild) {
  RenderedContext out = Apply(R"({"include":["user.address.zip","user"]})");
  EXPECT_EQ(out.context.at("user"), J(kContext).at("user"));
  out = Apply(R"({"include":["user","user.address.zip"]})");
  EXPECT_EQ(out.context.at("user"), J(kContext).at("user"));
}

TEST(ApplyLlmHintsTest, ExcludeRemovesPaths) {
  RenderedContext out = Apply(R"({"exclude":["secret","user.email","user.address.zip","not.there"]})");
  EXPECT_EQ(out.context, J(R"({"title":"Fix bug","user":{"name":"ana","address":{"city":"Oslo"}},
                               "items":[1,2],"count":3,"done":false,"nothing":null})"));
}

TEST(ApplyLlmHintsTest, ExcludeAppliesAfterInclude) {
  RenderedContext out = Apply(R"({"include":["user"],"exclude":["user.email","user.address"]})");
  EXPECT_EQ(out.context, J(R"({"user":{"name":"ana"}})"));
}

TEST(ApplyLlmHintsTest, ExcludeThroughNonObjectIsHarmless) {
  RenderedContext out = Apply(R"({"exclude":["title.x","items.0","count.a.b"]})");
  EXPECT_EQ(out.context, J(kContext));
}

TEST(ApplyLlmHintsTest, NonObjectContextIsReturnedAsIs) {
  RenderedContext out = ApplyLlmHints(J("[1,2,3]"), J(R"({"include":["a"],"template":"x"})"));
  EXPECT_EQ(out.context, J("[1,2,3]"));
}

// RenderedContext::text is "present when a template is given", and api.md promises `rendered` in the
// context view whenever the record has a template, whatever the shape of its context.
TEST(ApplyLlmHintsTest, TemplateRendersForNonObjectContext) {
  RenderedContext out = ApplyLlmHints(J("[1,2,3]"), J(R"({"template":"static text {{a}}"})"));
  ASSERT_TRUE(out.text);
  EXPECT_EQ(*out.text, "static text ");
  EXPECT_EQ(out.context, J("[1,2,3]"));
}

TEST(ApplyLlmHintsTest, TemplateRendersValues) {
  RenderedContext out = Apply(R"({"template":"{{title}} for {{ user.name }} in {{user.address.city}}: {{count}} {{done}} {{items}} {{user.address}}"})");
  ASSERT_TRUE(out.text);
  // Strings as-is, other JSON compactly.
  EXPECT_EQ(*out.text, R"(Fix bug for ana in Oslo: 3 false [1,2] {"city":"Oslo","zip":"0150"})");
  EXPECT_EQ(out.context, J(kContext));
}

TEST(ApplyLlmHintsTest, TemplateMissingPathRendersEmpty) {
  RenderedContext out = Apply(R"({"template":"[{{missing}}][{{user.nope}}][{{nothing}}]"})");
  ASSERT_TRUE(out.text);
  EXPECT_EQ(*out.text, "[][][null]");
}

TEST(ApplyLlmHintsTest, TemplateSeesTheFilteredContext) {
  RenderedContext out = Apply(R"({"exclude":["secret"],"template":"s={{secret}} t={{title}}"})");
  ASSERT_TRUE(out.text);
  EXPECT_EQ(*out.text, "s= t=Fix bug");
  out = Apply(R"({"include":["user.name"],"template":"{{user.name}}/{{title}}"})");
  EXPECT_EQ(*out.text, "ana/");
}

TEST(ApplyLlmHintsTest, TemplateWithoutPlaceholdersOrUnclosed) {
  EXPECT_EQ(*Apply(R"({"template":"plain text"})").text, "plain text");
  EXPECT_EQ(*Apply(R"({"template":""})").text, "");
  EXPECT_EQ(*Apply(R"({"template":"a {{title"})").text, "a {{title");
  EXPECT_EQ(*Apply(R"({"template":"{{title}} and {{count"})").text, "Fix bug and {{count");
  EXPECT_EQ(*Apply(R"({"template":"}} {{count}}{{count}}"})").text, "}} 33");
}

TEST(ValidateLlmHintsTest, AcceptsValidHints) {
  for (const char* hints : {"null", "{}", R"({"include":[]})", R"({"include":["a","b.c"],"exclude":["b.c.d"]})",
                            R"({"template":"{{a}}"})", R"({"include":["a"],"exclude":["b"],"template":""})"}) {
    EXPECT_TRUE(ValidateLlmHints(J(hints)).ok()) << hints;
  }
}

TEST(ValidateLlmHintsTest, RejectsInvalidHints) {
  const std::pair<const char*, const char*> cases[] = {
      {R"("include a")", "llm_hints"},
      {"[]", "llm_hints"},
      {"3", "llm_hints"},
      {R"({"fields":["a"]})", "llm_hints.fields"},
      {R"({"include":"a"})", "llm_hints.include"},
      {R"({"include":{"a":1}})", "llm_hints.include"},
      {R"({"include":["a",1]})", "llm_hints.include[1]"},
      {R"({"include":[""]})", "llm_hints.include[0]"},
      {R"({"exclude":null})", "llm_hints.exclude"},
      {R"({"exclude":["ok","ok2",null]})", "llm_hints.exclude[2]"},
      {R"({"template":5})", "llm_hints.template"},
      {R"({"template":null})", "llm_hints.template"},
  };
  for (const auto& [hints, field] : cases) {
    Status status = ValidateLlmHints(J(hints));
    ASSERT_FALSE(status.ok()) << hints;
    EXPECT_EQ(status.code(), StatusCode::kValidation) << hints;
    EXPECT_EQ(status.field(), field) << hints;
  }
}

}  // namespace
}  // namespace cairn::model
