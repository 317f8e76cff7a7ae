#include "store/postgres/pg_connection.h"

#include <algorithm>

#include <charconv>
#include <cstdio>
#include <cstring>

namespace cairn::store::postgres {

std::string PgParams::Add(std::string_view text) {
  if (!nul_value_ && text.find('\0') != std::string_view::npos) nul_value_ = values_.size();
  values_.emplace_back(std::string(text));
  return Placeholder();
}

std::string PgParams::Add(int64_t value) {
  values_.emplace_back(std::to_string(value));
  return Placeholder();
}

std::string PgParams::Add(double value) {
  char buffer[32];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);  // shortest text that reads back exactly
  values_.emplace_back(std::string(buffer, ec == std::errc() ? end : buffer));
  return Placeholder();
}

std::string PgParams::Add(const std::optional<std::string>& text) { return text ? Add(std::string_view(*text)) : AddNull(); }

std::string PgParams::Add(const std::optional<int64_t>& value) { return value ? Add(*value) : AddNull(); }

std::string PgParams::AddNull() {
  values_.emplace_back(std::nullopt);
  return Placeholder();
}

const char* const* PgParams::data() const {
  pointers_.clear();
  for (const auto& value : values_) pointers_.push_back(value ? value->c_str() : nullptr);
  return pointers_.data();
}

