// The shard of a key among `shards` (work spread over the processes of a cluster by shard:
// docs/deploy.md): FNV-1a of the key, so the same in every process and every version. Changing it
// would move work between processes that must agree on it.
#pragma once

#include <string_view>

namespace cairn {

// 0 .. shards - 1; 0 when `shards` is not positive.
int ShardOf(std::string_view key, int shards);

}  // namespace cairn
