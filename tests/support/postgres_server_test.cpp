#include "support/postgres_server.h"

#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace cairn::test_support {
namespace {

using Connection = std::unique_ptr<PGconn, decltype(&PQfinish)>;

Connection Connect(const std::string& uri) { return {PQconnectdb(uri.c_str()), &PQfinish}; }

// The first column of the first row of `sql`: "<null>" for SQL NULL, "" for a statement without
// rows, "error: ..." when it fails (so that a comparison shows why).
std::string Scalar(PGconn* conn, const std::string& sql) {
  std::unique_ptr<PGresult, decltype(&PQclear)> result(PQexec(conn, sql.c_str()), &PQclear);
  const ExecStatusType status = PQresultStatus(result.get());
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    return std::string("error: ") + PQerrorMessage(conn);
  }
  if (PQntuples(result.get()) == 0) return "";
  if (PQgetisnull(result.get(), 0, 0)) return "<null>";
  return PQgetvalue(result.get(), 0, 0);
}

::testing::AssertionResult Runs(PGconn* conn, const std::string& sql) {
  std::string out = Scalar(conn, sql);
  if (out.starts_with("error: ")) return ::testing::AssertionFailure() << sql << ": " << out;
  return ::testing::AssertionSuccess();
}

class PostgresServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    server_ = PostgresServer::Shared(&why);
    ASSERT_NE(server_, nullptr) << why;
  }

  // A connection to a new database of this test.
  Connection NewDatabase(std::string* uri_out = nullptr) {
    Result<std::string> uri = server_->CreateDatabase();
    EXPECT_TRUE(uri.ok()) << uri.status().ToString();
    if (!uri.ok()) return {nullptr, &PQfinish};
    if (uri_out != nullptr) *uri_out = *uri;
    Connection conn = Connect(*uri);
    EXPECT_EQ(PQstatus(conn.get()), CONNECTION_OK) << PQerrorMessage(conn.get());
    return conn;
  }

  PostgresServer* server_ = nullptr;
};

TEST_F(PostgresServerTest, AdminUriReachesThePostgresDatabaseOverTheSocketOnly) {
  Connection admin = Connect(server_->AdminUri());
  ASSERT_EQ(PQstatus(admin.get()), CONNECTION_OK) << PQerrorMessage(admin.get());
  EXPECT_EQ(Scalar(admin.get(), "SELECT current_database()"), "postgres");
  EXPECT_EQ(Scalar(admin.get(), "SHOW listen_addresses"), "");  // no TCP port
  EXPECT_EQ(Scalar(admin.get(), "SHOW fsync"), "off");
  EXPECT_EQ(Scalar(admin.get(), "SHOW server_encoding"), "UTF8");
  EXPECT_EQ(Scalar(admin.get(), "SELECT current_setting('server_version_num')::int / 10000"), "15");
}

TEST_F(PostgresServerTest, DatabasesAreDistinctAndEachTakesWrites) {
  std::string uri_a, uri_b;
  Connection a = NewDatabase(&uri_a);
  Connection b = NewDatabase(&uri_b);
  ASSERT_TRUE(a && b);
  EXPECT_NE(uri_a, uri_b);
  EXPECT_NE(Scalar(a.get(), "SELECT current_database()"), Scalar(b.get(), "SELECT current_database()"));

  for (auto [conn, text] : {std::pair{a.get(), "in a"}, std::pair{b.get(), "in b"}}) {
    ASSERT_TRUE(Runs(conn, "CREATE TABLE notes (id int PRIMARY KEY, text text NOT NULL)"));
    ASSERT_TRUE(Runs(conn, std::string("INSERT INTO notes VALUES (1, '") + text + "')"));
  }
  EXPECT_EQ(Scalar(a.get(), "SELECT text FROM notes WHERE id = 1"), "in a");
  EXPECT_EQ(Scalar(b.get(), "SELECT text FROM notes WHERE id = 1"), "in b");

  ASSERT_TRUE(Runs(a.get(), "CREATE TABLE only_in_a (id int)"));
  EXPECT_EQ(Scalar(a.get(), "SELECT to_regclass('only_in_a')::text"), "only_in_a");
  EXPECT_EQ(Scalar(b.get(), "SELECT to_regclass('only_in_a')::text"), "<null>");
  EXPECT_FALSE(Runs(b.get(), "SELECT count(*) FROM only_in_a"));
}

TEST_F(PostgresServerTest, CreateDatabaseFromManyThreadsGivesDistinctDatabases) {
  constexpr int kThreads = 4, kEach = 2;
  std::vector<std::vector<Result<std::string>>> made(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([this, &mine = made[t]] {
      for (int i = 0; i < kEach; ++i) mine.push_back(server_->CreateDatabase());
    });
  }
  for (auto& thread : threads) thread.join();
  std::set<std::string> uris;
  for (const auto& mine : made) {
    for (const auto& uri : mine) {
      ASSERT_TRUE(uri.ok()) << uri.status().ToString();
      uris.insert(*uri);
    }
  }
  EXPECT_EQ(uris.size(), size_t{kThreads * kEach});
}

TEST_F(PostgresServerTest, RestartKeepsTheDataAndTakesNewConnections) {
  std::string uri;
  Connection before = NewDatabase(&uri);
  ASSERT_TRUE(before);
  ASSERT_TRUE(Runs(before.get(), "CREATE TABLE notes (id int PRIMARY KEY, text text NOT NULL)"));
  ASSERT_TRUE(Runs(before.get(), "INSERT INTO notes VALUES (1, 'kept')"));

  Status restarted = server_->Restart();
  ASSERT_TRUE(restarted.ok()) << restarted.ToString();

  // The old connection went with the old server; a new one sees the data and writes.
  EXPECT_FALSE(Runs(before.get(), "SELECT 1"));
  Connection after = Connect(uri);
  ASSERT_EQ(PQstatus(after.get()), CONNECTION_OK) << PQerrorMessage(after.get());
  EXPECT_EQ(Scalar(after.get(), "SELECT text FROM notes WHERE id = 1"), "kept");
  ASSERT_TRUE(Runs(after.get(), "INSERT INTO notes VALUES (2, 'new')"));
  EXPECT_EQ(Scalar(after.get(), "SELECT count(*) FROM notes"), "2");
  Result<std::string> another = server_->CreateDatabase();
  EXPECT_TRUE(another.ok()) << another.status().ToString();
}

}  // namespace
}  // namespace cairn::test_support
