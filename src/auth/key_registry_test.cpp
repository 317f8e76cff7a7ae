#include "auth/key_registry.h"

#include <gtest/gtest.h>

#include <boost/json/serialize.hpp>

#include "auth/authenticator.h"
#include "support/sqlite_store.h"

namespace cairn::auth {
namespace {

class KeyRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(store_.Open(clock_)); }
  ManualClock clock_{1'800'000'000'000'000};
  test_support::TempSqliteStore store_{"cairn-auth-test"};
};

TEST_F(KeyRegistryTest, KeysAuthenticateTheirPrincipalAndSurviveAReload) {
  KeyRegistry keys(*store_);
  ASSERT_TRUE(keys.Load().ok());
  ASSERT_TRUE(keys.CreateTenant("acme", "Acme", "root").ok());
  auto issued = keys.CreateKey("acme", "alice", {Role::kUser}, "root");
  ASSERT_TRUE(issued.ok()) << issued.status().ToString();
  EXPECT_EQ(issued->key.substr(0, 3), "ck_");
  auto principal = keys.Authenticate(issued->key);
  ASSERT_TRUE(principal.ok());
  EXPECT_EQ(principal->tenant, "acme");
  EXPECT_EQ(principal->id, "alice");
  EXPECT_TRUE(principal->Has(Role::kReader));
  EXPECT_FALSE(principal->Has(Role::kDeveloper));

  // Only the hash is stored.
  model::BreadcrumbQuery query;
  query.schema_name = std::string(kKeySchema);
  query.include_context = true;
  auto stored = store_->List(kSystemOwner, query);
  ASSERT_TRUE(stored.ok());
  ASSERT_EQ(stored->items.size(), 1u);
  EXPECT_EQ(boost::json::serialize(stored->items[0].context).find(issued->key), std::string::npos);

  KeyRegistry reloaded(*store_);
  ASSERT_TRUE(reloaded.Load().ok());
  EXPECT_TRUE(reloaded.TenantExists("acme"));
  EXPECT_EQ(reloaded.Authenticate(issued->key)->id, "alice");
  EXPECT_EQ(reloaded.Authenticate(issued->key + "x").status().code(), StatusCode::kUnauthenticated);
}

TEST_F(KeyRegistryTest, RefusesBadTenantsAndPrincipals) {
  KeyRegistry keys(*store_);
  ASSERT_TRUE(keys.Load().ok());
  EXPECT_EQ(keys.CreateTenant("_system", "x", "root").status().code(), StatusCode::kValidation);
  EXPECT_EQ(keys.CreateTenant("Upper", "x", "root").status().code(), StatusCode::kValidation);
  EXPECT_EQ(keys.CreateTenant("ok", "", "root").status().field(), "name");
  EXPECT_EQ(keys.CreateTenant("default", "again", "root").status().code(), StatusCode::kConflict);
  EXPECT_EQ(keys.CreateKey("nowhere", "bob", {Role::kUser}, "root").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(keys.CreateKey("default", "has space", {Role::kUser}, "root").status().field(), "principal");
  EXPECT_EQ(ParseRoles({"owner"}).status().field(), "roles[0]");
  EXPECT_EQ(ParseRoles({}).status().field(), "roles");
}

TEST_F(KeyRegistryTest, AccessScopesComeFromThePrincipalsKeys) {
  KeyRegistry keys(*store_);
  ASSERT_TRUE(keys.Load().ok());
  ASSERT_TRUE(keys.CreateTenant("acme", "Acme", "root").ok());
  ASSERT_TRUE(keys.CreateKey("acme", "dana", {Role::kReader}, "root").ok());
  ASSERT_TRUE(keys.CreateKey("acme", "dana", {Role::kDeveloper}, "root").ok());
  ASSERT_TRUE(keys.CreateKey("acme", "ann", {Role::kAdmin}, "root").ok());
  EXPECT_EQ(keys.CreateKey("acme", "role:admin", {Role::kUser}, "root").status().field(), "principal");

  model::AccessScope dana = keys.AccessScopeFor("acme", "dana");
  EXPECT_FALSE(dana.admin);
  EXPECT_EQ(dana.principal, "dana");
  EXPECT_EQ(dana.roles, (std::vector<std::string>{"reader", "user", "developer"})) << "the highest key, with the roles below";
  EXPECT_TRUE(keys.AccessScopeFor("acme", "ann").admin);
  model::AccessScope stranger = keys.AccessScopeFor("acme", "agent:helper");
  EXPECT_TRUE(stranger.roles.empty()) << "a principal without a key has no role";
  EXPECT_TRUE(keys.AccessScopeFor("other", "dana").roles.empty()) << "keys are per tenant";
}

TEST_F(KeyRegistryTest, BootstrapKeyIsASystemAdminOfTheDefaultTenant) {
  KeyRegistry keys(*store_);
  EXPECT_EQ(keys.SetBootstrapKey("short").code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(keys.SetBootstrapKey(std::string(40, 'b')).ok());
  auto admin = keys.Authenticate(std::string(40, 'b'));
  ASSERT_TRUE(admin.ok());
  EXPECT_TRUE(admin->system_admin);
  EXPECT_EQ(admin->tenant, "default");
}

TEST_F(KeyRegistryTest, TokensCarryThePrincipalUntilTheyExpire) {
  KeyRegistry keys(*store_);
  ASSERT_TRUE(keys.Load().ok());
  auto issued = keys.CreateKey("default", "carol", {Role::kDeveloper}, "root");
  ASSERT_TRUE(issued.ok());
  Authenticator auth(keys, std::move(JwtCodec::Hs256(std::string(32, 's'))).value(), clock_, 60);
  auto token = auth.IssueToken(issued->key);
  ASSERT_TRUE(token.ok());
  auto principal = auth.Authenticate("Bearer " + token->token, std::nullopt);
  ASSERT_TRUE(principal.ok()) << principal.status().ToString();
  EXPECT_EQ(principal->id, "carol");
  EXPECT_TRUE(principal->Has(Role::kDeveloper));
  EXPECT_TRUE(auth.Authenticate(std::nullopt, token->token).ok());
  EXPECT_TRUE(auth.Authenticate("Bearer " + issued->key, std::nullopt).ok());
  EXPECT_EQ(auth.Authenticate(std::nullopt, std::nullopt).status().code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(auth.Authenticate("Basic abc", std::nullopt).status().code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(auth.IssueToken("ck_nope").status().code(), StatusCode::kUnauthenticated);
  clock_.Advance(61'000'000);
  EXPECT_EQ(auth.Authenticate("Bearer " + token->token, std::nullopt).status().message(), "token expired");
}

// A revoked key and the tokens made from it stop authenticating at once, and after a reload.
TEST_F(KeyRegistryTest, RevokingAKeyEndsItAndItsTokens) {
  KeyRegistry keys(*store_);
  ASSERT_TRUE(keys.Load().ok());
  ASSERT_TRUE(keys.CreateTenant("acme", "Acme", "root").ok());
  auto kept = keys.CreateKey("acme", "alice", {Role::kUser}, "root");
  auto revoked = keys.CreateKey("acme", "bob", {Role::kAdmin}, "root");
  ASSERT_TRUE(kept.ok() && revoked.ok());
  std::vector<KeyInfo> listed = keys.ListKeys("acme");
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].principal, "alice");
  EXPECT_EQ(listed[0].last4, kept->key.substr(kept->key.size() - 4));
  EXPECT_TRUE(keys.ListKeys("default").empty());
  Authenticator auth(keys, std::move(JwtCodec::Hs256(std::string(32, 's'))).value(), clock_, 600);
  auto token = auth.IssueToken(revoked->key);
  ASSERT_TRUE(token.ok());
  ASSERT_TRUE(auth.Authenticate("Bearer " + token->token, std::nullopt).ok());

  EXPECT_EQ(keys.RevokeKey("default", revoked->key_id, "root").code(), StatusCode::kNotFound) << "another tenant's";
  ASSERT_TRUE(keys.RevokeKey("acme", revoked->key_id, "root").ok());
  EXPECT_EQ(keys.RevokeKey("acme", revoked->key_id, "root").code(), StatusCode::kNotFound) << "revoked already";
  EXPECT_EQ(keys.Authenticate(revoked->key).status().code(), StatusCode::kUnauthenticated);
  auto refused = auth.Authenticate("Bearer " + token->token, std::nullopt);
  EXPECT_EQ(refused.status().code(), StatusCode::kUnauthenticated);
  EXPECT_NE(refused.status().message().find("revoked"), std::string::npos) << refused.status().message();
  EXPECT_TRUE(keys.Authenticate(kept->key).ok());
  ASSERT_EQ(keys.ListKeys("acme").size(), 1u);

  KeyRegistry reloaded(*store_);
  ASSERT_TRUE(reloaded.Load().ok());
  EXPECT_EQ(reloaded.Authenticate(revoked->key).status().code(), StatusCode::kUnauthenticated);
  EXPECT_FALSE(reloaded.KeyIsLive(revoked->key_id));
  EXPECT_TRUE(reloaded.KeyIsLive(kept->key_id));
}

TEST_F(KeyRegistryTest, ATenantsDailyTokenQuotaIsStoredAndReloaded) {
  KeyRegistry keys(*store_);
  ASSERT_TRUE(keys.Load().ok());
  ASSERT_TRUE(keys.CreateTenant("acme", "Acme", "root", 5000).ok());
  EXPECT_EQ(keys.DailyTokenQuota("acme"), 5000);
  EXPECT_EQ(keys.DailyTokenQuota("default"), std::nullopt);
  ASSERT_TRUE(keys.SetDailyTokenQuota("default", 10, "root").ok());  // default has no record yet
  ASSERT_TRUE(keys.SetDailyTokenQuota("acme", std::nullopt, "root").ok());
  EXPECT_EQ(keys.SetDailyTokenQuota("nowhere", 1, "root").status().code(), StatusCode::kNotFound);
  KeyRegistry reloaded(*store_);
  ASSERT_TRUE(reloaded.Load().ok());
  EXPECT_EQ(reloaded.DailyTokenQuota("default"), 10);
  EXPECT_EQ(reloaded.DailyTokenQuota("acme"), std::nullopt);
}

}  // namespace
}  // namespace cairn::auth
