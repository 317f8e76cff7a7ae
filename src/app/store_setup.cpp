#include "app/store_setup.h"

#include <algorithm>
#include <filesystem>

#include "app/serve_settings.h"
#include "store/postgres/pg_store.h"
#include "store/postgres/pg_text_index.h"
#include "store/postgres/pg_vectors.h"
#include "store/postgres/pg_webhooks.h"
#include "store/sqlite/sqlite_store.h"

namespace cairn::app {
namespace {

// The PostgreSQL halves beside PgStore, kept alive by StoreBackend::parts.
struct PgParts {
  store::postgres::PgWebhookStore webhooks;
  store::postgres::PgTextIndex text;
  store::postgres::PgVectorStore vectors;
};

// "user@host:port/db" of a URI, never its password (for the log).
std::string WithoutPassword(const std::string& uri) {
  size_t scheme_end = uri.find("://");
  std::string rest = scheme_end == std::string::npos ? uri : uri.substr(scheme_end + 3);
  size_t at = rest.find('@');
  if (at != std::string::npos) {
    std::string user = rest.substr(0, at);
    if (size_t colon = user.find(':'); colon != std::string::npos) user = user.substr(0, colon);
    rest = user + "@" + rest.substr(at + 1);
  }
  if (size_t query = rest.find('?'); query != std::string::npos) rest = rest.substr(0, query);
  return rest;
}

Result<StoreBackend> OpenSqlite(const Settings& settings, const Clock& clock, MetricsRegistry& metrics) {
  store::sqlite::SqliteStoreOptions options;
  options.path = (std::filesystem::path(settings.GetString("data_dir")) / "cairn.db").string();
  options.synchronous = settings.GetString("sync");
  options.background_checkpoint = settings.GetString("wal_checkpoint") == "background";
  options.writer.max_queue = static_cast<size_t>(settings.GetInt("write_queue_limit"));
  options.writer.max_batch = static_cast<size_t>(settings.GetInt("write_batch_max"));
  CAIRN_ASSIGN_OR_RETURN(auto sqlite, store::sqlite::SqliteStore::Open(options, clock, &metrics));
  StoreBackend backend;
  // The SQLite store is every interface at once.
  backend.event_log = sqlite.get();
  backend.webhook_store = sqlite.get();
  backend.cursor_store = sqlite.get();
  backend.claim_store = sqlite.get();
  backend.text_index = sqlite.get();
  backend.vector_store = sqlite.get();
  backend.description = "SQLite at " + options.path;
  backend.store = std::move(sqlite);
  return backend;
}

Result<StoreBackend> OpenPostgres(const Settings& settings, const Clock& clock, MetricsRegistry& metrics) {
  store::postgres::PgOptions options;
  options.uri = settings.GetString("store");
  options.writer.max_queue = static_cast<size_t>(settings.GetInt("write_queue_limit"));
  options.writer.max_batch = static_cast<size_t>(settings.GetInt("write_batch_max"));
  CAIRN_ASSIGN_OR_RETURN(auto db, store::postgres::PgDatabase::Open(options, &metrics));
  auto pg = std::make_unique<store::postgres::PgStore>(db, store::postgres::PgStoreOptions{}, clock);
  std::shared_ptr<PgParts> parts(new PgParts{store::postgres::PgWebhookStore(db, clock),
                                             store::postgres::PgTextIndex(db, clock),
                                             store::postgres::PgVectorStore(db, clock)});
  StoreBackend backend;
  backend.event_log = pg.get();
  backend.cursor_store = pg.get();
  backend.claim_store = pg.get();
  backend.webhook_store = &parts->webhooks;
  backend.text_index = &parts->text;
  backend.vector_store = &parts->vectors;
  backend.shared = true;
  backend.description = "PostgreSQL at " + WithoutPassword(options.uri);
  backend.store = std::move(pg);
  backend.parts = std::move(parts);
  return backend;
}

Status UnknownStore(const std::string& choice) {
  return Status(StatusCode::kInvalidArgument,
                "store: expected sqlite or a PostgreSQL URI (postgresql://user@host:5432/db), got '" +
                    WithoutPassword(choice) + "'",
                "store");
}

// The advisory lock keys of the background work's leases ("cairn-ex", "cairn-se", "cairn-wh" in
// ASCII), in the order of kWorkParts.
constexpr int64_t kWorkLeaseKeys[] = {0x636169726e2d6578, 0x636169726e2d7365, 0x636169726e2d7768};
// The first keys of the sharded parts' shards ("cairn-x", "cairn-s" then the shard) and of the
// members sharing them ("cairn-m", "cairn-n" then the slot), in the order of kShardedWorkParts.
constexpr int64_t kShardKeys[] = {0x636169726e2d7800, 0x636169726e2d7300};
constexpr int64_t kMemberKeys[] = {0x636169726e2d6d00, 0x636169726e2d6e00};

}  // namespace

bool IsPostgresUri(const std::string& value) {
  return value.starts_with("postgres://") || value.starts_with("postgresql://");
}

Result<StoreBackend> OpenStoreBackend(const Settings& settings, const Clock& clock, MetricsRegistry& metrics) {
  const std::string& choice = settings.GetString("store");
  if (choice == "sqlite") return OpenSqlite(settings, clock, metrics);
  if (IsPostgresUri(choice)) return OpenPostgres(settings, clock, metrics);
  return UnknownStore(choice);
}

Status CheckStoreSettings(const Settings& settings) {
  const std::string& choice = settings.GetString("store");
  if (choice == "sqlite") return Status::Ok();
  if (!IsPostgresUri(choice)) return UnknownStore(choice);
  if (settings.GetString("master_key").empty()) {
    return Status(StatusCode::kInvalidArgument,
                  "master_key: with a PostgreSQL store every process must encrypt secrets with the same key; set "
                  "--master-key (CAIRN_MASTER_KEY, 64 hex characters: openssl rand -hex 32) on each (docs/deploy.md)",
                  "master_key");
  }
  if (settings.GetString("auth") == "on" && settings.GetString("jwt_secret").empty() &&
      settings.GetString("jwt_private_key_file").empty()) {
    return Status(StatusCode::kInvalidArgument,
                  "jwt_secret: with a PostgreSQL store every process must sign tokens with the same key; set "
                  "--jwt-secret (CAIRN_JWT_SECRET) or --jwt-private-key-file on each (docs/deploy.md)",
                  "jwt_secret");
  }
  return Status::Ok();
}

Result<std::vector<std::string>> WorkParts(const Settings& settings) {
  const std::vector<std::string> parts = SplitList(settings.GetString("work"));
  for (const std::string& part : parts) {
    if (std::find(std::begin(kWorkParts), std::end(kWorkParts), part) == std::end(kWorkParts)) {
      return Status(StatusCode::kInvalidArgument,
                    "work: expected parts among executors, sessions and webhooks, got '" + part + "'", "work");
    }
  }
  if (parts.empty()) {
    return Status(StatusCode::kInvalidArgument, "work: name at least one of executors, sessions and webhooks", "work");
  }
  // In kWorkParts' order, whatever the order written (executors migrate old records first).
  std::vector<std::string> ordered;
  for (const char* known : kWorkParts) {
    if (std::find(parts.begin(), parts.end(), known) != parts.end()) ordered.emplace_back(known);
  }
  return ordered;
}

std::unique_ptr<store::postgres::PgLease> MakeWorkLease(const Settings& settings, const std::string& part) {
  if (!IsPostgresUri(settings.GetString("store"))) return nullptr;
  auto known = std::find(std::begin(kWorkParts), std::end(kWorkParts), part);
  if (known == std::end(kWorkParts)) return nullptr;
  store::postgres::PgLease::Options options;
  options.uri = settings.GetString("store");
  options.key = kWorkLeaseKeys[known - std::begin(kWorkParts)];
  options.purpose = "the background work's " + part;
  return std::make_unique<store::postgres::PgLease>(options);
}

bool IsShardedWorkPart(const std::string& part) {
  return std::find(std::begin(kShardedWorkParts), std::end(kShardedWorkParts), part) != std::end(kShardedWorkParts);
}

std::unique_ptr<store::postgres::PgShardLeases> MakeShardLeases(const Settings& settings, const std::string& part) {
  if (!IsPostgresUri(settings.GetString("store"))) return nullptr;
  auto known = std::find(std::begin(kShardedWorkParts), std::end(kShardedWorkParts), part);
  if (known == std::end(kShardedWorkParts)) return nullptr;
  store::postgres::PgShardLeases::Options options;
  options.uri = settings.GetString("store");
  options.shard_key = kShardKeys[known - std::begin(kShardedWorkParts)];
  options.member_key = kMemberKeys[known - std::begin(kShardedWorkParts)];
  options.shards = kWorkShards;
  options.max_members = 256;
  options.purpose = part;
  // Workers from before the shards did the part under its lease: never both at once.
  options.legacy_key = kWorkLeaseKeys[std::find(std::begin(kWorkParts), std::end(kWorkParts), part) - std::begin(kWorkParts)];
  return std::make_unique<store::postgres::PgShardLeases>(options);
}

}  // namespace cairn::app
