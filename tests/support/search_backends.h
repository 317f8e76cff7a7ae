// SearchBackends: the search halves of the store (store/text_index.h, store/vector_store.h) on
// each backend, for the tests that run against both: SQLite, where one SqliteStore is the Store,
// the TextIndex and the VectorStore; PostgreSQL, where a PgStore writes the records and a
// PgTextIndex and a PgVectorStore read the same PgDatabase (a fresh database per fixture).
//
//   class MyTest : public ::testing::TestWithParam<test_support::SearchBackend> {
//     void SetUp() override { ASSERT_TRUE(backends_.Open(GetParam(), clock_)); }
//     ManualClock clock_{...};
//     test_support::SearchBackends backends_{"cairn-my-test"};
//   };
//   INSTANTIATE_TEST_SUITE_P(Backends, MyTest, test_support::kSearchBackends, test_support::SearchBackendName);
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <memory>
#include <ostream>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "store/postgres/pg_store.h"
#include "store/postgres/pg_text_index.h"
#include "store/postgres/pg_vectors.h"
#include "support/pg_database.h"
#include "support/sqlite_store.h"

namespace cairn::test_support {

enum class SearchBackend { kSqlite, kPostgres };

inline const auto kSearchBackends = ::testing::Values(SearchBackend::kSqlite, SearchBackend::kPostgres);

inline void PrintTo(SearchBackend backend, std::ostream* out) {
  *out << (backend == SearchBackend::kSqlite ? "Sqlite" : "Postgres");
}

inline std::string SearchBackendName(const ::testing::TestParamInfo<SearchBackend>& info) {
  return info.param == SearchBackend::kSqlite ? "Sqlite" : "Postgres";
}

class SearchBackends {
 public:
  explicit SearchBackends(std::string_view prefix) : sqlite_(prefix) {}
  ~SearchBackends() { Close(); }
  SearchBackends(const SearchBackends&) = delete;
  SearchBackends& operator=(const SearchBackends&) = delete;

  // Opens `backend` on fresh data; `clock` must outlive the fixture. `tune` applies to SQLite only.
  ::testing::AssertionResult Open(SearchBackend backend, const Clock& clock, SqliteTuning tune = {}) {
    backend_ = backend;
    clock_ = &clock;
    if (backend == SearchBackend::kSqlite) return sqlite_.Open(clock, nullptr, std::move(tune));
    return Attach(OpenFreshPgDatabase(nullptr, &pg_uri_));
  }

  // Closes and opens the same data again (a restart of the process).
  ::testing::AssertionResult Reopen() {
    if (backend_ == SearchBackend::kSqlite) return sqlite_.Reopen();
    Close();
    return Attach(OpenPgDatabase(pg_uri_));
  }

  void Close() {
    sqlite_.Close();
    if (pg_store_) pg_store_->Close();
    pg_text_.reset();
    pg_vectors_.reset();
    pg_store_.reset();
    pg_db_.reset();
  }

  SearchBackend backend() const { return backend_; }
  bool postgres() const { return backend_ == SearchBackend::kPostgres; }
  store::Store& store() const { return postgres() ? static_cast<store::Store&>(*pg_store_) : *sqlite_; }
  store::CursorStore& cursors() const { return postgres() ? static_cast<store::CursorStore&>(*pg_store_) : *sqlite_; }
  store::TextIndex& text() const { return postgres() ? static_cast<store::TextIndex&>(*pg_text_) : *sqlite_; }
  store::VectorStore& vectors() const {
    return postgres() ? static_cast<store::VectorStore&>(*pg_vectors_) : *sqlite_;
  }
  // The SQLite store itself (kSqlite), for the tests of its own mechanisms.
  TempSqliteStore& sqlite() { return sqlite_; }

  // Runs `sql` (any statements) on the backend's database outside the store: for SQLite, on its
  // file (close the fixture first), for PostgreSQL, on a connection of the open database.
  ::testing::AssertionResult Execute(const std::string& sql) {
    if (postgres()) {
      Status done = pg_db_->WithReader([&](store::postgres::PgConnection& conn) { return conn.Exec(sql); });
      if (!done.ok()) return ::testing::AssertionFailure() << done.ToString();
      return ::testing::AssertionSuccess();
    }
    sqlite3* db = nullptr;
    int code = sqlite3_open((sqlite_.dir() + "/cairn.db").c_str(), &db);
    if (code == SQLITE_OK) code = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);
    std::string message = sqlite3_errmsg(db);
    sqlite3_close(db);
    if (code != SQLITE_OK) return ::testing::AssertionFailure() << message;
    return ::testing::AssertionSuccess();
  }

  // The one integer `sql` selects, read outside the store (what the tables really hold); -1 when
  // it cannot be read.
  int64_t Number(const std::string& sql) {
    int64_t number = -1;
    if (postgres()) {
      Status read = pg_db_->WithReader([&](store::postgres::PgConnection& conn) -> Status {
        CAIRN_ASSIGN_OR_RETURN(store::postgres::PgResult rows, conn.QueryOnce(sql, {}));
        if (rows.rows() == 1) number = rows.Row(0).Int(0);
        return Status::Ok();
      });
      EXPECT_TRUE(read.ok()) << read.ToString();
      return number;
    }
    sqlite3* db = nullptr;
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_open_v2((sqlite_.dir() + "/cairn.db").c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK &&
        sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW) {
      number = sqlite3_column_int64(stmt, 0);
    }
    EXPECT_NE(number, -1) << sql << ": " << sqlite3_errmsg(db);
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return number;
  }

 private:
  ::testing::AssertionResult Attach(Result<std::shared_ptr<store::postgres::PgDatabase>> db) {
    if (!db.ok()) return ::testing::AssertionFailure() << db.status().ToString();
    pg_db_ = *db;
    pg_store_ = std::make_unique<store::postgres::PgStore>(pg_db_, store::postgres::PgStoreOptions{}, *clock_);
    pg_text_ = std::make_unique<store::postgres::PgTextIndex>(pg_db_, *clock_);
    pg_vectors_ = std::make_unique<store::postgres::PgVectorStore>(pg_db_, *clock_);
    return ::testing::AssertionSuccess();
  }

  SearchBackend backend_ = SearchBackend::kSqlite;
  const Clock* clock_ = nullptr;
  TempSqliteStore sqlite_;
  std::string pg_uri_;
  std::shared_ptr<store::postgres::PgDatabase> pg_db_;
  std::unique_ptr<store::postgres::PgStore> pg_store_;
  std::unique_ptr<store::postgres::PgTextIndex> pg_text_;
  std::unique_ptr<store::postgres::PgVectorStore> pg_vectors_;
};

}  // namespace cairn::test_support
