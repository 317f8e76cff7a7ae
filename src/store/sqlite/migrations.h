// Versioned schema migrations, applied in order at start-up, each in its own transaction.
// A database written by a newer cairn (a version this binary does not know) is refused.
#pragma once

#include "base/status.h"
#include "store/sqlite/connection.h"

namespace cairn::store::sqlite {

// The schema version this binary writes.
int LatestSchemaVersion();

// Brings the database on `conn` up to LatestSchemaVersion().
Status RunMigrations(Connection& conn);

}  // namespace cairn::store::sqlite
