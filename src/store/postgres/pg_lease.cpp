#include "store/postgres/pg_lease.h"

#include "base/log.h"
#include "base/thread_name.h"

namespace cairn::store::postgres {

PgLease::PgLease(Options options) : options_(std::move(options)) {}

PgLease::~PgLease() { Stop(); }

bool PgLease::Pause(std::chrono::milliseconds period) {
  std::unique_lock lock(mu_);
  return !stop_cv_.wait_for(lock, period, [this] { return stopping_; });
}

Result<bool> PgLease::TryLock() {
  if (!conn_ || !conn_->healthy()) {
    CAIRN_ASSIGN_OR_RETURN(conn_, PgConnection::OpenForLocks(options_.uri));
  }
  return conn_->TryAdvisoryLock(options_.key);
}

Status PgLease::Acquire(std::function<void()> on_lost) {
  bool waiting_logged = false;
  while (true) {
    Result<bool> locked = TryLock();
    if (locked.ok() && *locked) break;
    if (!locked.ok()) {
      CAIRN_LOG_WARN("lease: {}; trying again", locked.status().message());
    } else if (!waiting_logged) {
      CAIRN_LOG_INFO("lease: another process does {}; waiting to take over", options_.purpose);
      waiting_logged = true;
    }
    if (!Pause(options_.retry)) return Status::Unavailable("stopped while waiting for the lease");
  }
  {
    std::lock_guard lock(mu_);
    if (stopping_) return Status::Unavailable("stopped while taking the lease");  // Stop releases it
  }
  held_ = true;
  watcher_ = std::thread([this, on_lost = std::move(on_lost)] {
    NameThisThread("lease");
    Watch(on_lost);
  });
  return Status::Ok();
}

void PgLease::Watch(std::function<void()> on_lost) {
  while (Pause(options_.check)) {
    if (conn_->Run("SELECT 1").ok() && conn_->healthy()) continue;
    held_ = false;
    CAIRN_LOG_ERROR("lease: the connection that holds the lease on {} broke; another process may take over",
                    options_.purpose);
    if (on_lost) on_lost();
    return;
  }
}

void PgLease::RequestStop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
}

void PgLease::Stop() {
  RequestStop();
  if (watcher_.joinable()) watcher_.join();
  conn_.reset();  // closing the connection releases the lock
  held_ = false;
}

}  // namespace cairn::store::postgres
