#include "store/postgres/pg_migrations.h"

#include <string>
#include <vector>

#include "base/log.h"

namespace cairn::store::postgres {
namespace {

// The key of the advisory lock that serialises migrations across processes.
constexpr const char* kMigrationLock = "SELECT pg_advisory_lock(7395021761)";
constexpr const char* kMigrationUnlock = "SELECT pg_advisory_unlock(7395021761)";

// Append only. Times are microseconds since the epoch (BIGINT), JSON columns hold the text the
// store wrote (the SQLite backend's layout, store/record_rows.h), and `doc` is the context as
// jsonb for context rules. Paths compare byte-wise (COLLATE "C"), as in SQLite.
const std::vector<std::string>& Migrations() {
  static const std::vector<std::string> kMigrations = {
      // 1: records, their tags and history, the event log with its counter, idempotency keys,
      // executors' cursors and claims.
      R"sql(
CREATE TABLE breadcrumbs (
  rid BIGSERIAL PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  owner_id TEXT NOT NULL,
  schema_name TEXT,
  title TEXT NOT NULL,
  description TEXT,
  tags TEXT NOT NULL,
  context TEXT NOT NULL,
  doc JSONB GENERATED ALWAYS AS (context::jsonb) STORED,
  path TEXT COLLATE "C",
  llm_hints TEXT,
  version BIGINT NOT NULL,
  checksum TEXT NOT NULL,
  visibility TEXT NOT NULL,
  sensitivity TEXT NOT NULL,
  expires_at BIGINT,
  created_by TEXT NOT NULL,
  updated_by TEXT NOT NULL,
  trace_id TEXT NOT NULL,
  caused_by TEXT,
  depth BIGINT NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  size_bytes BIGINT NOT NULL,
  acl TEXT
);
CREATE INDEX breadcrumbs_owner_rid ON breadcrumbs(owner_id, rid);
CREATE INDEX breadcrumbs_owner_schema ON breadcrumbs(owner_id, schema_name, rid);
CREATE UNIQUE INDEX breadcrumbs_owner_path ON breadcrumbs(owner_id, path) WHERE path IS NOT NULL;
CREATE INDEX breadcrumbs_expiry ON breadcrumbs(expires_at) WHERE expires_at IS NOT NULL;
CREATE TABLE breadcrumb_tags (
  tag TEXT NOT NULL,
  rid BIGINT NOT NULL,
  PRIMARY KEY (tag, rid)
);
CREATE TABLE breadcrumb_versions (
  rid BIGINT NOT NULL,
  version BIGINT NOT NULL,
  title TEXT NOT NULL,
  tags TEXT NOT NULL,
  context TEXT NOT NULL,
  checksum TEXT NOT NULL,
  updated_by TEXT NOT NULL,
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (rid, version)
);
CREATE TABLE events (
  seq BIGINT PRIMARY KEY,
  type TEXT NOT NULL,
  breadcrumb_id TEXT NOT NULL,
  version BIGINT NOT NULL,
  schema_name TEXT,
  title TEXT NOT NULL,
  tags TEXT NOT NULL,
  path TEXT,
  owner_id TEXT NOT NULL,
  created_by TEXT NOT NULL,
  trace_id TEXT NOT NULL,
  caused_by TEXT,
  depth BIGINT NOT NULL,
  at BIGINT NOT NULL,
  context TEXT,
  access TEXT
);
CREATE INDEX events_at ON events(at);
CREATE TABLE event_counter (
  only_row BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (only_row),
  last_seq BIGINT NOT NULL
);
INSERT INTO event_counter(last_seq) VALUES (0);
CREATE TABLE idempotency_keys (
  owner_id TEXT NOT NULL,
  key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  breadcrumb_id TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (owner_id, key)
);
CREATE INDEX idempotency_keys_age ON idempotency_keys(created_at);
CREATE TABLE consumer_cursors (
  consumer TEXT PRIMARY KEY,
  seq BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE TABLE executor_claims (
  consumer TEXT NOT NULL,
  trigger_key TEXT NOT NULL,
  trigger_id TEXT NOT NULL,
  owner_id TEXT NOT NULL,
  trigger_seq BIGINT NOT NULL,
  attempt BIGINT NOT NULL,
  claimed_at BIGINT NOT NULL,
  PRIMARY KEY (consumer, trigger_key)
);
)sql",
      // 2: webhooks (each with its delivery cursor) and the dead letters of failed deliveries.
      R"sql(
CREATE TABLE webhooks (
  id TEXT PRIMARY KEY,
  owner_id TEXT NOT NULL,
  url TEXT NOT NULL,
  selector TEXT NOT NULL,
  secret TEXT,
  active BOOLEAN NOT NULL,
  cursor BIGINT NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  created_by TEXT,
  secret_name TEXT,
  headers TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX webhooks_owner ON webhooks(owner_id, id);
CREATE TABLE webhook_dead_letters (
  id TEXT PRIMARY KEY,
  webhook_id TEXT NOT NULL,
  owner_id TEXT NOT NULL,
  event_seq BIGINT NOT NULL,
  payload TEXT NOT NULL,
  attempts BIGINT NOT NULL,
  last_status BIGINT,
  last_error TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE INDEX webhook_dead_letters_owner ON webhook_dead_letters(owner_id, id);
CREATE INDEX webhook_dead_letters_webhook ON webhook_dead_letters(webhook_id, id);
)sql",
      // 3: search (docs/search.md, store/text_index.h, store/vector_store.h).
      //
      // Full text: `search_vector`, a stored generated column, so a record's text is indexed by
      // the statement that writes it (every acknowledged write is searchable at once, an update's
      // old text is gone with it, existing records are indexed by this ALTER), NULL for runs and
      // snapshots (not indexed). Title weighs A, description and tags B, the context's strings
      // D (the ranking's weights: pg_text_index.cpp). The 'simple' configuration: no stop words,
      // no stemming, lower-cased, as FTS5's unicode61 (but diacritics are kept). ASCII
      // punctuation (the ranges !-/ :-@ [-` {-~) is turned into spaces first (cairn_search_text,
      // a regular expression: translate() compares each character with each of the 32 and is
      // seven times slower on a 1 KiB context), because a query word never holds any
      // (store/search_words.h): the parser would otherwise index "example.com" or
      // "ada@example.com" as one token that no query word can match. The context's strings are
      // bounded as in SQLite (cairn_json_strings): at most 2,000 of them, 65,536 characters,
      // which also keeps a tsvector far below its 1 MB limit. It is PL/pgSQL, whose query plan a
      // session keeps: a SQL function with a FROM is planned again at every single-row INSERT
      // (1 ms each, ten times the rest of the row's cost). Both functions call built-ins only,
      // so they mean the same whatever the search_path (pg_dump restores with an empty one).
      //
      // Vectors: one per (record, model), float4 values as real[]: exact (float4's text form is
      // the shortest that reads back to the same value), independent of the writers' byte order
      // (a cluster's processes may run on different machines), and usable by SQL (pgvector's
      // vector type casts from real[]). The foreign key deletes a record's vectors in the
      // statement that deletes the record. `model` compares byte-wise (VectorModels' name order).
      R"sql(
CREATE FUNCTION cairn_search_text(value text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT regexp_replace(value, '[!-/:-@[-`{-~]', ' ', 'g')
$$;
CREATE FUNCTION cairn_json_strings(value jsonb) RETURNS text LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
  RETURN (SELECT left(string_agg(s #>> '{}', ' ' ORDER BY n), 65536)
          FROM (SELECT s, n FROM jsonb_path_query(value, 'strict $.** ? (@.type() == "string")') WITH ORDINALITY AS t(s, n)
                ORDER BY n LIMIT 2000) strings);
END
$$;
ALTER TABLE breadcrumbs ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
  CASE WHEN schema_name IN ('agent.execution.v1', 'agent.snapshot.v1') THEN NULL ELSE
    setweight(to_tsvector('simple', cairn_search_text(title)), 'A') ||
    setweight(to_tsvector('simple', cairn_search_text(COALESCE(description, ''))), 'B') ||
    setweight(to_tsvector('simple', cairn_search_text(COALESCE(cairn_json_strings(tags::jsonb), ''))), 'B') ||
    setweight(to_tsvector('simple', cairn_search_text(COALESCE(cairn_json_strings(context::jsonb), ''))), 'D')
  END) STORED;
CREATE INDEX breadcrumbs_search ON breadcrumbs USING gin (search_vector);
CREATE TABLE breadcrumb_vectors (
  rid BIGINT NOT NULL REFERENCES breadcrumbs(rid) ON DELETE CASCADE,
  model TEXT COLLATE "C" NOT NULL,
  owner_id TEXT NOT NULL,
  version BIGINT NOT NULL,
  vector REAL[] NOT NULL,
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (rid, model)
);
CREATE INDEX breadcrumb_vectors_model ON breadcrumb_vectors(model, owner_id);
)sql",
  };
  return kMigrations;
}

Result<int> CurrentVersion(PgConnection& conn) {
  CAIRN_RETURN_IF_ERROR(conn.Exec(
      "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)"));
  CAIRN_ASSIGN_OR_RETURN(PgResult result, conn.Query("SELECT COALESCE(MAX(version), 0) FROM schema_migrations"));
  return static_cast<int>(result.Row(0).Int(0));
}

Status Migrate(PgConnection& conn) {
  CAIRN_ASSIGN_OR_RETURN(int current, CurrentVersion(conn));
  if (current > LatestPgSchemaVersion()) {
    return Status::Internal("database schema version " + std::to_string(current) + " is newer than this cairn (" +
                            std::to_string(LatestPgSchemaVersion()) + "); upgrade cairn");
  }
  for (int version = current + 1; version <= LatestPgSchemaVersion(); ++version) {
    Status status = conn.Exec("BEGIN; " + Migrations()[version - 1] +
                              "; INSERT INTO schema_migrations(version, applied_at) VALUES (" + std::to_string(version) +
                              ", (extract(epoch from now()) * 1000000)::bigint); COMMIT");
    if (!status.ok()) {
      (void)conn.Exec("ROLLBACK");
      return Status::Internal("migration " + std::to_string(version) + " failed: " + status.message());
    }
    CAIRN_LOG_INFO("store: applied PostgreSQL schema migration {}", version);
  }
  return Status::Ok();
}

}  // namespace

int LatestPgSchemaVersion() { return static_cast<int>(Migrations().size()); }

Status RunPgMigrations(PgConnection& conn) {
  CAIRN_RETURN_IF_ERROR(conn.Exec(kMigrationLock));
  Status status = Migrate(conn);
  (void)conn.Exec(kMigrationUnlock);
  return status;
}

}  // namespace cairn::store::postgres
