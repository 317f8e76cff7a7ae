// The PostgreSQL schema, as an append-only list of migrations (never edit one that has shipped;
// add a new one). Several processes may start at once on one database: RunPgMigrations holds a
// session advisory lock while it migrates, so exactly one applies each migration.
#pragma once

#include "base/status.h"
#include "store/postgres/pg_connection.h"

namespace cairn::store::postgres {

int LatestPgSchemaVersion();

// Applies every migration newer than the database's version, each in its own transaction.
// A database newer than this binary is kInternal ("upgrade cairn").
Status RunPgMigrations(PgConnection& conn);

}  // namespace cairn::store::postgres
