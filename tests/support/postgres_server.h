// PostgresServer: a real, throwaway PostgreSQL 15 server for the tests of the PostgreSQL backend.
//
//   std::string why;
//   PostgresServer* server = PostgresServer::Shared(&why);
//   ASSERT_NE(server, nullptr) << why;          // a server that cannot start fails the test
//   Result<std::string> uri = server->CreateDatabase();  // an empty database of this test alone
//   ASSERT_TRUE(uri.ok()) << uri.status().ToString();
//   PGconn* conn = PQconnectdb(uri->c_str());
//
// initdb in a temporary directory, listening only on a Unix socket in that directory (no TCP port),
// fsync off. Started once per test process on first use and stopped (pg_ctl stop -m immediate,
// directory removed) at process exit. Every test process has its own directory and socket, so
// processes running at once (ctest -j) never meet, although all use port number 5432.
//
// PostgreSQL refuses to run as root: when the process is root, initdb/pg_ctl run as the
// unprivileged user `nobody` via `runuser -u nobody --`, and the directory is chowned to it.
//
// A test process that dies without running its exit handlers (a crash, ctest's timeout) leaves its
// server behind: the directory names its owner's pid, and the next process that starts a server
// stops the servers of owners that are gone and removes their directories. CAIRN_TEST_KEEP=1 keeps
// the directory (the server's log is `log` in it) after the server stops.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <shared_mutex>
#include <string>
#include <string_view>

#include "base/status.h"

namespace cairn::test_support {

class PostgresServer {
 public:
  // The process's server, started on first call. Returns null (and sets *why) when it cannot start
  // (binaries missing, initdb failed): callers fail their test with that reason (never skip silently).
  static PostgresServer* Shared(std::string* why);
  // Creates a new empty database with a unique name and returns a libpq connection URI for it,
  // e.g. "postgresql:///cairn_test_3?host=/tmp/cairn-pg-XXXX&port=5432&user=nobody". Thread-safe.
  Result<std::string> CreateDatabase();
  // The URI of the server's `postgres` database (for admin statements).
  std::string AdminUri() const;
  // Stops the server (pg_ctl stop -m fast) and starts it again on the same data, for tests of
  // reconnecting: blocks until the server accepts connections again. Connections open before it
  // are broken. CreateDatabase calls made meanwhile wait for it.
  Status Restart();

  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

 private:
  struct Owner;  // what Shared keeps: the server or why it could not start; stops it at exit

  PostgresServer(std::string bin_dir, std::string dir, std::string user, bool as_nobody);
  ~PostgresServer();  // pg_ctl stop -m immediate, the directory removed

  static Result<PostgresServer*> Launch();
  Status InitDb();
  Status Start();
  Status Stop(std::string_view mode);
  std::string UriFor(std::string_view database) const;
  std::string DataDir() const { return dir_ + "/data"; }

  const std::string bin_dir_;  // initdb, pg_ctl
  const std::string dir_;      // /tmp/cairn-pg-XXXXXX: the socket, `log`, `owner`, `data/`
  const std::string user_;     // the OS user running the server, also its superuser role
  const bool as_nobody_;       // root: every program runs through `runuser -u nobody --`
  const pid_t creator_;        // a forked child exiting must not stop its parent's server
  std::atomic<int> databases_{0};
  std::shared_mutex restarting_;  // CreateDatabase shares it; Restart holds it alone
};

}  // namespace cairn::test_support
