// PgStore: the Store on PostgreSQL, for several cairn processes sharing one database
// (docs/deploy.md). The SQLite backend (store/sqlite) stays the embedded default.
//
// Writes go through the process's PgWriter (PgDatabase) with group commit; batches of all
// processes commit one at a time on the event log's counter row, so `seq` is gap-free in commit
// order across the cluster. See store/store.h, event_log.h, cursor_store.h and claim_store.h for
// the contracts; store_contract_test.cpp runs them against both backends.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/uuid.h"
#include "store/claim_store.h"
#include "store/cursor_store.h"
#include "store/event_log.h"
#include "store/postgres/pg_database.h"
#include "store/postgres/pg_notifier.h"
#include "store/store.h"
#include "store/write_rules.h"

namespace cairn::store::postgres {

struct PgStoreOptions {
  int64_t idempotency_retention_micros = 24LL * 3600 * 1'000'000;
};

class PgStore final : public Store, public EventLog, public CursorStore, public ClaimStore {
 public:
  // The store on `db`. `clock` must outlive it.
  PgStore(std::shared_ptr<PgDatabase> db, PgStoreOptions options, const Clock& clock);
  ~PgStore() override;

  Result<CreateResult> Create(const model::WriteContext& ctx, const model::BreadcrumbDraft& draft,
                              const std::string& idempotency_key) override;
  void CreateAsync(const model::WriteContext& ctx, model::BreadcrumbDraft draft, std::string idempotency_key,
                   CreateDone done) override;
  Result<model::Breadcrumb> Get(const std::string& owner_id, const std::string& id) override;
  Result<model::Breadcrumb> Update(const model::WriteContext& ctx, const std::string& id,
                                   const model::BreadcrumbPatch& patch, std::optional<int64_t> expected_version) override;
  Status Delete(const model::WriteContext& ctx, const std::string& id, std::optional<int64_t> expected_version) override;
  Result<std::vector<WriteOutcome>> Apply(const model::WriteContext& ctx, const std::vector<WriteOp>& ops) override;
  Result<Page> List(const std::string& owner_id, const model::BreadcrumbQuery& query) override;
  Result<std::vector<model::BreadcrumbVersion>> History(const std::string& owner_id, const std::string& id) override;
  Result<int64_t> SweepExpired() override;
  // `records` counts the whole database (every process's writes).
  Result<StoreStats> Stats() override;
  // Closes the database (PgDatabase::Close): its other users' writes are refused too.
  void Close() override;

  // EventLog. A commit listener hears this process's commits with their events (exact) and,
  // through a PgCommitNotifier started with the first listener, other processes' commits without
  // them (read them from the log).
  Result<std::vector<model::Event>> ReadEvents(int64_t after_seq, size_t limit) override;
  Result<EventLogBounds> Bounds() override;
  void SetCommitListener(std::function<void()> listener) override;
  void SetCommittedEventsListener(CommittedEventsListener listener) override;
  Result<int64_t> PruneEvents(int64_t before_micros) override;

  // CursorStore (pg_cursors.cpp)
  Result<std::optional<int64_t>> LoadCursor(const std::string& consumer) override;
  Status SaveCursor(const std::string& consumer, int64_t seq) override;
  void SaveCursorSoon(const std::string& consumer, int64_t seq) override;
  Status DeleteCursor(const std::string& consumer) override;

  // ClaimStore (pg_cursors.cpp)
  Result<int64_t> ClaimTrigger(const TriggerClaim& claim) override;
  Result<std::vector<TriggerClaim>> ListClaims(const std::string& consumer) override;
  Status ReleaseClaims(const std::string& consumer, const std::vector<std::string>& trigger_keys) override;

 private:
  // The bodies of Create, Update and Delete, run inside the writer's transaction (shared with Apply).
  Result<CreateResult> CreateIn(PgConnection& conn, const model::WriteContext& ctx, const model::BreadcrumbDraft& draft,
                                const std::string& idempotency_key, const PreparedWrite& prepared, int64_t now);
  Result<model::Breadcrumb> UpdateIn(PgConnection& conn, const model::WriteContext& ctx, const std::string& id,
                                     const model::BreadcrumbPatch& patch, std::optional<int64_t> expected_version,
                                     const PreparedWrite& prepared, int64_t now);
  Result<model::Breadcrumb> DeleteIn(PgConnection& conn, const model::WriteContext& ctx, const std::string& id,
                                     std::optional<int64_t> expected_version, int64_t now);

  std::shared_ptr<PgDatabase> db_;
  std::unique_ptr<PgCommitNotifier> notifier_;  // with a committed-events listener
  std::mutex listener_mu_;
  CommittedEventsListener listener_;  // guarded by listener_mu_; called by the notifier
  PgStoreOptions options_;
  const Clock& clock_;
  UuidV7Generator ids_;
};

}  // namespace cairn::store::postgres
