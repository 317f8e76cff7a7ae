#include "store/sqlite/connection.h"

#include <mutex>

namespace cairn::store::sqlite {
namespace {

// Process-wide SQLite settings, applied once before the library initialises. Memory statistics
// are off: with them on, every allocation of every connection takes one global mutex, and the
// writer contended with the readers for it (seen in profiles of POST /breadcrumbs). cairn reads
// none of those statistics. A library already initialised by someone else keeps its settings.
void ConfigureSqliteOnce() {
  static std::once_flag once;
  std::call_once(once, [] { (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); });
}

// Lookaside slots per connection (of 1,200 bytes): SQLite serves its small, short-lived
// allocations from them without malloc. The default (40 + 300 small) runs out during a write
// batch, whose statements, FTS5 buffers and JSON functions then hit malloc and its arena locks.
constexpr int kLookasideSlotBytes = 1200;
constexpr int kLookasideSlots = 500;

}  // namespace

Status SqliteError(sqlite3* db, int rc, std::string_view what) {
  std::string message = std::string(what) + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
  if ((rc & 0xFF) == SQLITE_CONSTRAINT) return Status::Conflict(message);
  if ((rc & 0xFF) == SQLITE_FULL) return Status::InsufficientStorage(message);
  if ((rc & 0xFF) == SQLITE_BUSY) return Status::Unavailable(message);
  return Status::Internal(message);
}

Statement::~Statement() { Reset(); }

void Statement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

Statement& Statement::Bind(int index, std::nullptr_t) {
  sqlite3_bind_null(stmt_, index);
  return *this;
}
Statement& Statement::Bind(int index, int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
  return *this;
}
Statement& Statement::Bind(int index, double value) {
  sqlite3_bind_double(stmt_, index, value);
  return *this;
}
Statement& Statement::Bind(int index, std::string_view text) {
  sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  return *this;
}
Statement& Statement::Bind(int index, const std::optional<std::string>& text) {
  return text ? Bind(index, std::string_view(*text)) : Bind(index, nullptr);
}
Statement& Statement::Bind(int index, const std::optional<int64_t>& value) {
  return value ? Bind(index, *value) : Bind(index, nullptr);
}
Statement& Statement::BindValue(int index, const SqlValue& value) {
  std::visit([&](const auto& v) {
    using T = std::decay_t<decltype(v)>;
    if constexpr (std::is_same_v<T, std::string>) {
      Bind(index, std::string_view(v));
    } else {
      Bind(index, v);
    }
  }, value);
  return *this;
}

Result<bool> Statement::Step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqliteError(sqlite3_db_handle(stmt_), rc, "step");
}

Status Statement::Run() {
  auto stepped = Step();
  return stepped.ok() ? Status::Ok() : stepped.status();
}

Statement& Statement::BindBlob(int index, std::string_view bytes) {
  sqlite3_bind_blob(stmt_, index, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
  return *this;
}

std::string_view Statement::Blob(int column) const {
  const auto* bytes = static_cast<const char*>(sqlite3_column_blob(stmt_, column));
  if (!bytes) return {};
  return {bytes, static_cast<size_t>(sqlite3_column_bytes(stmt_, column))};
}

std::string_view Statement::Text(int column) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  if (!text) return {};
  return {text, static_cast<size_t>(sqlite3_column_bytes(stmt_, column))};
}

Result<std::unique_ptr<Connection>> Connection::Open(const std::string& path, const std::string& synchronous) {
  ConfigureSqliteOnce();
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                           nullptr);
  if (rc != SQLITE_OK) {
    Status status = SqliteError(db, rc, "open " + path);
    sqlite3_close(db);
    return status;
  }
  std::unique_ptr<Connection> conn(new Connection(db));
  sqlite3_busy_timeout(db, 10000);
  (void)sqlite3_db_config(db, SQLITE_DBCONFIG_LOOKASIDE, nullptr, kLookasideSlotBytes, kLookasideSlots);
  CAIRN_RETURN_IF_ERROR(conn->Exec("PRAGMA journal_mode=WAL"));
  CAIRN_RETURN_IF_ERROR(conn->Exec("PRAGMA synchronous=" + std::string(synchronous == "normal" ? "NORMAL" : "FULL")));
  CAIRN_RETURN_IF_ERROR(conn->Exec("PRAGMA foreign_keys=OFF"));
  CAIRN_RETURN_IF_ERROR(conn->Exec("PRAGMA temp_store=MEMORY"));
  return conn;
}

Connection::~Connection() {
  for (auto& [sql, stmt] : cache_) sqlite3_finalize(stmt);
  sqlite3_close_v2(db_);
}

Status Connection::Exec(std::string_view sql) {
  char* error = nullptr;
  int rc = sqlite3_exec(db_, std::string(sql).c_str(), nullptr, nullptr, &error);
  if (rc != SQLITE_OK) {
    std::string message = error ? error : sqlite3_errstr(rc);
    sqlite3_free(error);
    return SqliteError(nullptr, rc, std::string(sql.substr(0, 40)) + ": " + message);
  }
  return Status::Ok();
}

Status Connection::ExecCached(const std::string& sql) {
  CAIRN_ASSIGN_OR_RETURN(auto stmt, Prepare(sql));
  return stmt->Run();
}

Result<std::unique_ptr<Statement>> Connection::Prepare(const std::string& sql) {
  auto it = cache_.find(sql);
  if (it == cache_.end()) {
    if (cache_.size() >= 512) {  // dynamic list queries vary; keep the cache bounded
      for (auto& [text, stmt] : cache_) sqlite3_finalize(stmt);
      cache_.clear();
    }
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v3(db_, sql.c_str(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &stmt,
                                nullptr);
    if (rc != SQLITE_OK) return SqliteError(db_, rc, "prepare");
    it = cache_.emplace(sql, stmt).first;
  }
  return std::make_unique<Statement>(it->second);
}

}  // namespace cairn::store::sqlite
