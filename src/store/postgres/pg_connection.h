// A thin RAII layer over one libpq connection: statements are prepared once per connection and
// cached, parameters and results travel as text, and every PostgreSQL error becomes a Status
// (pg_connection.cpp maps SQLSTATEs). A connection is used by one thread at a time.
#pragma once

#include <libpq-fe.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "model/event.h"
#include "store/stored_row.h"

namespace cairn::store::postgres {

// The parameters of one statement. Each Add() appends a value and returns its placeholder ("$3"),
// so SQL text and values are built together and never have to line up by hand.
class PgParams {
 public:
  std::string Add(std::string_view text);
  std::string Add(const char* text) { return Add(std::string_view(text)); }
  std::string Add(const std::string& text) { return Add(std::string_view(text)); }
  std::string Add(int64_t value);
  std::string Add(double value);
  std::string Add(const std::optional<std::string>& text);
  std::string Add(const std::optional<int64_t>& value);
  std::string AddNull();

  size_t size() const { return values_.size(); }
  // The first value holding a NUL byte, which libpq's text format cannot carry (the statement is
  // then refused, kInvalidArgument, instead of storing a cut string).
  std::optional<size_t> nul_value() const { return nul_value_; }
  // libpq's view of the values (null pointers for NULL), valid until the next Add().
  const char* const* data() const;

 private:
  std::string Placeholder() const { return "$" + std::to_string(values_.size()); }
  std::vector<std::optional<std::string>> values_;
  mutable std::vector<const char*> pointers_;
  std::optional<size_t> nul_value_;
};

// One row of a result (StoredRow: columns by 0-based index).
class PgRow final : public StoredRow {
 public:
  PgRow(const PGresult* result, int row) : result_(result), row_(row) {}
  bool IsNull(int column) const override { return PQgetisnull(result_, row_, column) != 0; }
  int64_t Int(int column) const override;
  // PostgreSQL's text form of a boolean is "t" or "f".
  bool Bool(int column) const override { return Text(column) == "t"; }
  std::string_view Text(int column) const override;
  double Double(int column) const;

 private:
  const PGresult* result_;
  int row_;
};

// The rows of one statement.
class PgResult {
 public:
  explicit PgResult(PGresult* result) : result_(result, &PQclear) {}
  int rows() const { return PQntuples(result_.get()); }
  PgRow Row(int row) const { return PgRow(result_.get(), row); }
  // Rows changed by an INSERT, UPDATE or DELETE.
  int64_t affected() const;
  const PGresult* raw() const { return result_.get(); }

 private:
  std::unique_ptr<PGresult, void (*)(PGresult*)> result_;
};

class PgConnection {
 public:
  // Connects to `uri` (libpq's URI or key=value form). Sets the session to UTC and to READ
  // COMMITTED, with `statement_timeout_ms` (0: none) bounding every statement. A server that stops
  // answering is given up after 10 s when connecting, and after about `dead_server_ms` on an open
  // connection (TCP only; the URI's own connect_timeout, keepalives_* and tcp_user_timeout win).
  // The server's side of the session drops a silent client after about 30 s.
  static constexpr int kServerDropsSilentClientMs = 30000;
  static Result<std::unique_ptr<PgConnection>> Open(const std::string& uri, int64_t statement_timeout_ms = 0,
                                                    int dead_server_ms = kServerDropsSilentClientMs);
  // A connection that holds advisory locks (PgLease, PgShardLeases): it gives a silent server up in
  // a third of the time the server takes to drop it, so a holder cut off from the database finds
  // out (and stops) well before the server hands its locks to another process.
  static Result<std::unique_ptr<PgConnection>> OpenForLocks(const std::string& uri);
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  // Runs `sql` (any number of statements, no parameters).
  Status Exec(const std::string& sql);
  // Runs one statement, prepared on first use and cached by its text.
  Result<PgResult> Query(const std::string& sql, const PgParams& params = {});
  // Like Query(), but planned for this one run and not cached: for statements built per request
  // (list queries), whose texts are too many to keep prepared.
  Result<PgResult> QueryOnce(const std::string& sql, const PgParams& params);
  // Like Query() for statements whose rows nobody reads.
  Status Run(const std::string& sql, const PgParams& params = {});
  // pg_try_advisory_lock(key), or its shared form: whether this session holds the lock now.
  Result<bool> TryAdvisoryLock(int64_t key, bool shared = false);

  // False once the server went away; the owner then opens a new connection.
  bool healthy() const { return PQstatus(conn_) == CONNECTION_OK; }
  PGconn* raw() const { return conn_; }
  // The id of the server process serving this connection.
  int backend_pid() const { return PQbackendPID(conn_); }
  // True inside a transaction block (also one an error aborted).
  bool in_transaction() const { return PQtransactionStatus(conn_) != PQTRANS_IDLE; }

  // The events the current write transaction appended, in seq order, and the last seq it gave
  // out (the writer sets it from the log's counter at BEGIN): see PgWriter.
  std::vector<model::Event>& staged_events() { return staged_events_; }
  int64_t& last_seq() { return last_seq_; }

 private:
  explicit PgConnection(PGconn* conn) : conn_(conn) {}
  // `result` when its statement succeeded, else the statement's error.
  Result<PgResult> Checked(PgResult result) const;
  PGconn* conn_;
  std::unordered_map<std::string, std::string> prepared_;  // sql -> statement name
  std::vector<model::Event> staged_events_;
  int64_t last_seq_ = 0;
};

// The error of `result` (or of the connection, when the result is null) as a Status: a unique
// violation is kConflict; text PostgreSQL cannot hold (a NUL character) or a number out of its
// range kInvalidArgument; a lost connection or a server shutting down kUnavailable; the rest
// kInternal.
Status PgError(const PGconn* conn, const PGresult* result, std::string_view what);

}  // namespace cairn::store::postgres
