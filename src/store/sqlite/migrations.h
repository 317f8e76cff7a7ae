// Versioned schema migrations, applied in order at start-up, each in its own transaction.
// A database written by a newer cairn (a version this binary does not know) is refused.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "store/sqlite/connection.h"

namespace cairn::store::sqlite {

// The schema version this binary writes.
int LatestSchemaVersion();

// The statements that index the records noted in breadcrumbs_fts_pending and clear it: run by
// the writer in every write transaction just before COMMIT (migration 6), when the query
// FullTextPendingQuery() finds a noted record.
const std::vector<std::string>& FullTextPendingStatements();
const std::string& FullTextPendingQuery();

// Brings the database on `conn` up to LatestSchemaVersion().
Status RunMigrations(Connection& conn);

}  // namespace cairn::store::sqlite
