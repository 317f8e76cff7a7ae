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

// The statements that index the records noted in breadcrumbs_fts_pending (migration 6) and clear
// it, in the transaction that runs them.
const std::vector<std::string>& FullTextPendingStatements();
// A query that returns a row when at least one record is noted for indexing.
const std::string& FullTextPendingQuery();
// A query that returns a row when at least `rows` (≥ 1) records are noted for indexing.
std::string FullTextDueQuery(size_t rows);

// Brings the database on `conn` up to LatestSchemaVersion().
Status RunMigrations(Connection& conn);

}  // namespace cairn::store::sqlite
