#include "model/access.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

namespace cairn::model {
namespace {

namespace json = boost::json;

AccessScope Member(std::string principal, std::vector<std::string> roles) {
  AccessScope scope;
  scope.principal = std::move(principal);
  scope.roles = std::move(roles);
  return scope;
}

RecordAcl Acl(std::optional<std::vector<std::string>> read, std::optional<std::vector<std::string>> write = {}) {
  return RecordAcl{std::move(read), std::move(write)};
}

const AccessScope kBob = Member("bob", {"reader", "user"});
const AccessScope kDev = Member("dana", {"reader", "user", "developer"});

TEST(AccessScopeTest, VisibilityWithoutAcl) {
  const std::optional<RecordAcl> none;
  EXPECT_TRUE(kBob.MayRead("team", "alice", none));
  EXPECT_TRUE(kBob.MayRead("public", "alice", none));
  EXPECT_FALSE(kBob.MayRead("private", "alice", none));
  EXPECT_TRUE(kBob.MayRead("private", "bob", none)) << "the creator reads its private records";
  EXPECT_TRUE(AccessScope::Everything().MayRead("private", "alice", none)) << "admins read everything";
}

TEST(AccessScopeTest, AclReadGrantsPrivateAndNarrowsTeam) {
  std::optional<RecordAcl> to_bob = Acl(std::vector<std::string>{"bob"});
  EXPECT_TRUE(kBob.MayRead("private", "alice", to_bob));
  EXPECT_FALSE(kDev.MayRead("private", "alice", to_bob));
  EXPECT_FALSE(kDev.MayRead("team", "alice", to_bob)) << "acl.read narrows a team record";
  EXPECT_TRUE(kDev.MayRead("public", "alice", to_bob)) << "public is everyone's";
  EXPECT_TRUE(Member("alice", {}).MayRead("team", "alice", to_bob));

  std::optional<RecordAcl> to_developers = Acl(std::vector<std::string>{"role:developer"});
  EXPECT_TRUE(kDev.MayRead("private", "alice", to_developers));
  EXPECT_FALSE(kBob.MayRead("private", "alice", to_developers)) << "a user is below developer";
  EXPECT_TRUE(kBob.MayRead("private", "alice", Acl(std::vector<std::string>{"role:reader"})));

  std::optional<RecordAcl> write_only = Acl(std::nullopt, std::vector<std::string>{"bob"});
  EXPECT_TRUE(kDev.MayRead("team", "alice", write_only)) << "acl.write alone leaves reading to the visibility";
  EXPECT_FALSE(kDev.MayRead("private", "alice", Acl(std::vector<std::string>{}))) << "an empty acl.read names nobody";
}

TEST(AccessScopeTest, ReadsExplicitly) {
  EXPECT_FALSE(kBob.ReadsExplicitly("alice", std::nullopt)) << "team-wide access is not explicit";
  EXPECT_TRUE(kBob.ReadsExplicitly("bob", std::nullopt));
  EXPECT_TRUE(kBob.ReadsExplicitly("alice", Acl(std::vector<std::string>{"role:user"})));
  EXPECT_TRUE(AccessScope::Everything().ReadsExplicitly("alice", std::nullopt));
}

TEST(CheckWriteTest, Rules) {
  std::optional<RecordAcl> none;
  EXPECT_TRUE(CheckWrite(kBob, {"r1", "team", "alice", none}, false).ok());
  EXPECT_EQ(CheckWrite(kBob, {"r1", "team", "alice", none}, true).code(), StatusCode::kPermissionDenied);
  EXPECT_TRUE(CheckWrite(kBob, {"r1", "private", "bob", none}, true).ok());
  EXPECT_EQ(CheckWrite(kBob, {"r1", "private", "alice", none}, false).code(), StatusCode::kNotFound);
  EXPECT_TRUE(CheckWrite(AccessScope::Everything(), {"r1", "private", "alice", none}, true).ok());

  std::optional<RecordAcl> dev_writes = Acl(std::nullopt, std::vector<std::string>{"role:developer"});
  Status denied = CheckWrite(kBob, {"r1", "team", "alice", dev_writes}, false);
  EXPECT_EQ(denied.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(denied.message().find("acl.write"), std::string::npos) << denied.message();
  EXPECT_TRUE(CheckWrite(kDev, {"r1", "team", "alice", dev_writes}, false).ok());

  std::optional<RecordAcl> bob_reads = Acl(std::vector<std::string>{"bob"});
  Status private_denied = CheckWrite(kBob, {"r1", "private", "alice", bob_reads}, false);
  EXPECT_EQ(private_denied.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(private_denied.message().find("private"), std::string::npos) << private_denied.message();
}

TEST(ParseAclTest, ShapesAndErrors) {
  auto parsed = ParseAcl(json::parse(R"({"read":["bob","role:user","bob"],"write":[]})"));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_TRUE(parsed->has_value());
  EXPECT_EQ((*parsed)->read, (std::vector<std::string>{"bob", "role:user"}));
  EXPECT_EQ((*parsed)->write, std::vector<std::string>{});
  EXPECT_EQ(ParseAcl(AclJson(*parsed)).value(), *parsed) << "round trip";
  EXPECT_FALSE(ParseAcl(json::parse("null")).value().has_value());
  EXPECT_FALSE(ParseAcl(json::parse("{}")).value().has_value());

  struct Bad {
    const char* body;
    const char* field;
  };
  for (const Bad& bad : {Bad{R"([])", "acl"}, Bad{R"("bob")", "acl"}, Bad{R"({"read":"bob"})", "acl.read"},
                         Bad{R"({"read":[1]})", "acl.read[0]"}, Bad{R"({"write":["ok","role:root"]})", "acl.write[1]"},
                         Bad{R"({"read":["has space"]})", "acl.read[0]"}, Bad{R"({"read":[""]})", "acl.read[0]"},
                         Bad{R"({"owners":[]})", "acl.owners"}}) {
    auto result = ParseAcl(json::parse(bad.body));
    ASSERT_FALSE(result.ok()) << bad.body;
    EXPECT_EQ(result.status().code(), StatusCode::kValidation) << bad.body;
    EXPECT_EQ(result.status().field(), bad.field) << bad.body << ": " << result.status().ToString();
  }
  json::array many;
  for (size_t i = 0; i <= kMaxAclEntries; ++i) many.emplace_back("p" + std::to_string(i));
  EXPECT_EQ(ParseAcl(json::object{{"read", many}}).status().field(), "acl.read");
}

TEST(ValidatePrincipalNameTest, RefusesTheRolePrefix) {
  EXPECT_TRUE(ValidatePrincipalName("alice@example", "p").ok());
  EXPECT_EQ(ValidatePrincipalName("role:admin", "p").code(), StatusCode::kValidation);
}

}  // namespace
}  // namespace cairn::model
