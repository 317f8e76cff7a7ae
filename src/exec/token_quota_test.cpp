// TokenQuota (token_quota.h): per tenant, per UTC day, durable in the cursor store.
#include "exec/token_quota.h"

#include <gtest/gtest.h>

#include "support/sqlite_store.h"

namespace cairn::exec {
namespace {

constexpr int64_t kDay = 86'400'000'000;
constexpr int64_t kNoon = 1'795'262'400'000'000;  // 2026-11-21T12:00:00Z

class TokenQuotaTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(store_.Open(clock_)); }
  TokenQuota Quota(int64_t default_daily) {
    return TokenQuota(*store_, clock_, default_daily, [this](const std::string& tenant) -> std::optional<int64_t> {
      auto it = own_.find(tenant);
      if (it == own_.end()) return std::nullopt;
      return it->second;
    });
  }
  ManualClock clock_{kNoon};
  test_support::TempSqliteStore store_{"cairn-quota-test"};
  std::map<std::string, int64_t> own_;
};

TEST_F(TokenQuotaTest, RefusesOnceTheDayIsSpentAndStartsAgainTheNextDay) {
  TokenQuota quota = Quota(100);
  EXPECT_TRUE(quota.Check("acme").ok());
  ASSERT_TRUE(quota.Record("acme", 60).ok());
  EXPECT_TRUE(quota.Check("acme").ok());
  ASSERT_TRUE(quota.Record("acme", 60).ok());  // the call that crossed it was already made
  Status refused = quota.Check("acme");
  EXPECT_EQ(refused.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(refused.reason(), "quota_exceeded");
  EXPECT_NE(refused.message().find("120 of its 100"), std::string::npos) << refused.message();
  EXPECT_TRUE(quota.Check("globex").ok()) << "another tenant has its own count";
  auto today = quota.Today("acme");
  ASSERT_TRUE(today.ok());
  EXPECT_EQ(today->day, "2026-11-21");
  EXPECT_EQ(today->used, 120);
  clock_.Advance(kDay / 2);  // midnight UTC
  EXPECT_TRUE(quota.Check("acme").ok());
  EXPECT_EQ(quota.Today("acme")->used, 0);
}

TEST_F(TokenQuotaTest, TheCountSurvivesARestart) {
  {
    TokenQuota quota = Quota(100);
    ASSERT_TRUE(quota.Record("acme", 99).ok());
    ASSERT_TRUE(quota.Record("acme", 1).ok());
  }
  ASSERT_TRUE(store_.Reopen());
  TokenQuota again = Quota(100);
  EXPECT_EQ(again.Today("acme")->used, 100);
  EXPECT_EQ(again.Check("acme").reason(), "quota_exceeded");
}

// Record queues the count without a commit of its own; the caller's next write (the run's
// snapshot of the reply) commits it, or comes after it.
TEST_F(TokenQuotaTest, ACountIsCommittedNoLaterThanTheCallersNextWrite) {
  TokenQuota quota = Quota(100);
  ASSERT_TRUE(quota.Record("acme", 42).ok());
  ASSERT_TRUE(store_->SaveCursor("the-next-write", 1).ok());
  auto stored = store_->LoadCursor("quota:acme:2026-11-21");
  ASSERT_TRUE(stored.ok()) << stored.status().message();
  EXPECT_EQ(stored->value_or(-1), 42);
}

TEST_F(TokenQuotaTest, ATenantsOwnQuotaWinsAndZeroIsUnlimited) {
  TokenQuota quota = Quota(0);
  ASSERT_TRUE(quota.Record("acme", 1'000'000).ok());
  EXPECT_TRUE(quota.Check("acme").ok()) << "default 0: unlimited";
  own_["acme"] = 10;
  EXPECT_EQ(quota.Check("acme").reason(), "quota_exceeded");
  EXPECT_EQ(quota.Today("acme")->quota, 10);
  own_["acme"] = 0;  // a tenant's own 0 is unlimited too
  EXPECT_TRUE(quota.Check("acme").ok());
}

}  // namespace
}  // namespace cairn::exec
