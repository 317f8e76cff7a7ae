// CachedStore: a Store decorator that keeps recently read records in memory, so hot point reads
// (agents re-reading the same context breadcrumbs) skip SQLite, row decoding and JSON parsing.
//
// Consistency: every write goes through this decorator. A record being updated or deleted is
// marked "in write" and dropped from the cache before the write is submitted, and dropped again
// when it returns; while marked, reads go to the store and fill nothing. So a read that starts
// after a write is acknowledged, or after its event was published (which happens at commit,
// before the write returns here), never sees the old version. A read that raced with a write does not put its (possibly old) result in the
// cache: each shard has a generation, bumped by every invalidation, and a fill is dropped if the
// generation moved while the read was in flight. Expired records are hidden by checking the ttl on
// every hit. A created record is cached as created (its readers follow its event), unless an
// invalidation happened during the create or the create was a replay. Other calls pass straight
// through.
#pragma once

#include <atomic>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "base/metrics.h"
#include "store/store.h"

namespace cairn::store {

class CachedStore final : public Store {
 public:
  // Caches up to `capacity` records (least recently used are evicted); `inner` does the work.
  // `clock` must outlive the store; `metrics` may be null.
  CachedStore(std::unique_ptr<Store> inner, size_t capacity, const Clock& clock, MetricsRegistry* metrics);

  Result<CreateResult> Create(const model::WriteContext& ctx, const model::BreadcrumbDraft& draft,
                              const std::string& idempotency_key) override;
  void CreateAsync(const model::WriteContext& ctx, model::BreadcrumbDraft draft, std::string idempotency_key,
                   CreateDone done) override;
  Result<model::Breadcrumb> Get(const std::string& owner_id, const std::string& id) override;
  Result<std::shared_ptr<const model::Breadcrumb>> GetShared(const std::string& owner_id,
                                                             const std::string& id) override;
  Result<model::Breadcrumb> Update(const model::WriteContext& ctx, const std::string& id,
                                   const model::BreadcrumbPatch& patch, std::optional<int64_t> expected_version) override;
  Status Delete(const model::WriteContext& ctx, const std::string& id, std::optional<int64_t> expected_version) override;
  Result<std::vector<WriteOutcome>> Apply(const model::WriteContext& ctx, const std::vector<WriteOp>& ops) override;
  Result<Page> List(const std::string& owner_id, const model::BreadcrumbQuery& query) override;
  Result<std::vector<model::BreadcrumbVersion>> History(const std::string& owner_id, const std::string& id) override;
  Result<int64_t> SweepExpired() override;
  Result<StoreStats> Stats() override;
  void Close() override;

 private:
  struct Shard {
    std::mutex mu;
    uint64_t generation = 0;
    std::list<std::string> lru;  // keys, most recent first
    struct Entry {
      std::shared_ptr<const model::Breadcrumb> record;
      std::list<std::string>::iterator position;
    };
    std::unordered_map<std::string, Entry> entries;
    std::unordered_map<std::string, int> writing;  // keys with writes in flight, and how many
  };
  static std::string Key(const std::string& owner_id, const std::string& id);
  Shard& ShardFor(const std::string& key);
  void Invalidate(const std::string& key);
  // Marks `key` in write (and drops it) until EndWrite.
  void BeginWrite(const std::string& key);
  void EndWrite(const std::string& key);
  // Adds `record` under `key` as the most recent entry, evicting the least recent beyond capacity.
  // Caller holds shard.mu.
  void Insert(Shard& shard, const std::string& key, std::shared_ptr<const model::Breadcrumb> record);
  // Caches what a create returned, unless it failed, was a replay, or an invalidation happened
  // since `invalidations` was read (before the create started). Without `wait_for_shard`, a
  // shard whose lock is held is passed over (the fill is only an optimisation).
  void RememberCreated(const std::string& owner_id, const Result<CreateResult>& result, uint64_t invalidations,
                       bool wait_for_shard);
  // An async create's record is cached on the writer thread only up to this size of context.
  static constexpr int64_t kMaxFillOnWriterBytes = 64 * 1024;

  std::unique_ptr<Store> inner_;
  size_t capacity_per_shard_;
  const Clock& clock_;
  std::vector<std::unique_ptr<Shard>> shards_;
  Counter* hits_ = nullptr;
  Counter* misses_ = nullptr;
  // Invalidations in any shard, ever: a create's fill is dropped if one happened meanwhile.
  std::atomic<uint64_t> invalidations_{0};
};

}  // namespace cairn::store
