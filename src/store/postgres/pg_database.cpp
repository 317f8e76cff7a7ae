#include "store/postgres/pg_database.h"

#include <chrono>

#include "store/postgres/pg_migrations.h"

namespace cairn::store::postgres {

PgDatabase::PgDatabase(PgOptions options, MetricsRegistry* metrics) : options_(std::move(options)) {
  if (metrics) write_seconds_ = &metrics->GetHistogram("cairn_store_write_seconds", "Store write latency, queue to commit");
}

Result<std::shared_ptr<PgDatabase>> PgDatabase::Open(PgOptions options, MetricsRegistry* metrics) {
  CAIRN_ASSIGN_OR_RETURN(auto conn, PgConnection::Open(options.uri, options.statement_timeout_ms));
  CAIRN_RETURN_IF_ERROR(RunPgMigrations(*conn));
  std::shared_ptr<PgDatabase> db(new PgDatabase(options, metrics));
  PgWriter::Options writer = options.writer;
  writer.uri = options.uri;
  writer.statement_timeout_ms = options.statement_timeout_ms;
  db->writer_ = std::make_unique<PgWriter>(std::move(conn), std::move(writer), metrics);
  return db;
}

PgDatabase::~PgDatabase() { Close(); }

void PgDatabase::Close() {
  if (writer_) writer_->Close();
}

Status PgDatabase::WithReader(const std::function<Status(PgConnection&)>& fn) {
  std::unique_ptr<PgConnection> conn;
  {
    std::lock_guard lock(readers_mu_);
    if (!idle_readers_.empty()) {
      conn = std::move(idle_readers_.back());
      idle_readers_.pop_back();
    }
  }
  if (!conn || !conn->healthy()) {
    CAIRN_ASSIGN_OR_RETURN(conn, PgConnection::Open(options_.uri, options_.statement_timeout_ms));
  }
  Status status = fn(*conn);
  if (!status.ok() && !conn->healthy()) {
    // An idle connection the server dropped (a restart) only shows it when used: reads are safe
    // to run again, once, on a new one.
    CAIRN_ASSIGN_OR_RETURN(conn, PgConnection::Open(options_.uri, options_.statement_timeout_ms));
    status = fn(*conn);
  }
  if (conn->healthy() && !conn->in_transaction()) {
    std::lock_guard lock(readers_mu_);
    if (idle_readers_.size() < options_.max_idle_readers) idle_readers_.push_back(std::move(conn));
  }
  return status;
}

Status PgDatabase::Write(const PgWriter::WriteFn& fn) {
  auto started = std::chrono::steady_clock::now();
  Status status = writer_->Submit(fn);
  ObserveWrite(started);
  return status;
}

void PgDatabase::Post(PgWriter::WriteFn fn, std::function<void(Status)> done) {
  writer_->Post(std::move(fn), [this, started = std::chrono::steady_clock::now(), done = std::move(done)](Status status) {
    ObserveWrite(started);
    done(std::move(status));
  });
}

void PgDatabase::ObserveWrite(std::chrono::steady_clock::time_point started) {
  if (write_seconds_) {
    write_seconds_->Observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  }
}

}  // namespace cairn::store::postgres
