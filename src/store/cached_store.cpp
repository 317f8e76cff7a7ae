#include "store/cached_store.h"

#include <functional>

namespace cairn::store {
namespace {

constexpr size_t kShards = 16;

}  // namespace

CachedStore::CachedStore(std::unique_ptr<Store> inner, size_t capacity, const Clock& clock, MetricsRegistry* metrics)
    : inner_(std::move(inner)), capacity_per_shard_((capacity + kShards - 1) / kShards), clock_(clock) {
  for (size_t i = 0; i < kShards; ++i) shards_.push_back(std::make_unique<Shard>());
  if (metrics) {
    hits_ = &metrics->GetCounter("cairn_store_cache_lookups_total", "Point reads by cache outcome", "result=\"hit\"");
    misses_ = &metrics->GetCounter("cairn_store_cache_lookups_total", "Point reads by cache outcome", "result=\"miss\"");
  }
}

std::string CachedStore::Key(const std::string& owner_id, const std::string& id) { return owner_id + '\n' + id; }

CachedStore::Shard& CachedStore::ShardFor(const std::string& key) {
  return *shards_[std::hash<std::string>{}(key) % kShards];
}

void CachedStore::Invalidate(const std::string& key) {
  Shard& shard = ShardFor(key);
  std::lock_guard lock(shard.mu);
  ++shard.generation;
  invalidations_.fetch_add(1);
  auto it = shard.entries.find(key);
  if (it == shard.entries.end()) return;
  shard.lru.erase(it->second.position);
  shard.entries.erase(it);
}

void CachedStore::BeginWrite(const std::string& key) {
  {
    Shard& shard = ShardFor(key);
    std::lock_guard lock(shard.mu);
    ++shard.writing[key];
  }
  Invalidate(key);
}

void CachedStore::EndWrite(const std::string& key) {
  // Also after a failure: the outcome of a failed commit is unknown.
  Invalidate(key);
  Shard& shard = ShardFor(key);
  std::lock_guard lock(shard.mu);
  if (--shard.writing[key] == 0) shard.writing.erase(key);
}

Result<model::Breadcrumb> CachedStore::Get(const std::string& owner_id, const std::string& id) {
  CAIRN_ASSIGN_OR_RETURN(auto record, GetShared(owner_id, id));
  return *record;
}

Result<std::shared_ptr<const model::Breadcrumb>> CachedStore::GetShared(const std::string& owner_id,
                                                                        const std::string& id) {
  std::string key = Key(owner_id, id);
  Shard& shard = ShardFor(key);
  uint64_t generation;
  bool in_write = false;
  {
    std::lock_guard lock(shard.mu);
    in_write = shard.writing.count(key) > 0;
    auto it = in_write ? shard.entries.end() : shard.entries.find(key);
    if (it != shard.entries.end()) {
      const auto& record = it->second.record;
      if (record->ttl_micros && *record->ttl_micros <= clock_.NowMicros()) {
        shard.lru.erase(it->second.position);
        shard.entries.erase(it);
      } else {
        shard.lru.splice(shard.lru.begin(), shard.lru, it->second.position);
        if (hits_) hits_->Increment();
        return record;
      }
    }
    generation = shard.generation;
  }
  // Read without the shard's lock: other readers, and a create's fill on the writer thread, must
  // not wait for this read.
  if (in_write) return inner_->GetShared(owner_id, id);  // no hit, no fill
  if (misses_) misses_->Increment();
  CAIRN_ASSIGN_OR_RETURN(auto record, inner_->GetShared(owner_id, id));
  if (capacity_per_shard_ == 0) return record;
  std::lock_guard lock(shard.mu);
  if (shard.generation != generation || shard.entries.count(key)) return record;  // raced with a write
  Insert(shard, key, record);
  return record;
}

void CachedStore::Insert(Shard& shard, const std::string& key, std::shared_ptr<const model::Breadcrumb> record) {
  shard.lru.push_front(key);
  shard.entries.emplace(key, Shard::Entry{std::move(record), shard.lru.begin()});
  if (shard.entries.size() > capacity_per_shard_) {
    shard.entries.erase(shard.lru.back());
    shard.lru.pop_back();
  }
}

Result<CreateResult> CachedStore::Create(const model::WriteContext& ctx, const model::BreadcrumbDraft& draft,
                                         const std::string& idempotency_key) {
  // The new record is cached as created: whoever follows its event (the embedding worker, an
  // executor assembling context) reads it next. Its id is new, so only a write to it that started
  // after the commit could make it stale; such a write counts an invalidation, and any
  // invalidation during the create drops the fill. A replayed create answers with the first
  // create's record, which may have changed since: not cached.
  const uint64_t invalidations = invalidations_.load();
  auto result = inner_->Create(ctx, draft, idempotency_key);
  RememberCreated(ctx.owner_id, result, invalidations, /*wait_for_shard=*/true);
  return result;
}

void CachedStore::CreateAsync(const model::WriteContext& ctx, model::BreadcrumbDraft draft, std::string idempotency_key,
                              CreateDone done) {
  const uint64_t invalidations = invalidations_.load();
  inner_->CreateAsync(ctx, std::move(draft), std::move(idempotency_key),
                      [this, owner_id = ctx.owner_id, invalidations, done = std::move(done)](Result<CreateResult> result) {
                        // On the store's writer thread: a large record's copy would hold up every
                        // write, and a busy shard is passed over rather than waited for.
                        if (result.ok() && result->breadcrumb.size_bytes <= kMaxFillOnWriterBytes) {
                          RememberCreated(owner_id, result, invalidations, /*wait_for_shard=*/false);
                        }
                        done(std::move(result));
                      });
}

void CachedStore::RememberCreated(const std::string& owner_id, const Result<CreateResult>& result,
                                  uint64_t invalidations, bool wait_for_shard) {
  if (!result.ok() || result->replayed || capacity_per_shard_ == 0) return;
  const model::Breadcrumb& created = result->breadcrumb;
  std::string key = Key(owner_id, created.id);
  Shard& shard = ShardFor(key);
  auto record = std::make_shared<const model::Breadcrumb>(created);  // copied before the lock
  std::unique_lock lock(shard.mu, std::defer_lock);
  if (wait_for_shard) {
    lock.lock();
  } else if (!lock.try_lock()) {
    return;
  }
  if (invalidations_.load() != invalidations || shard.entries.count(key) || shard.writing.count(key)) return;
  Insert(shard, key, std::move(record));
}

Result<model::Breadcrumb> CachedStore::Update(const model::WriteContext& ctx, const std::string& id,
                                              const model::BreadcrumbPatch& patch,
                                              std::optional<int64_t> expected_version) {
  std::string key = Key(ctx.owner_id, id);
  BeginWrite(key);
  auto result = inner_->Update(ctx, id, patch, expected_version);
  EndWrite(key);
  return result;
}

Status CachedStore::Delete(const model::WriteContext& ctx, const std::string& id, std::optional<int64_t> expected_version) {
  std::string key = Key(ctx.owner_id, id);
  BeginWrite(key);
  Status status = inner_->Delete(ctx, id, expected_version);
  EndWrite(key);
  return status;
}

Result<std::vector<WriteOutcome>> CachedStore::Apply(const model::WriteContext& ctx, const std::vector<WriteOp>& ops) {
  std::vector<std::string> keys;
  for (const WriteOp& op : ops) {
    if (op.kind != WriteOp::Kind::kCreate) keys.push_back(Key(ctx.owner_id, op.id));
  }
  for (const auto& key : keys) BeginWrite(key);
  auto result = inner_->Apply(ctx, ops);
  for (const auto& key : keys) EndWrite(key);
  return result;
}

Result<Page> CachedStore::List(const std::string& owner_id, const model::BreadcrumbQuery& query) {
  return inner_->List(owner_id, query);
}

Result<std::vector<model::BreadcrumbVersion>> CachedStore::History(const std::string& owner_id, const std::string& id) {
  return inner_->History(owner_id, id);
}

Result<int64_t> CachedStore::SweepExpired() { return inner_->SweepExpired(); }

Result<StoreStats> CachedStore::Stats() { return inner_->Stats(); }

void CachedStore::Close() { inner_->Close(); }

}  // namespace cairn::store
