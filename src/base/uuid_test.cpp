#include "base/uuid.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"

namespace cairn {
namespace {

constexpr int64_t kStartMicros = 1'795'225'252'123'456;  // 2026-11-21T01:40:52.123456Z

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  return c - 'a' + 10;
}

// The 48-bit millisecond timestamp of a UUIDv7 string.
int64_t TimestampMs(const std::string& id) {
  std::string hex = id.substr(0, 8) + id.substr(9, 4);
  int64_t ms = 0;
  for (char c : hex) ms = ms * 16 + HexValue(c);
  return ms;
}

TEST(UuidV7Test, CanonicalFormatVersionAndVariant) {
  ManualClock clock(kStartMicros);
  UuidV7Generator gen(clock, 42);
  for (int i = 0; i < 200; ++i) {
    std::string id = gen.Next();
    ASSERT_EQ(id.size(), 36u) << id;
    EXPECT_EQ(id[8], '-');
    EXPECT_EQ(id[13], '-');
    EXPECT_EQ(id[18], '-');
    EXPECT_EQ(id[23], '-');
    for (size_t j = 0; j < id.size(); ++j) {
      if (j == 8 || j == 13 || j == 18 || j == 23) continue;
      EXPECT_TRUE((id[j] >= '0' && id[j] <= '9') || (id[j] >= 'a' && id[j] <= 'f')) << id;  // lowercase hex
    }
    EXPECT_EQ(id[14], '7') << id;                                   // version nibble
    EXPECT_EQ(HexValue(id[19]) & 0xC, 0x8) << id;                   // variant bits 10
    EXPECT_TRUE(IsUuidString(id)) << id;
  }
}

TEST(UuidV7Test, TimestampIsTheClockInMilliseconds) {
  ManualClock clock(kStartMicros);
  UuidV7Generator gen(clock, 7);
  EXPECT_EQ(TimestampMs(gen.Next()), kStartMicros / 1000);
  clock.Advance(5'000'000);
  EXPECT_EQ(TimestampMs(gen.Next()), kStartMicros / 1000 + 5000);
}

TEST(UuidV7Test, StrictlyIncreasingWithinOneMillisecond) {
  ManualClock clock(kStartMicros);  // never advances
  UuidV7Generator gen(clock, 1);
  std::string previous = gen.Next();
  for (int i = 0; i < 10'000; ++i) {  // far more than the 12-bit counter holds
    std::string next = gen.Next();
    ASSERT_LT(previous, next) << "at " << i;
    previous = next;
  }
}

TEST(UuidV7Test, StrictlyIncreasingWhenTheClockStepsBack) {
  ManualClock clock(kStartMicros);
  UuidV7Generator gen(clock, 3);
  std::string before = gen.Next();
  clock.Set(kStartMicros - 60'000'000);  // one minute back
  std::string previous = before;
  for (int i = 0; i < 5000; ++i) {
    std::string next = gen.Next();
    ASSERT_LT(previous, next) << "at " << i;
    previous = next;
  }
  EXPECT_GE(TimestampMs(previous), kStartMicros / 1000);  // never went back in time
  clock.Set(kStartMicros + 3'600'000'000LL);               // and forward again
  std::string later = gen.Next();
  EXPECT_LT(previous, later);
  EXPECT_EQ(TimestampMs(later), (kStartMicros + 3'600'000'000LL) / 1000);
}

TEST(UuidV7Test, StrictlyIncreasingAcrossMilliseconds) {
  ManualClock clock(kStartMicros);
  UuidV7Generator gen(clock, 9);
  std::string previous = gen.Next();
  for (int i = 0; i < 1000; ++i) {
    clock.Advance(i % 3 == 0 ? 1000 : 1);  // sometimes a new millisecond, sometimes the same
    std::string next = gen.Next();
    ASSERT_LT(previous, next) << "at " << i;
    previous = next;
  }
}

TEST(UuidV7Test, UniqueAcrossThreads) {
  ManualClock clock(kStartMicros);
  UuidV7Generator gen(clock);  // OS-seeded
  constexpr int kThreads = 8;
  constexpr int kPerThread = 500;
  std::vector<std::vector<std::string>> ids(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) ids[t].push_back(gen.Next());
    });
  }
  for (auto& thread : threads) thread.join();
  std::set<std::string> all;
  for (const auto& list : ids) {
    for (size_t i = 1; i < list.size(); ++i) EXPECT_LT(list[i - 1], list[i]);  // increasing per thread
    all.insert(list.begin(), list.end());
  }
  EXPECT_EQ(all.size(), static_cast<size_t>(kThreads * kPerThread));
}

TEST(UuidV7Test, DifferentSeedsGiveDifferentIds) {
  ManualClock clock(kStartMicros);
  UuidV7Generator a(clock, 1);
  UuidV7Generator b(clock, 2);
  EXPECT_NE(a.Next(), b.Next());
}

TEST(IsUuidStringTest, AcceptsCanonicalForms) {
  EXPECT_TRUE(IsUuidString("0190b3c4-5d6e-7f80-9a1b-2c3d4e5f6a7b"));
  EXPECT_TRUE(IsUuidString("0190B3C4-5D6E-7F80-9A1B-2C3D4E5F6A7B"));
  EXPECT_TRUE(IsUuidString("00000000-0000-0000-0000-000000000000"));
  EXPECT_TRUE(IsUuidString("123e4567-e89b-12d3-a456-426614174000"));  // v1: any version
}

TEST(IsUuidStringTest, RejectsEverythingElse) {
  for (const char* text : {"", "0190b3c4", "0190b3c45d6e7f809a1b2c3d4e5f6a7b",   // no dashes
                           "0190b3c4-5d6e-7f80-9a1b-2c3d4e5f6a7",                 // short
                           "0190b3c4-5d6e-7f80-9a1b-2c3d4e5f6a7bb",               // long
                           "0190b3c4-5d6e-7f80-9a1b-2c3d4e5f6a7g",                // not hex
                           "0190b3c4_5d6e-7f80-9a1b-2c3d4e5f6a7b",                // wrong separator
                           "0190b3c-45d6e-7f80-9a1b-2c3d4e5f6a7b",                // dash misplaced
                           "{0190b3c4-5d6e-7f80-9a1b-2c3d4e5f6a}",
                           " 0190b3c4-5d6e-7f80-9a1b-2c3d4e5f6a7"}) {
    EXPECT_FALSE(IsUuidString(text)) << text;
  }
}

}  // namespace
}  // namespace cairn
