#include "cli/arg_parser.h"

#include <gtest/gtest.h>

namespace cairn::cli {
namespace {

ArgParser MakeParser(size_t min_pos = 0, size_t max_pos = 1) {
  return ArgParser("put",
                   {
                       {"title", "TEXT", "title"},
                       {"tag", "TAG", "tag", true},
                       {"full", "", "whole record"},
                       {"help", "", "help", false, 'h'},
                   },
                   "ID", min_pos, max_pos);
}

TEST(ArgParserTest, SeparateAndInlineValues) {
  auto parsed = MakeParser().Parse({"--title", "hello world", "--tag=a", "--tag", "b=c"});
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->Get("title"), "hello world");
  EXPECT_EQ(parsed->GetAll("tag"), (std::vector<std::string>{"a", "b=c"}));
  EXPECT_FALSE(parsed->Has("full"));
  EXPECT_TRUE(parsed->positionals().empty());
}

TEST(ArgParserTest, ValueMayStartWithDashOrBeEmpty) {
  auto parsed = MakeParser().Parse({"--title", "-", "--tag", "--full", "--tag="});
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->Get("title"), "-");
  EXPECT_EQ(parsed->GetAll("tag"), (std::vector<std::string>{"--full", ""}));
  EXPECT_FALSE(parsed->Has("full"));
}

TEST(ArgParserTest, FlagsShortNamesAndInterleavedPositionals) {
  auto parsed = MakeParser().Parse({"--full", "abc", "-h"});
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_TRUE(parsed->Has("full"));
  EXPECT_TRUE(parsed->Has("help"));
  EXPECT_EQ(parsed->positionals(), std::vector<std::string>{"abc"});
  EXPECT_EQ(parsed->Get("full"), std::nullopt);  // a flag has no value
}

TEST(ArgParserTest, DoubleDashEndsOptionsAndLoneDashIsPositional) {
  auto parsed = MakeParser(0, 3).Parse({"--", "--full", "-x"});
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_FALSE(parsed->Has("full"));
  EXPECT_EQ(parsed->positionals(), (std::vector<std::string>{"--full", "-x"}));

  auto dash = MakeParser().Parse({"-"});
  ASSERT_TRUE(dash.ok());
  EXPECT_EQ(dash->positionals(), std::vector<std::string>{"-"});
}

TEST(ArgParserTest, Errors) {
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{"--nope"}, "unknown option '--nope'"},
      {{"--nope=1"}, "unknown option '--nope'"},
      {{"-x"}, "unknown option '-x'"},
      {{"-hx"}, "unknown option '-hx'"},
      {{"--title"}, "--title needs a value (TEXT)"},
      {{"--title", "a", "--title", "b"}, "--title given more than once"},
      {{"--full=yes"}, "--full does not take a value"},
      {{"--full", "--full"}, "--full given more than once"},
      {{"a", "b"}, "unexpected argument 'b'"},
  };
  for (const auto& c : cases) {
    auto parsed = MakeParser().Parse(c.args);
    ASSERT_FALSE(parsed.ok()) << c.expected;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find(c.expected), std::string::npos)
        << parsed.status().message() << " does not contain " << c.expected;
    EXPECT_TRUE(parsed.status().message().starts_with("cairn put: ")) << parsed.status().message();
  }
}

TEST(ArgParserTest, MissingPositional) {
  auto parsed = MakeParser(1, 1).Parse({"--full"});
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(), "cairn put: missing ID");
}

TEST(ArgParserTest, UsageListsOptionsAligned) {
  const std::string usage = MakeParser(1, 1).Usage("create one", "--title TEXT [options]");
  EXPECT_EQ(usage,
            "usage: cairn put --title TEXT [options]\n"
            "  create one\n"
            "options:\n"
            "  --title TEXT  title\n"
            "  --tag TAG     tag (repeatable)\n"
            "  --full        whole record\n"
            "  -h, --help    help\n");
}

TEST(ArgParserTest, DefaultSynopsisNamesPositionals) {
  ArgParser parser("get", {}, "ID", 1, 1);
  EXPECT_EQ(parser.Usage(), "usage: cairn get [options] ID\n");
}

}  // namespace
}  // namespace cairn::cli
