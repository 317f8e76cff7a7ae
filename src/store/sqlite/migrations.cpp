#include "store/sqlite/migrations.h"

#include <string>
#include <vector>

#include "base/log.h"

namespace cairn::store::sqlite {
namespace {

// The columns of a record's full-text row, from the breadcrumbs row `r` (NEW, or an alias):
// title, description, tags joined by spaces, and the string values of the context (at most 2,000
// of them, 64 KiB of text). Unparsable JSON (a row an older version wrote) indexes as empty.
std::string FullTextValues(const std::string& r) {
  return r + ".rid, " + r + ".title, COALESCE(" + r + ".description, ''), "
         "COALESCE((SELECT group_concat(value, ' ') FROM json_each(CASE WHEN json_valid(" + r + ".tags) THEN " + r +
         ".tags ELSE '[]' END)), ''), "
         "COALESCE(substr((SELECT group_concat(value, ' ') FROM (SELECT value FROM json_tree(CASE WHEN json_valid(" + r +
         ".context) THEN " + r + ".context ELSE 'null' END) WHERE type = 'text' LIMIT 2000)), 1, 65536), '')";
}

// Runs and snapshots are not indexed: they repeat what session messages and responses say, and
// they are the most frequent writes. A change of these names needs a new migration.
std::string FullTextIndexed(const std::string& r) {
  return "(" + r + ".schema_name IS NULL OR " + r + ".schema_name NOT IN ('agent.execution.v1', 'agent.snapshot.v1'))";
}

// Migration 4: the full-text index, kept by triggers so that every way a record is written or
// removed (create, update, delete, the TTL sweep, a reclaimed path) changes it in the write's own
// transaction; then every existing record is indexed. Built from the helpers above; its text
// must never change once shipped.
std::string FullTextMigration() {
  const std::string insert = "INSERT INTO breadcrumbs_fts(rowid, title, description, tags, body) ";
  return "CREATE VIRTUAL TABLE breadcrumbs_fts USING fts5(title, description, tags, body, "
         "tokenize = 'unicode61 remove_diacritics 2');\n"
         "CREATE TRIGGER breadcrumbs_fts_insert AFTER INSERT ON breadcrumbs WHEN " + FullTextIndexed("NEW") +
         " BEGIN " + insert + "SELECT " + FullTextValues("NEW") + "; END;\n"
         "CREATE TRIGGER breadcrumbs_fts_delete AFTER DELETE ON breadcrumbs BEGIN "
         "DELETE FROM breadcrumbs_fts WHERE rowid = OLD.rid; END;\n"
         "CREATE TRIGGER breadcrumbs_fts_update AFTER UPDATE OF schema_name, title, description, tags, context "
         "ON breadcrumbs BEGIN DELETE FROM breadcrumbs_fts WHERE rowid = OLD.rid; " + insert + "SELECT " +
         FullTextValues("NEW") + " WHERE " + FullTextIndexed("NEW") + "; END;\n" +
         insert + "SELECT " + FullTextValues("b") + " FROM breadcrumbs b WHERE " + FullTextIndexed("b") + ";\n";
}

// Migration 6: new and changed records are indexed in batches, not once per write. FTS5 writes
// its pending terms to disk as a segment at every savepoint, and the writer wraps each write of a
// batch in one: indexing in the triggers made a segment (and its merges) per write. The triggers
// now note the rowid in breadcrumbs_fts_pending, in the write's transaction, and SqliteStore
// indexes the noted records with FullTextPendingStatements() when enough have gathered and
// before any search (sqlite_store.h). Deletions and the old text of an update still leave the
// index in the trigger.
std::string FullTextPendingMigration() {
  return "CREATE TABLE breadcrumbs_fts_pending (rid INTEGER PRIMARY KEY);\n"
         "DROP TRIGGER breadcrumbs_fts_insert;\n"
         "DROP TRIGGER breadcrumbs_fts_update;\n"
         "DROP TRIGGER breadcrumbs_fts_delete;\n"
         "CREATE TRIGGER breadcrumbs_fts_insert AFTER INSERT ON breadcrumbs WHEN " + FullTextIndexed("NEW") +
         " BEGIN INSERT OR IGNORE INTO breadcrumbs_fts_pending(rid) VALUES (NEW.rid); END;\n"
         "CREATE TRIGGER breadcrumbs_fts_delete AFTER DELETE ON breadcrumbs BEGIN "
         "DELETE FROM breadcrumbs_fts WHERE rowid = OLD.rid; DELETE FROM breadcrumbs_fts_pending WHERE rid = OLD.rid; END;\n"
         "CREATE TRIGGER breadcrumbs_fts_update AFTER UPDATE OF schema_name, title, description, tags, context "
         "ON breadcrumbs BEGIN DELETE FROM breadcrumbs_fts WHERE rowid = OLD.rid; "
         "INSERT OR IGNORE INTO breadcrumbs_fts_pending(rid) SELECT NEW.rid WHERE " + FullTextIndexed("NEW") + "; END;\n";
}

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
      // 4: the full-text index (docs/search.md), FullTextMigration() below.
      FullTextMigration(),
      // 5: the vectors of records per embedding model (store/vector_store.h), float32 blobs;
      // deleting a record deletes its vectors in the same transaction.
      R"sql(
CREATE TABLE breadcrumb_vectors (
  owner_id TEXT NOT NULL,
  breadcrumb_id TEXT NOT NULL,
  model TEXT NOT NULL,
  version INTEGER NOT NULL,
  dimension INTEGER NOT NULL,
  vector BLOB NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (owner_id, breadcrumb_id, model)
) WITHOUT ROWID;
CREATE INDEX breadcrumb_vectors_model ON breadcrumb_vectors(model, owner_id);
CREATE TRIGGER breadcrumb_vectors_delete AFTER DELETE ON breadcrumbs
BEGIN
  DELETE FROM breadcrumb_vectors WHERE owner_id = OLD.owner_id AND breadcrumb_id = OLD.id;
END;
)sql",
      // 6: the full-text index written once per commit (FullTextPendingMigration above).
      FullTextPendingMigration(),
      // 7: record access (model/access.h): the records' acl; on each event who may read the
      // record as the write left it (null: team, low, no acl), and the principal that made each
      // webhook. Events of records that are still private or sensitive get their record's
      // current access.
      R"sql(
ALTER TABLE breadcrumbs ADD COLUMN acl TEXT;
ALTER TABLE events ADD COLUMN access TEXT;
ALTER TABLE webhooks ADD COLUMN created_by TEXT;
UPDATE events SET access = (SELECT json_object('visibility', b.visibility, 'sensitivity', b.sensitivity,
                                               'creator', b.created_by)
                            FROM breadcrumbs b WHERE b.id = events.breadcrumb_id)
WHERE breadcrumb_id IN (SELECT id FROM breadcrumbs WHERE visibility <> 'team' OR sensitivity <> 'low');
)sql",
      // 8: webhooks sign with a tenant's secret by name, and send extra headers (docs/secrets.md).
      R"sql(
ALTER TABLE webhooks ADD COLUMN secret_name TEXT;
ALTER TABLE webhooks ADD COLUMN headers TEXT NOT NULL DEFAULT '{}';
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

const std::string& FullTextPendingQuery() {
  static const std::string kQuery = "SELECT 1 FROM breadcrumbs_fts_pending LIMIT 1";
  return kQuery;
}

std::string FullTextDueQuery(size_t rows) {
  return "SELECT 1 FROM breadcrumbs_fts_pending LIMIT 1 OFFSET " + std::to_string(rows < 1 ? 0 : rows - 1);
}

const std::vector<std::string>& FullTextPendingStatements() {
  static const std::vector<std::string> kStatements = {
      "INSERT INTO breadcrumbs_fts(rowid, title, description, tags, body) SELECT " + FullTextValues("b") +
          " FROM breadcrumbs_fts_pending p JOIN breadcrumbs b ON b.rid = p.rid",
      "DELETE FROM breadcrumbs_fts_pending"};
  return kStatements;
}

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
