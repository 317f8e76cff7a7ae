// A PgDatabase on a fresh database of the process's PostgresServer, the fixture of the tests that
// run the PostgreSQL halves of the store (support/postgres_server.h).
//
//   std::string uri;
//   auto db = test_support::OpenFreshPgDatabase(&metrics_, &uri);
//   ASSERT_TRUE(db.ok()) << db.status().ToString();
//   store::postgres::PgStore store(*db, {}, clock_);
#pragma once

#include <memory>
#include <string>

#include "base/metrics.h"
#include "base/status.h"
#include "store/postgres/pg_database.h"

namespace cairn::test_support {

// Creates a database (its URI in `*uri` when given) and opens it. Fails with the reason when the
// server cannot start.
Result<std::shared_ptr<store::postgres::PgDatabase>> OpenFreshPgDatabase(MetricsRegistry* metrics = nullptr,
                                                                         std::string* uri = nullptr);

// Opens the database at `uri` again (a restart of the process that uses it).
Result<std::shared_ptr<store::postgres::PgDatabase>> OpenPgDatabase(const std::string& uri,
                                                                    MetricsRegistry* metrics = nullptr);

}  // namespace cairn::test_support
