#include "auth/rate_limiter.h"

#include <gtest/gtest.h>

namespace cairn::auth {
namespace {

TEST(RateLimiterTest, BurstThenRefillAtTheRate) {
  ManualClock clock(1'000'000);
  RateLimiter limiter(60, 3, clock);  // one a second, three at once
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(limiter.Take("p")) << i;
  EXPECT_EQ(limiter.Take("p"), 1);
  EXPECT_FALSE(limiter.Take("q"));  // buckets are per key
  clock.Advance(1'000'000);
  EXPECT_FALSE(limiter.Take("p"));
  EXPECT_TRUE(limiter.Take("p"));
  clock.Advance(60'000'000);  // refills to the burst, no further
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(limiter.Take("p")) << i;
  EXPECT_TRUE(limiter.Take("p"));
}

TEST(RateLimiterTest, RetryAfterCountsWholeSecondsAndZeroRateIsOff) {
  ManualClock clock(0);
  RateLimiter slow(2, 1, clock);  // a token every 30 s
  EXPECT_FALSE(slow.Take("p"));
  EXPECT_EQ(slow.Take("p"), 30);
  RateLimiter off(0, 1, clock);
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(off.Take("p"));
}

TEST(RateLimiterTest, IdleBucketsAreDroppedBeyondTheKeyBound) {
  ManualClock clock(0);
  RateLimiter limiter(60, 1, clock, 2);
  EXPECT_FALSE(limiter.Take("a"));
  EXPECT_FALSE(limiter.Take("b"));
  clock.Advance(2'000'000);  // a and b are full again: dropping them forgets nothing
  EXPECT_FALSE(limiter.Take("c"));
  EXPECT_TRUE(limiter.Take("c"));
}

}  // namespace
}  // namespace cairn::auth
