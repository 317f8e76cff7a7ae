#include "base/shard.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace cairn {
namespace {

// Every process of a cluster, of every version, must put a key in the same shard: these values are
// FNV-1a's, computed independently, and must never change.
TEST(ShardOf, IsFnv1aOfTheKeyAndTheSameForEveryVersion) {
  EXPECT_EQ(ShardOf("", 64), 37);
  EXPECT_EQ(ShardOf("exec:a", 64), 41);
  EXPECT_EQ(ShardOf("system:unknown-tools", 64), 38);
  EXPECT_EQ(ShardOf("a", 7), 5);
  EXPECT_EQ(ShardOf("a", 0), 0);
  EXPECT_EQ(ShardOf("a", -3), 0);
}

TEST(ShardOf, SpreadsKeysOverEveryShard) {
  std::vector<int> counts(64, 0);
  for (int i = 0; i < 6400; ++i) ++counts[ShardOf("exec:" + std::to_string(i), 64)];
  for (int shard = 0; shard < 64; ++shard) {
    EXPECT_GT(counts[shard], 50) << shard;
    EXPECT_LT(counts[shard], 150) << shard;
  }
}

}  // namespace
}  // namespace cairn
