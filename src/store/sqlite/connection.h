// A thin RAII layer over one sqlite3 connection: statements are prepared once and cached, and
// every SQLite error becomes a Status. A connection is used by one thread at a time.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "base/status.h"
#include "model/event.h"
#include "store/stored_row.h"

namespace cairn::store::sqlite {

using SqlValue = std::variant<std::nullptr_t, int64_t, double, std::string>;

// A prepared statement borrowed from a connection's cache. Reset and cleared when it goes out of
// scope, so the next borrower starts clean.
class Statement final : public StoredRow {
 public:
  explicit Statement(sqlite3_stmt* stmt) : stmt_(stmt) {}
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement() override;

  // Binds by 1-based index.
  Statement& Bind(int index, std::nullptr_t);
  Statement& Bind(int index, int64_t value);
  Statement& Bind(int index, double value);
  Statement& Bind(int index, std::string_view text);
  Statement& Bind(int index, const std::optional<std::string>& text);
  Statement& Bind(int index, const std::optional<int64_t>& value);
  Statement& BindValue(int index, const SqlValue& value);
  // Binds bytes as a BLOB (copied).
  Statement& BindBlob(int index, std::string_view bytes);

  // Advances: true with a row ready, false when done. Constraint failures are kConflict.
  Result<bool> Step();
  // Steps a statement that returns no rows.
  Status Run();
  // Makes the statement ready to bind and run again (for loops).
  void Reset();

  int64_t Int(int column) const override { return sqlite3_column_int64(stmt_, column); }
  double Double(int column) const { return sqlite3_column_double(stmt_, column); }
  bool IsNull(int column) const override { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
  std::string_view Text(int column) const override;
  // A BLOB column's bytes, valid until the next Step or Reset.
  std::string_view Blob(int column) const;

 private:
  sqlite3_stmt* stmt_;
};

class Connection {
 public:
  // Opens (creating if needed) the database at `path` and applies WAL, foreign keys off, a busy
  // timeout and `synchronous` ("full" or "normal").
  static Result<std::unique_ptr<Connection>> Open(const std::string& path, const std::string& synchronous);
  ~Connection();

  Status Exec(std::string_view sql);
  // Runs one statement that returns no rows through the statement cache: for the few statements
  // run on every write (BEGIN, SAVEPOINT, COMMIT), which Exec() would parse each time.
  Status ExecCached(const std::string& sql);
  // A cached prepared statement for `sql`.
  Result<std::unique_ptr<Statement>> Prepare(const std::string& sql);
  int64_t LastInsertRowId() const { return sqlite3_last_insert_rowid(db_); }
  sqlite3* raw() const { return db_; }

  // The events the current write transaction appended (event_rows.h), in seq order: the writer
  // hands them to the commit listener once they are committed, so the bus need not read back
  // from the log what was just written. Writes that roll back drop theirs.
  std::vector<model::Event>& staged_events() { return staged_events_; }

 private:
  explicit Connection(sqlite3* db) : db_(db) {}
  sqlite3* db_;
  std::unordered_map<std::string, sqlite3_stmt*> cache_;
  std::vector<model::Event> staged_events_;
};

// Holds a read transaction for its lifetime, so several statements see one snapshot (WAL).
class ReadTransaction {
 public:
  explicit ReadTransaction(Connection& conn) : conn_(conn) { began_ = conn_.Exec("BEGIN").ok(); }
  ~ReadTransaction() {
    if (began_) (void)conn_.Exec("COMMIT");
  }
  ReadTransaction(const ReadTransaction&) = delete;
  ReadTransaction& operator=(const ReadTransaction&) = delete;

 private:
  Connection& conn_;
  bool began_ = false;
};

// The SQLite error of `db` as a Status (constraint failures are kConflict).
Status SqliteError(sqlite3* db, int rc, std::string_view what);

}  // namespace cairn::store::sqlite
