#include "store/sqlite/group_commit_writer.h"

#include <sqlite3.h>

#include <chrono>

#include "base/log.h"
#include "base/thread_name.h"

namespace cairn::store::sqlite {

GroupCommitWriter::GroupCommitWriter(std::unique_ptr<Connection> conn, Options options, MetricsRegistry* metrics)
    : conn_(std::move(conn)), options_(std::move(options)), queue_(options_.max_batch, options_.max_queue) {
  if (metrics) {
    batch_size_ = &metrics->GetHistogram("cairn_store_commit_batch_writes", "Writes committed per transaction", "",
                                         {1, 2, 4, 8, 16, 32, 64, 128, 256, 512});
    commit_seconds_ = &metrics->GetHistogram("cairn_store_commit_seconds", "Time to run and commit one batch");
  }
  thread_ = std::thread([this] {
    NameThisThread("store-writer");
    queue_.Drain([this](std::deque<Pending>& batch) { CommitBatch(batch); });
  });
}

GroupCommitWriter::~GroupCommitWriter() { Close(); }

Status GroupCommitWriter::Submit(WriteFn fn) { return queue_.Submit(std::move(fn)); }

void GroupCommitWriter::Post(WriteFn fn, std::function<void(Status)> done) { queue_.Post(std::move(fn), std::move(done)); }

void GroupCommitWriter::Close() {
  queue_.Close();
  if (thread_.joinable()) thread_.join();
}

Status GroupCommitWriter::BeforeCommit() {
  if (!options_.before_commit_when.empty()) {
    CAIRN_ASSIGN_OR_RETURN(auto when, conn_->Prepare(options_.before_commit_when));
    CAIRN_ASSIGN_OR_RETURN(bool row, when->Step());
    when->Reset();
    if (!row) return Status::Ok();
  }
  for (const std::string& sql : options_.before_commit) CAIRN_RETURN_IF_ERROR(conn_->ExecCached(sql));
  return Status::Ok();
}

void GroupCommitWriter::CommitBatch(std::deque<Pending>& batch) {
  auto started = std::chrono::steady_clock::now();
  std::vector<model::Event>& staged = conn_->staged_events();
  staged.clear();
  Status begin = conn_->ExecCached("BEGIN IMMEDIATE");
  if (!begin.ok()) {
    CAIRN_LOG_ERROR("store: cannot begin a write transaction: {}", begin.message());
    for (auto& pending : batch) pending.done(begin);
    return;
  }
  std::vector<Status> results;
  results.reserve(batch.size());
  Status aborted;  // set when SQLite rolled the whole transaction back
  for (auto& pending : batch) {
    if (!aborted.ok()) {
      results.push_back(aborted);
      continue;
    }
    Status status = conn_->ExecCached("SAVEPOINT w");
    size_t staged_before = staged.size();
    if (status.ok()) {
      status = pending.fn(*conn_);
      if (!status.ok()) staged.resize(staged_before);  // its events rolled back with it
      // Some errors (SQLITE_FULL in a statement without its own journal, SQLITE_IOERR) make SQLite
      // roll back the whole transaction, not just the savepoint: every write of the batch is then
      // undone, and the rest must not run outside a transaction (they would commit one by one
      // while being reported failed).
      if (!status.ok() && sqlite3_get_autocommit(conn_->raw())) {
        aborted = status;
        for (Status& earlier : results) {
          if (earlier.ok()) earlier = status;
        }
      } else {
        if (!status.ok()) (void)conn_->ExecCached("ROLLBACK TO w");
        (void)conn_->ExecCached("RELEASE w");
      }
    }
    results.push_back(std::move(status));
  }
  if (aborted.ok() && !options_.before_commit.empty()) {
    Status before = BeforeCommit();
    if (!before.ok()) {
      aborted = before;
      for (Status& earlier : results) {
        if (earlier.ok()) earlier = before;
      }
    }
  }
  Status commit = aborted.ok() ? conn_->ExecCached("COMMIT") : aborted;
  if (!commit.ok()) {
    CAIRN_LOG_ERROR("store: commit of {} writes failed: {}", batch.size(), commit.message());
    if (!sqlite3_get_autocommit(conn_->raw())) (void)conn_->Exec("ROLLBACK");
  }
  if (batch_size_) batch_size_->Observe(static_cast<double>(batch.size()));
  if (commit_seconds_) {
    commit_seconds_->Observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  }
  bool any_committed = false;
  for (size_t i = 0; i < batch.size(); ++i) any_committed = any_committed || (commit.ok() && results[i].ok());
  // The listener first: when a writer hears its write succeeded, the write's events are already
  // published (a client that reads the bus's position after a 201 sees its own write).
  std::vector<model::Event> committed;
  committed.swap(staged);
  if (any_committed) listener_.Call(std::move(committed));
  for (size_t i = 0; i < batch.size(); ++i) batch[i].done(commit.ok() || !results[i].ok() ? results[i] : commit);
}

}  // namespace cairn::store::sqlite
