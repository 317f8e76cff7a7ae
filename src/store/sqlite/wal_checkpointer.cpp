#include "store/sqlite/wal_checkpointer.h"

#include <chrono>

#include "base/log.h"
#include "base/thread_name.h"

namespace cairn::store::sqlite {

Result<std::unique_ptr<WalCheckpointer>> WalCheckpointer::Start(const std::string& path, const std::string& synchronous,
                                                                Options options, MetricsRegistry* metrics) {
  CAIRN_ASSIGN_OR_RETURN(auto conn, Connection::Open(path, synchronous));
  std::unique_ptr<WalCheckpointer> checkpointer(new WalCheckpointer(std::move(conn), options, metrics));
  checkpointer->thread_ = std::thread([raw = checkpointer.get()] {
    NameThisThread("wal-checkpoint");
    raw->Run();
  });
  return checkpointer;
}

WalCheckpointer::WalCheckpointer(std::unique_ptr<Connection> conn, Options options, MetricsRegistry* metrics)
    : conn_(std::move(conn)), options_(options) {
  if (metrics) {
    const char* help = "WAL checkpoints, by who ran them (the background thread, or a commit when the log had grown too long)";
    background_counter_ = &metrics->GetCounter("cairn_store_checkpoints_total", help, "by=\"background\"");
    inline_counter_ = &metrics->GetCounter("cairn_store_checkpoints_total", help, "by=\"commit\"");
    seconds_ = &metrics->GetHistogram("cairn_store_checkpoint_seconds", "Time of one background WAL checkpoint");
  }
}

WalCheckpointer::~WalCheckpointer() { Stop(); }

void WalCheckpointer::Attach(Connection& writer) { sqlite3_wal_hook(writer.raw(), &WalCheckpointer::OnCommit, this); }

void WalCheckpointer::Detach(Connection& writer) {
  constexpr int kSqliteDefaultPages = 1000;  // SQLITE_DEFAULT_WAL_AUTOCHECKPOINT, not in sqlite3.h
  sqlite3_wal_autocheckpoint(writer.raw(), kSqliteDefaultPages);
}

void WalCheckpointer::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_one();
  done_.notify_all();
  if (thread_.joinable()) thread_.join();
}

int WalCheckpointer::OnCommit(void* arg, sqlite3* db, const char* schema, int pages) {
  auto* self = static_cast<WalCheckpointer*>(arg);
  if (pages >= self->options_.inline_pages) {
    // Copy what the thread has not yet, so the next write can start the log again. PASSIVE: a
    // background checkpoint in progress makes this one return at once (busy), and the next
    // commit tries again.
    int log = 0;
    int copied = 0;
    if (sqlite3_wal_checkpoint_v2(db, schema, SQLITE_CHECKPOINT_PASSIVE, &log, &copied) == SQLITE_OK) {
      self->copied_.store(copied);
      self->inline_.fetch_add(1);
      if (self->inline_counter_) self->inline_counter_->Increment();
    }
    return SQLITE_OK;
  }
  int64_t copied = self->copied_.load();
  if (pages < copied) {  // the log started again
    self->copied_.store(0);
    copied = 0;
  }
  if (pages - copied >= self->options_.start_pages) {
    {
      std::lock_guard lock(self->mu_);
      if (self->wanted_) return SQLITE_OK;
      self->wanted_ = true;
    }
    self->wake_.notify_one();
  }
  return SQLITE_OK;
}

void WalCheckpointer::Run() {
  std::unique_lock lock(mu_);
  while (true) {
    wake_.wait(lock, [this] { return wanted_ || stopping_; });
    if (stopping_) return;
    wanted_ = false;
    lock.unlock();
    auto started = std::chrono::steady_clock::now();
    int log = 0;
    int copied = 0;
    int rc = sqlite3_wal_checkpoint_v2(conn_->raw(), nullptr, SQLITE_CHECKPOINT_PASSIVE, &log, &copied);
    if (rc == SQLITE_OK) copied_.store(copied);
    if (rc != SQLITE_OK && rc != SQLITE_BUSY) {
      // Not fatal: the log stays longer, and the next commit asks again (or checkpoints itself).
      CAIRN_LOG_WARN("store: WAL checkpoint failed: {}", sqlite3_errmsg(conn_->raw()));
    }
    if (seconds_) seconds_->Observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    background_.fetch_add(1);
    if (background_counter_) background_counter_->Increment();
    lock.lock();
    ++finished_;
    done_.notify_all();
  }
}

bool WalCheckpointer::WaitForCheckpoints(int64_t count, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return done_.wait_for(lock, timeout, [&] { return finished_ >= count || stopping_; }) && finished_ >= count;
}

}  // namespace cairn::store::sqlite
