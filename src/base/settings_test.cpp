#include "base/settings.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace cairn {
namespace {

std::vector<SettingSpec> Specs() {
  return {
      {"data_dir", SettingKind::kString, "./cairn-data", "Directory of the database", 0, INT64_MAX},
      {"max_body_bytes", SettingKind::kInt, "2097152", "Largest request body", 1, 1 << 30},
      {"port", SettingKind::kInt, "8080", "TCP port (0 picks one)", 0, 65535},
      {"verbose", SettingKind::kBool, "false", "Log more", 0, INT64_MAX},
  };
}

using Vars = std::map<std::string, std::string>;

// An environment made of a map: the real process environment is never read.
class FakeEnv {
 public:
  explicit FakeEnv(std::map<std::string, std::string> vars = {}) : vars_(std::move(vars)) {}
  Settings::EnvLookup Lookup() {
    return [this](const char* name) -> const char* {
      looked_up_.push_back(name);
      auto it = vars_.find(name);
      return it == vars_.end() ? nullptr : it->second.c_str();
    };
  }
  const std::vector<std::string>& looked_up() const { return looked_up_; }

 private:
  std::map<std::string, std::string> vars_;
  std::vector<std::string> looked_up_;
};

TEST(SettingSpecTest, FlagAndEnvVarNames) {
  SettingSpec spec{"max_body_bytes", SettingKind::kInt, "1", "d"};
  EXPECT_EQ(spec.Flag(), "--max-body-bytes");
  EXPECT_EQ(spec.EnvVar(), "CAIRN_MAX_BODY_BYTES");
}

TEST(SettingsTest, DefaultsWithoutArgsOrEnv) {
  Settings settings(Specs());
  FakeEnv env;
  ASSERT_TRUE(settings.Parse({}, env.Lookup()).ok());
  EXPECT_EQ(settings.GetString("data_dir"), "./cairn-data");
  EXPECT_EQ(settings.GetInt("port"), 8080);
  EXPECT_EQ(settings.GetInt("max_body_bytes"), 2097152);
  EXPECT_FALSE(settings.GetBool("verbose"));
  // Every declared variable was consulted through the injected lookup.
  for (const char* var : {"CAIRN_DATA_DIR", "CAIRN_MAX_BODY_BYTES", "CAIRN_PORT", "CAIRN_VERBOSE"}) {
    EXPECT_NE(std::find(env.looked_up().begin(), env.looked_up().end(), var), env.looked_up().end()) << var;
  }
}

TEST(SettingsTest, FlagWithSeparateValue) {
  Settings settings(Specs());
  FakeEnv env;
  ASSERT_TRUE(settings.Parse({"--max-body-bytes", "1024", "--data-dir", "/tmp/x"}, env.Lookup()).ok());
  EXPECT_EQ(settings.GetInt("max_body_bytes"), 1024);
  EXPECT_EQ(settings.GetString("data_dir"), "/tmp/x");
}

TEST(SettingsTest, FlagWithEqualsValue) {
  Settings settings(Specs());
  FakeEnv env;
  ASSERT_TRUE(settings.Parse({"--max-body-bytes=4096", "--data-dir=/a=b", "--port=0"}, env.Lookup()).ok());
  EXPECT_EQ(settings.GetInt("max_body_bytes"), 4096);
  EXPECT_EQ(settings.GetString("data_dir"), "/a=b");  // only the first '=' separates
  EXPECT_EQ(settings.GetInt("port"), 0);
}

TEST(SettingsTest, EnvironmentVariable) {
  Settings settings(Specs());
  FakeEnv env(Vars{{"CAIRN_PORT", "9090"}, {"CAIRN_DATA_DIR", "/var/cairn"}, {"CAIRN_VERBOSE", "true"}});
  ASSERT_TRUE(settings.Parse({}, env.Lookup()).ok());
  EXPECT_EQ(settings.GetInt("port"), 9090);
  EXPECT_EQ(settings.GetString("data_dir"), "/var/cairn");
  EXPECT_TRUE(settings.GetBool("verbose"));
}

TEST(SettingsTest, FlagBeatsEnvironmentBeatsDefault) {
  Settings settings(Specs());
  FakeEnv env(Vars{{"CAIRN_PORT", "9090"}, {"CAIRN_MAX_BODY_BYTES", "777"}});
  ASSERT_TRUE(settings.Parse({"--port", "7070"}, env.Lookup()).ok());
  EXPECT_EQ(settings.GetInt("port"), 7070);             // flag over env
  EXPECT_EQ(settings.GetInt("max_body_bytes"), 777);    // env over default
  EXPECT_EQ(settings.GetString("data_dir"), "./cairn-data");  // default
}

TEST(SettingsTest, NullEnvLookupMeansNoEnvironment) {
  Settings settings(Specs());
  ASSERT_TRUE(settings.Parse({"--port", "1"}, Settings::EnvLookup()).ok());
  EXPECT_EQ(settings.GetInt("port"), 1);
}

void ExpectInvalid(const std::vector<std::string>& args, std::map<std::string, std::string> vars,
                   const std::string& must_mention) {
  Settings settings(Specs());
  FakeEnv env(std::move(vars));
  Status status = settings.Parse(args, env.Lookup());
  ASSERT_FALSE(status.ok()) << must_mention;
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find(must_mention), std::string::npos) << status.message();
  // Nothing changed.
  EXPECT_EQ(settings.GetInt("port"), 8080);
  EXPECT_EQ(settings.GetString("data_dir"), "./cairn-data");
  EXPECT_FALSE(settings.GetBool("verbose"));
}

