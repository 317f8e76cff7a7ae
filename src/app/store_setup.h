// The storage backend of `cairn serve`, from its `store` setting (docs/config.md, docs/deploy.md):
// the embedded SQLite database in the data dir (the default), or a PostgreSQL database shared by
// several cairn processes. The only place that chooses a backend.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/metrics.h"
#include "base/settings.h"
#include "base/status.h"
#include "store/claim_store.h"
#include "store/cursor_store.h"
#include "store/event_log.h"
#include "store/postgres/pg_lease.h"
#include "store/postgres/pg_shard_leases.h"
#include "store/store.h"
#include "store/text_index.h"
#include "store/vector_store.h"
#include "store/webhook_store.h"

namespace cairn::app {

// Every store interface of one backend. `store` owns the backend (closing it closes the rest);
// the other pointers stay valid while `store` and `parts` live.
struct StoreBackend {
  std::unique_ptr<store::Store> store;
  store::EventLog* event_log = nullptr;
  store::WebhookStore* webhook_store = nullptr;
  store::CursorStore* cursor_store = nullptr;
  store::ClaimStore* claim_store = nullptr;
  store::TextIndex* text_index = nullptr;
  store::VectorStore* vector_store = nullptr;
  // Other processes write to the same database (PostgreSQL): a record cached in this process may
  // be changed by another, so no read cache sits in front of `store`.
  bool shared = false;
  std::string description;  // for the start-up log line: "SQLite at <path>" or "PostgreSQL at <host/db>"
  std::shared_ptr<void> parts;  // the backend's other halves (PostgreSQL)
};

// True when `value` of the `store` setting names a PostgreSQL database (postgres:// or postgresql://).
bool IsPostgresUri(const std::string& value);

// Opens the backend `settings` names (`store`, `data_dir`, `sync`, `wal_checkpoint`,
// `write_queue_limit`, `write_batch_max`). kInvalidArgument naming the setting `store` for a value
// that is neither "sqlite" nor a PostgreSQL URI. `clock` and `metrics` must outlive the backend.
Result<StoreBackend> OpenStoreBackend(const Settings& settings, const Clock& clock, MetricsRegistry& metrics);

// Checks the settings about the store before anything starts: kInvalidArgument naming `store` for
// a value that is neither "sqlite" nor a PostgreSQL URI; with a PostgreSQL store, where every
// process must encrypt secrets and sign tokens with the same keys, naming `master_key` when it is
// not set (and `jwt_secret` when auth is on and no key signs tokens). With SQLite missing keys are
// made in the data dir.
Status CheckStoreSettings(const Settings& settings);

// The parts of the background work (the `work` setting), in the order they start.
inline constexpr const char* kWorkParts[] = {"executors", "sessions", "webhooks"};

// The `work` setting's parts, in kWorkParts' order; kInvalidArgument naming `work` for an unknown
// or no part.
Result<std::vector<std::string>> WorkParts(const Settings& settings);

// The lease on the background work's `part` (one of kWorkParts) when the store is shared
// (PostgreSQL: one process of the cluster does each part at a time; store/postgres/pg_lease.h),
// else null (the store is this process's alone).
std::unique_ptr<store::postgres::PgLease> MakeWorkLease(const Settings& settings, const std::string& part);

// The parts of the background work that every worker doing them shares, each holding some of the
// part's shards, when the store is shared; the others run in one process at a time (MakeWorkLease).
inline constexpr const char* kShardedWorkParts[] = {"executors", "sessions"};
bool IsShardedWorkPart(const std::string& part);

// The shards of each sharded part (exec::ExecutorHost, sessions::SessionWorker; base/shard.h);
// every process of a cluster must use the same number.
inline constexpr int kWorkShards = 64;

// The leases on the shards of `part` (one of kShardedWorkParts) when the store is shared
// (PostgreSQL: each worker doing the part holds its share; store/postgres/pg_shard_leases.h), else
// null.
std::unique_ptr<store::postgres::PgShardLeases> MakeShardLeases(const Settings& settings, const std::string& part);

}  // namespace cairn::app
