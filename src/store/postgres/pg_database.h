// PgDatabase: one process's way into a PostgreSQL database, shared by the PostgreSQL halves of
// the store (PgStore; the webhook store, text index and vector store beside it): the schema
// migrated at open, the process's one writer (PgWriter, group commit) and a pool of read
// connections.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/metrics.h"
#include "base/status.h"
#include "store/postgres/pg_connection.h"
#include "store/postgres/pg_writer.h"

namespace cairn::store::postgres {

struct PgOptions {
  std::string uri;               // libpq connection URI, e.g. postgresql://user@host:5432/db
  PgWriter::Options writer;      // writer.uri and writer.statement_timeout_ms are set from these
  size_t max_idle_readers = 16;  // read connections kept open between reads
  int64_t statement_timeout_ms = 30000;
};

class PgDatabase {
 public:
  // Connects, runs the migrations (serialised across processes by an advisory lock) and starts
  // the writer. `metrics` (may be null) must outlive the database.
  static Result<std::shared_ptr<PgDatabase>> Open(PgOptions options, MetricsRegistry* metrics);
  ~PgDatabase();

  // Runs `fn` on a pooled read connection (opened when none is idle; a lost one is dropped, and
  // `fn` runs again once on a new connection when the one it ran on turned out to be lost).
  Status WithReader(const std::function<Status(PgConnection&)>& fn);
  // Runs `fn` in the writer's next batch and waits for its commit (PgWriter::Submit).
  Status Write(const PgWriter::WriteFn& fn);
  // Queues `fn` like Write() without waiting: `done` gets its Status (PgWriter::Post).
  void Post(PgWriter::WriteFn fn, std::function<void(Status)> done);
  PgWriter& writer() { return *writer_; }
  const std::string& uri() const { return options_.uri; }

  // Commits what is queued and refuses later writes (kUnavailable). Idempotent.
  void Close();

 private:
  PgDatabase(PgOptions options, MetricsRegistry* metrics);

  void ObserveWrite(std::chrono::steady_clock::time_point started);

  PgOptions options_;
  Histogram* write_seconds_ = nullptr;
  std::unique_ptr<PgWriter> writer_;
  std::mutex readers_mu_;
  std::vector<std::unique_ptr<PgConnection>> idle_readers_;
};

}  // namespace cairn::store::postgres