TEST(SettingsTest, UnknownFlag) {
  ExpectInvalid({"--port", "1", "--no-such-thing", "x"}, {}, "--no-such-thing");
  ExpectInvalid({"--prot=1"}, {}, "--prot");
  ExpectInvalid({"port", "1"}, {}, "port");  // not a flag at all
}

TEST(SettingsTest, MissingValue) {
  ExpectInvalid({"--data-dir"}, {}, "--data-dir");
  ExpectInvalid({"--port", "--verbose"}, {}, "--port");
}

TEST(SettingsTest, NonInteger) {
  ExpectInvalid({"--port", "80x"}, {}, "--port");
  ExpectInvalid({"--port="}, {}, "--port");
  ExpectInvalid({"--port", "1.5"}, {}, "--port");
  ExpectInvalid({}, {{"CAIRN_PORT", "eighty"}}, "CAIRN_PORT");
  ExpectInvalid({"--port", "99999999999999999999999"}, {}, "--port");
}

TEST(SettingsTest, OutOfRange) {
  ExpectInvalid({"--port", "65536"}, {}, "--port");
  ExpectInvalid({"--port=-1"}, {}, "--port");
  ExpectInvalid({"--max-body-bytes", "0"}, {}, "--max-body-bytes");
  ExpectInvalid({}, {{"CAIRN_PORT", "70000"}}, "CAIRN_PORT");
}

TEST(SettingsTest, BoundsAreInclusive) {
  Settings settings(Specs());
  FakeEnv env;
  ASSERT_TRUE(settings.Parse({"--port", "65535", "--max-body-bytes", "1"}, env.Lookup()).ok());
  EXPECT_EQ(settings.GetInt("port"), 65535);
  EXPECT_EQ(settings.GetInt("max_body_bytes"), 1);
}

TEST(SettingsTest, BoolFlagAlone) {
  {
    Settings settings(Specs());
    FakeEnv env;
    ASSERT_TRUE(settings.Parse({"--verbose"}, env.Lookup()).ok());
    EXPECT_TRUE(settings.GetBool("verbose"));
  }
  {
    Settings settings(Specs());
    FakeEnv env;
    ASSERT_TRUE(settings.Parse({"--verbose", "--port", "1"}, env.Lookup()).ok());  // followed by another flag
    EXPECT_TRUE(settings.GetBool("verbose"));
    EXPECT_EQ(settings.GetInt("port"), 1);
  }
}

TEST(SettingsTest, BoolFlagWithValue) {
  Settings settings(Specs());
  FakeEnv env(Vars{{"CAIRN_VERBOSE", "true"}});
  ASSERT_TRUE(settings.Parse({"--verbose", "false"}, env.Lookup()).ok());
  EXPECT_FALSE(settings.GetBool("verbose"));
  ASSERT_TRUE(settings.Parse({"--verbose=on"}, env.Lookup()).ok());
  EXPECT_TRUE(settings.GetBool("verbose"));
  ExpectInvalid({"--verbose=maybe"}, {}, "--verbose");
  ExpectInvalid({}, {{"CAIRN_VERBOSE", "maybe"}}, "CAIRN_VERBOSE");
}

TEST(SettingsTest, FailedParseKeepsEarlierValues) {
  Settings settings(Specs());
  FakeEnv env;
  ASSERT_TRUE(settings.Parse({"--port", "1234"}, env.Lookup()).ok());
  ASSERT_FALSE(settings.Parse({"--port", "4321", "--bogus"}, env.Lookup()).ok());
  EXPECT_EQ(settings.GetInt("port"), 1234);
}

TEST(SettingsTest, HelpTextMentionsEveryFlagVariableAndDefault) {
  Settings settings(Specs());
  std::string help = settings.HelpText();
  for (const auto& spec : settings.specs()) {
    EXPECT_NE(help.find(spec.Flag()), std::string::npos) << spec.Flag();
    EXPECT_NE(help.find(spec.EnvVar()), std::string::npos) << spec.EnvVar();
    EXPECT_NE(help.find(spec.description), std::string::npos) << spec.description;
    EXPECT_NE(help.find(spec.default_value), std::string::npos) << spec.default_value;
  }
}

TEST(SettingsTest, MarkdownTableHasOneRowPerSetting) {
  Settings settings(Specs());
  std::string table = settings.MarkdownTable();
  for (const auto& spec : settings.specs()) {
    EXPECT_NE(table.find("`" + spec.Flag() + "`"), std::string::npos) << spec.Flag();
    EXPECT_NE(table.find("`" + spec.EnvVar() + "`"), std::string::npos) << spec.EnvVar();
    EXPECT_NE(table.find(spec.description), std::string::npos) << spec.description;
  }
  size_t rows = 0;
  for (char c : table) rows += c == '\n';
  EXPECT_EQ(rows, settings.specs().size() + 2);  // header, separator, one per setting
}

TEST(SettingsDeathTest, WrongKindAccessorAborts) {
  Settings settings(Specs());
  EXPECT_DEATH((void)settings.GetInt("data_dir"), "not declared");
  EXPECT_DEATH((void)settings.GetString("nope"), "not declared");
}

}  // namespace
}  // namespace cairn
