#include "store/postgres/pg_writer.h"

#include <chrono>

#include "base/log.h"
#include "base/thread_name.h"
#include "store/postgres/pg_notifier.h"

namespace cairn::store::postgres {

PgWriter::PgWriter(std::unique_ptr<PgConnection> conn, Options options, MetricsRegistry* metrics)
    : conn_(std::move(conn)), options_(std::move(options)), queue_(options_.max_batch, options_.max_queue) {
  if (metrics) {
    batch_size_ = &metrics->GetHistogram("cairn_store_commit_batch_writes", "Writes committed per transaction", "",
                                         {1, 2, 4, 8, 16, 32, 64, 128, 256, 512});
    commit_seconds_ = &metrics->GetHistogram("cairn_store_commit_seconds", "Time to run and commit one batch");
  }
  if (conn_) backend_pid_ = conn_->backend_pid();
  thread_ = std::thread([this] {
    NameThisThread("store-writer");
    queue_.Drain([this](std::deque<Pending>& batch) { CommitBatch(batch); });
  });
}

PgWriter::~PgWriter() { Close(); }

Status PgWriter::Submit(WriteFn fn) { return queue_.Submit(std::move(fn)); }

void PgWriter::Post(WriteFn fn, std::function<void(Status)> done) { queue_.Post(std::move(fn), std::move(done)); }

void PgWriter::Close() {
  queue_.Close();
  if (thread_.joinable()) thread_.join();
}

Status PgWriter::EnsureConnected() {
  if (conn_ && conn_->healthy()) return Status::Ok();
  CAIRN_ASSIGN_OR_RETURN(auto fresh, PgConnection::Open(options_.uri, options_.statement_timeout_ms));
  conn_ = std::move(fresh);
  backend_pid_ = conn_->backend_pid();
  CAIRN_LOG_INFO("store: reconnected to PostgreSQL");
  return Status::Ok();
}

void PgWriter::CommitBatch(std::deque<Pending>& batch) {
  auto started = std::chrono::steady_clock::now();
  auto fail_all = [&](const Status& status) {
    for (auto& pending : batch) pending.done(status);
  };
  Status connected = EnsureConnected();
  if (!connected.ok()) return fail_all(connected);
  Status begin = conn_->Run("BEGIN");
  if (!begin.ok() && !conn_->healthy()) {
    // The server dropped the idle connection (a restart): nothing was written yet, so beginning
    // again on a new connection is safe.
    Status reconnected = EnsureConnected();
    if (!reconnected.ok()) return fail_all(reconnected);
    begin = conn_->Run("BEGIN");
  }
  PgConnection& conn = *conn_;
  std::vector<model::Event>& staged = conn.staged_events();
  staged.clear();
  Result<PgResult> counter = begin.ok() ? conn.Query("SELECT last_seq FROM event_counter FOR UPDATE")
                                        : Result<PgResult>(begin);
  if (!counter.ok()) {
    CAIRN_LOG_ERROR("store: cannot begin a write transaction: {}", counter.status().message());
    if (conn.in_transaction()) (void)conn.Exec("ROLLBACK");
    return fail_all(counter.status());
  }
  const int64_t first_seq = counter->Row(0).Int(0);
  conn.last_seq() = first_seq;
  std::vector<Status> results;
  results.reserve(batch.size());
  Status aborted;  // set when the transaction itself failed (not one write)
  // One savepoint per write, one round trip each: a write that succeeded is released together
  // with the next write's savepoint, a failed one leaves the savepoint where it was (rolled back
  // to), and COMMIT releases the last.
  bool savepoint_dirty = true;  // no savepoint yet, or one a successful write moved past
  for (size_t i = 0; i < batch.size(); ++i) {
    if (!aborted.ok()) {
      results.push_back(aborted);
      continue;
    }
    if (savepoint_dirty) {
      Status placed = conn.Exec(i == 0 ? "SAVEPOINT w" : "RELEASE SAVEPOINT w; SAVEPOINT w");
      if (!placed.ok()) {
        aborted = placed;
        results.push_back(aborted);
        continue;
      }
    }
    size_t staged_before = staged.size();
    int64_t seq_before = conn.last_seq();
    Status status = batch[i].fn(conn);
    savepoint_dirty = status.ok();
    if (!status.ok()) {
      staged.resize(staged_before);  // its events rolled back with it
      conn.last_seq() = seq_before;
      Status undone = conn.Run("ROLLBACK TO SAVEPOINT w");
      if (!undone.ok()) aborted = undone;
    }
    results.push_back(std::move(status));
  }
  if (aborted.ok() && conn.last_seq() != first_seq) {
    // The counter moves and the other processes hear of the commit, in one round trip.
    PgParams params;
    aborted = conn.Run("WITH moved AS (UPDATE event_counter SET last_seq = " + params.Add(conn.last_seq()) +
                           "::bigint RETURNING last_seq) SELECT pg_notify('" + kEventsChannel +
                           "', last_seq::text) FROM moved", params);
  }
  Status commit = aborted.ok() ? conn.Run("COMMIT") : aborted;
  if (!commit.ok()) {
    CAIRN_LOG_ERROR("store: commit of {} writes failed: {}", batch.size(), commit.message());
    if (conn.healthy() && conn.in_transaction()) (void)conn.Exec("ROLLBACK");
  }
  if (batch_size_) batch_size_->Observe(static_cast<double>(batch.size()));
  if (commit_seconds_) {
    commit_seconds_->Observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  }
  bool any_committed = false;
  for (size_t i = 0; i < batch.size(); ++i) any_committed = any_committed || (commit.ok() && results[i].ok());
  std::vector<model::Event> committed;
  committed.swap(staged);
  if (any_committed) listener_.Call(std::move(committed));
  for (size_t i = 0; i < batch.size(); ++i) batch[i].done(commit.ok() || !results[i].ok() ? results[i] : commit);
}

}  // namespace cairn::store::postgres
