#include "store/postgres/pg_shard_leases.h"

#include <algorithm>

#include "base/log.h"
#include "base/thread_name.h"

namespace cairn::store::postgres {

PgShardLeases::PgShardLeases(Options options) : options_(std::move(options)) {}

PgShardLeases::~PgShardLeases() { Stop(); }

void PgShardLeases::Start(Callbacks callbacks) {
  callbacks_ = std::move(callbacks);
  thread_ = std::thread([this] {
    NameThisThread("shard-leases");
    Loop();
  });
}

void PgShardLeases::Halt() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void PgShardLeases::Stop() {
  Halt();
  conn_.reset();  // closing the connection releases every lock
  held_.clear();
  releasing_.clear();
  held_count_ = 0;
}

bool PgShardLeases::Pause(std::chrono::milliseconds period) {
  std::unique_lock lock(mu_);
  return !stop_cv_.wait_for(lock, period, [this] { return stopping_; });
}

void PgShardLeases::Loop() {
  bool warned = false;
  while (true) {
    Status balanced = Balance();
    if (!balanced.ok() && (!held_.empty() || !releasing_.empty())) {
      CAIRN_LOG_ERROR("{}: the connection that holds this process's shards broke ({}); another process may take "
                      "them over",
                      options_.purpose, balanced.message());
      held_.clear();
      releasing_.clear();
      held_count_ = 0;
      if (callbacks_.on_lost) callbacks_.on_lost();
      return;
    }
    if (!balanced.ok()) {
      if (!warned) CAIRN_LOG_WARN("{}: {}; trying again", options_.purpose, balanced.message());
      warned = true;
      conn_.reset();
      member_slot_ = -1;
    } else {
      warned = false;
    }
    if (!Pause(options_.period)) return;
  }
}

Status PgShardLeases::Unlock(int64_t key) {
  PgParams params;
  return conn_->Run("SELECT pg_advisory_unlock(" + params.Add(key) + "::bigint)", params);
}

Result<std::set<int>> PgShardLeases::Locked(int64_t first_key, int count) {
  // A bigint advisory lock shows in pg_locks as classid (its high half) and objid (its low half).
  PgParams params;
  std::string first = params.Add(first_key);
  std::string last = params.Add(first_key + count - 1);
  CAIRN_ASSIGN_OR_RETURN(
      PgResult rows,
      conn_->Query("SELECT ((classid::bigint << 32) | objid::bigint) - " + first +
                       "::bigint FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1 AND database = "
                       "(SELECT oid FROM pg_database WHERE datname = current_database()) AND ((classid::bigint << 32) "
                       "| objid::bigint) BETWEEN " +
                       first + "::bigint AND " + last + "::bigint",
                   params));
  std::set<int> locked;
  for (int i = 0; i < rows.rows(); ++i) locked.insert(static_cast<int>(rows.Row(i).Int(0)));
  return locked;
}

Status PgShardLeases::Balance() {
  if (!conn_ || !conn_->healthy()) {
    if (!held_.empty() || !releasing_.empty()) return Status::Unavailable("its connection closed");
    CAIRN_ASSIGN_OR_RETURN(conn_, PgConnection::OpenForLocks(options_.uri));
    member_slot_ = -1;
    legacy_held_ = false;
  }
  if (options_.legacy_key != 0 && !legacy_held_) {
    CAIRN_ASSIGN_OR_RETURN(legacy_held_, conn_->TryAdvisoryLock(options_.legacy_key, /*shared=*/true));
    if (!legacy_held_) {
      if (!legacy_logged_) {
        CAIRN_LOG_WARN("{}: a process of an older cairn does this work under one lease; this process takes no "
                       "shard until it stops (docs/deploy.md)",
                       options_.purpose);
      }
      legacy_logged_ = true;
      return Status::Ok();
    }
  }
  if (member_slot_ < 0) {
    for (int slot = 0; slot < options_.max_members && member_slot_ < 0; ++slot) {
      CAIRN_ASSIGN_OR_RETURN(bool got, conn_->TryAdvisoryLock(options_.member_key + slot));
      if (got) member_slot_ = slot;
    }
    if (member_slot_ < 0) {
      return Status::Unavailable("all " + std::to_string(options_.max_members) +
                                 " member slots are taken: this process takes no shard");
    }
    next_try_ = (member_slot_ * 17) % options_.shards;  // members start their searches apart
  }
  CAIRN_ASSIGN_OR_RETURN(std::set<int> members, Locked(options_.member_key, options_.max_members));
  members_ = std::max<int>(1, static_cast<int>(members.size()));
  const size_t share = static_cast<size_t>((options_.shards + members_ - 1) / members_);
  for (auto it = releasing_.begin(); it != releasing_.end();) {
    if (!callbacks_.released(*it)) {
      ++it;
      continue;
    }
    CAIRN_RETURN_IF_ERROR(Unlock(options_.shard_key + *it));
    it = releasing_.erase(it);
  }
  while (held_.size() > share) {
    int shard = *held_.rbegin();
    held_.erase(shard);
    releasing_.insert(shard);
    callbacks_.release(shard);
  }
  // A process still giving shards up takes none: its share is what it keeps.
  if (releasing_.empty() && held_.size() < share) {
    CAIRN_ASSIGN_OR_RETURN(std::set<int> taken, Locked(options_.shard_key, options_.shards));
    for (int tried = 0; tried < options_.shards && held_.size() < share; ++tried) {
      int shard = (next_try_ + tried) % options_.shards;
      if (taken.count(shard)) continue;
      CAIRN_ASSIGN_OR_RETURN(bool got, conn_->TryAdvisoryLock(options_.shard_key + shard));
      if (!got) continue;  // another process was quicker
      held_.insert(shard);
      callbacks_.take(shard);
    }
  }
  if (callbacks_.tick) callbacks_.tick();
  held_count_ = held_.size() + releasing_.size();
  if (held_.size() != logged_held_ && releasing_.empty()) {
    logged_held_ = held_.size();
    CAIRN_LOG_INFO("{}: this process holds {} of {} shards ({} processes in all)", options_.purpose, held_.size(),
                   options_.shards, members_.load());
  }
  return Status::Ok();
}

}  // namespace cairn::store::postgres