int64_t PgRow::Int(int column) const {
  std::string_view text = Text(column);
  int64_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

double PgRow::Double(int column) const {
  std::string_view text = Text(column);
  double value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

std::string_view PgRow::Text(int column) const {
  if (IsNull(column)) return {};
  return {PQgetvalue(result_, row_, column), static_cast<size_t>(PQgetlength(result_, row_, column))};
}

int64_t PgResult::affected() const {
  const char* text = PQcmdTuples(result_.get());
  int64_t value = 0;
  std::from_chars(text, text + std::strlen(text), value);
  return value;
}

Status PgError(const PGconn* conn, const PGresult* result, std::string_view what) {
  std::string message = result ? PQresultErrorMessage(result) : PQerrorMessage(conn);
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  const char* state_text = result ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  std::string_view state = state_text ? state_text : "";
  std::string text = std::string(what) + ": " + message;
  if (state == "23505") return Status::Conflict(text);
  // 22P05 untranslatable character (\u0000 in JSON), 22021 bad byte sequence, 22003 number out
  // of range, 54000 a program limit (a value too large to index).
  if (state == "22P05" || state == "22021" || state == "22003" || state == "54000") {
    return Status::InvalidArgument(text);
  }
  // Class 08: the connection; 57P0x: the server shutting down or starting; 57014: the statement
  // ran past statement_timeout.
  bool lost = conn != nullptr && PQstatus(conn) != CONNECTION_OK;
  if (lost || state.starts_with("08") || state.starts_with("57P0") || state == "57014") {
    return Status::Unavailable("PostgreSQL: " + text);
  }
  return Status::Internal(text);
}

Result<std::unique_ptr<PgConnection>> PgConnection::Open(const std::string& uri, int64_t statement_timeout_ms,
                                                          int dead_server_ms) {
  // Bounds on a peer that stops answering (a host gone from the network sends no reset), instead
  // of the kernel's 15 minutes and the server's hours: the connect gives up after 10 s, an open
  // connection is found dead after about `dead_server_ms` (keepalives; unacknowledged data), and
  // the server drops a silent client after about 30 s (the session settings below). A lease
  // holder's connection uses less than that, so a holder cut off from the database exits before
  // the server hands its lease to another process.
  const std::string user_timeout = std::to_string(dead_server_ms);
  const std::string idle = std::to_string(std::max(1, dead_server_ms / 3000));
  const std::string interval = std::to_string(std::max(1, dead_server_ms / 6000));
  const char* keywords[] = {"connect_timeout",  "keepalives",       "keepalives_idle", "keepalives_interval",
                            "keepalives_count", "tcp_user_timeout", "dbname",          nullptr};
  const char* values[] = {"10", "1", idle.c_str(), interval.c_str(), "3", user_timeout.c_str(), uri.c_str(), nullptr};
  PGconn* conn = PQconnectdbParams(keywords, values, /*expand_dbname=*/1);
  if (PQstatus(conn) != CONNECTION_OK) {
    Status status = Status::Unavailable("PostgreSQL: cannot connect: " + std::string(PQerrorMessage(conn)));
    PQfinish(conn);
    return status;
  }
  std::unique_ptr<PgConnection> connection(new PgConnection(conn));
  std::string setup = "SET TIME ZONE 'UTC'; SET client_min_messages = warning; "
                      "SET default_transaction_isolation = 'read committed'; "
                      "SET tcp_keepalives_idle = 10; SET tcp_keepalives_interval = 5; SET tcp_keepalives_count = 3; "
                      "SET tcp_user_timeout = " + std::to_string(kServerDropsSilentClientMs);
  if (statement_timeout_ms > 0) setup += "; SET statement_timeout = " + std::to_string(statement_timeout_ms);
  CAIRN_RETURN_IF_ERROR(connection->Exec(setup));
  return connection;
}

PgConnection::~PgConnection() { PQfinish(conn_); }

Status PgConnection::Exec(const std::string& sql) {
  PgResult result(PQexec(conn_, sql.c_str()));
  // PQexec returns the last statement's result; an error stops at the failing one.
  ExecStatusType status = PQresultStatus(result.raw());
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY) return Status::Ok();
  return PgError(conn_, result.raw(), "PostgreSQL");
}

namespace {

// libpq's text format cannot carry a NUL byte: refused rather than stored cut.
Status RefuseNul(const PgParams& params) {
  if (!params.nul_value()) return Status::Ok();
  return Status::InvalidArgument("text with a NUL character cannot be stored (value " +
                                 std::to_string(*params.nul_value() + 1) + " of the statement)");
}

}  // namespace

Result<PgResult> PgConnection::Checked(PgResult result) const {
  ExecStatusType status = PQresultStatus(result.raw());
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return result;
  return PgError(conn_, result.raw(), "PostgreSQL");
}

Result<PgResult> PgConnection::Query(const std::string& sql, const PgParams& params) {
  CAIRN_RETURN_IF_ERROR(RefuseNul(params));
  auto found = prepared_.find(sql);
  if (found == prepared_.end()) {
    std::string name = "s" + std::to_string(prepared_.size() + 1);
    PgResult prepared(PQprepare(conn_, name.c_str(), sql.c_str(), 0, nullptr));
    if (PQresultStatus(prepared.raw()) != PGRES_COMMAND_OK) return PgError(conn_, prepared.raw(), "PostgreSQL");
    found = prepared_.emplace(sql, std::move(name)).first;
  }
  PgResult result(PQexecPrepared(conn_, found->second.c_str(), static_cast<int>(params.size()), params.data(), nullptr,
                                 nullptr, 0));
  return Checked(std::move(result));
}

Result<PgResult> PgConnection::QueryOnce(const std::string& sql, const PgParams& params) {
  CAIRN_RETURN_IF_ERROR(RefuseNul(params));
  PgResult result(PQexecParams(conn_, sql.c_str(), static_cast<int>(params.size()), nullptr, params.data(), nullptr,
                               nullptr, 0));
  return Checked(std::move(result));
}

Status PgConnection::Run(const std::string& sql, const PgParams& params) { return Query(sql, params).status(); }

Result<std::unique_ptr<PgConnection>> PgConnection::OpenForLocks(const std::string& uri) {
  return Open(uri, 0, kServerDropsSilentClientMs / 3);
}

Result<bool> PgConnection::TryAdvisoryLock(int64_t key, bool shared) {
  PgParams params;
  std::string function = shared ? "pg_try_advisory_lock_shared(" : "pg_try_advisory_lock(";
  CAIRN_ASSIGN_OR_RETURN(PgResult row, Query("SELECT " + function + params.Add(key) + "::bigint)", params));
  return row.Row(0).Text(0) == "t";
}

}  // namespace cairn::store::postgres
