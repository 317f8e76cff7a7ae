#include "base/shard.h"

#include <cstdint>

namespace cairn {

int ShardOf(std::string_view key, int shards) {
  if (shards <= 0) return 0;
  uint64_t hash = 14695981039346656037ULL;
  for (unsigned char c : key) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  return static_cast<int>(hash % static_cast<uint64_t>(shards));
}

}  // namespace cairn
