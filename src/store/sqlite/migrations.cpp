#include "store/sqlite/migrations.h"

#include <string>
#include <vector>

#include "base/log.h"

namespace cairn::store::sqlite {
namespace {

// Append only: never edit a migration that has shipped; add a new one.
const std::vector<std::string>& Migrations() {
  static const std::vector<std::string> kMigrations = {
      // 1: breadcrumbs, their tags and superseded versions, the event log, idempotency keys.
      R"sql(
CREATE TABLE breadcrumbs (
  rid INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  owner_id TEXT NOT NULL,
  schema_name TEXT,
  title TEXT NOT NULL,
  description TEXT,
  tags TEXT NOT NULL,
  context TEXT NOT NULL,
  path TEXT,
  llm_hints TEXT,
  version INTEGER NOT NULL,
  checksum TEXT NOT NULL,
  visibility TEXT NOT NULL,
  sensitivity TEXT NOT NULL,
  expires_at INTEGER,
  created_by TEXT NOT NULL,
  updated_by TEXT NOT NULL,
  trace_id TEXT NOT NULL,
  caused_by TEXT,
  depth INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  size_bytes INTEGER NOT NULL
);
CREATE INDEX breadcrumbs_owner_rid ON breadcrumbs(owner_id, rid);
CREATE INDEX breadcrumbs_owner_schema ON breadcrumbs(owner_id, schema_name, rid);
CREATE UNIQUE INDEX breadcrumbs_owner_path ON breadcrumbs(owner_id, path) WHERE path IS NOT NULL;
CREATE INDEX breadcrumbs_expiry ON breadcrumbs(expires_at) WHERE expires_at IS NOT NULL;
CREATE TABLE breadcrumb_tags (
  tag TEXT NOT NULL,
  rid INTEGER NOT NULL,
  PRIMARY KEY (tag, rid)
) WITHOUT ROWID;
CREATE TABLE breadcrumb_versions (
  rid INTEGER NOT NULL,
  version INTEGER NOT NULL,
  title TEXT NOT NULL,
  tags TEXT NOT NULL,
  context TEXT NOT NULL,
  checksum TEXT NOT NULL,
  updated_by TEXT NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (rid, version)
) WITHOUT ROWID;
CREATE TABLE events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  type TEXT NOT NULL,
  breadcrumb_id TEXT NOT NULL,
  version INTEGER NOT NULL,
  schema_name TEXT,
  title TEXT NOT NULL,
  tags TEXT NOT NULL,
  path TEXT,
  owner_id TEXT NOT NULL,
  created_by TEXT NOT NULL,
  trace_id TEXT NOT NULL,
  caused_by TEXT,
  depth INTEGER NOT NULL,
  at INTEGER NOT NULL,
  context TEXT
);
CREATE TABLE idempotency_keys (
  owner_id TEXT NOT NULL,
  key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  breadcrumb_id TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (owner_id, key)
) WITHOUT ROWID;
CREATE INDEX idempotency_keys_age ON idempotency_keys(created_at);
)sql",
      // 2: webhooks (each with its delivery cursor) and the dead letters of failed deliveries.
      R"sql(
CREATE TABLE webhooks (
  id TEXT PRIMARY KEY,
  owner_id TEXT NOT NULL,
  url TEXT NOT NULL,
  selector TEXT NOT NULL,
  secret TEXT,
  active INTEGER NOT NULL,
  cursor INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX webhooks_owner ON webhooks(owner_id, id);
CREATE TABLE webhook_dead_letters (
  id TEXT PRIMARY KEY,
  webhook_id TEXT NOT NULL,
  owner_id TEXT NOT NULL,
  event_seq INTEGER NOT NULL,
  payload TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  last_status INTEGER,
  last_error TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX webhook_dead_letters_owner ON webhook_dead_letters(owner_id, id);
CREATE INDEX webhook_dead_letters_webhook ON webhook_dead_letters(webhook_id, id);
)sql",
      // 3: the durable positions of event-log consumers (executors) and their claimed triggers.
      R"sql(
CREATE TABLE consumer_cursors (
  consumer TEXT PRIMARY KEY,
  seq INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE executor_claims (
  consumer TEXT NOT NULL,
  trigger_key TEXT NOT NULL,
  trigger_id TEXT NOT NULL,
  owner_id TEXT NOT NULL,
  trigger_seq INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  claimed_at INTEGER NOT NULL,
  PRIMARY KEY (consumer, trigger_key)
) WITHOUT ROWID;
)sql",
  };
  return kMigrations;
}

Result<int> CurrentVersion(Connection& conn) {
  CAIRN_RETURN_IF_ERROR(conn.Exec(
      "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)"));
  CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare("SELECT COALESCE(MAX(version), 0) FROM schema_migrations"));
  CAIRN_ASSIGN_OR_RETURN(bool row, stmt->Step());
  return row ? static_cast<int>(stmt->Int(0)) : 0;
}

}  // namespace

int LatestSchemaVersion() { return static_cast<int>(Migrations().size()); }

Status RunMigrations(Connection& conn) {
  CAIRN_ASSIGN_OR_RETURN(int current, CurrentVersion(conn));
  if (current > LatestSchemaVersion()) {
    return Status::Internal("database schema version " + std::to_string(current) + " is newer than this cairn (" +
                            std::to_string(LatestSchemaVersion()) + "); upgrade cairn");
  }
  for (int version = current + 1; version <= LatestSchemaVersion(); ++version) {
    CAIRN_RETURN_IF_ERROR(conn.Exec("BEGIN IMMEDIATE"));
    Status status = conn.Exec(Migrations()[version - 1]);
    if (status.ok()) {
      status = conn.Exec("INSERT INTO schema_migrations(version, applied_at) VALUES (" + std::to_string(version) +
                         ", CAST(strftime('%s','now') AS INTEGER) * 1000000)");
    }
    if (!status.ok()) {
      (void)conn.Exec("ROLLBACK");
      return Status::Internal("migration " + std::to_string(version) + " failed: " + status.message());
    }
    CAIRN_RETURN_IF_ERROR(conn.Exec("COMMIT"));
    CAIRN_LOG_INFO("store: applied schema migration {}", version);
  }
  return Status::Ok();
}

}  // namespace cairn::store::sqlite
