// SqliteStore: the default Store, embedded SQLite in WAL mode under the data directory.
//
// One GroupCommitWriter owns the write connection; reads use a pool of connections in parallel
// (WAL readers never block the writer). See store/store.h and store/event_log.h for the contracts.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/metrics.h"
#include "base/uuid.h"
#include "store/sqlite/connection.h"
#include "store/sqlite/group_commit_writer.h"
#include "store/sqlite/wal_checkpointer.h"
#include "store/sqlite/unreadable_rows.h"
#include "store/event_log.h"
#include "store/claim_store.h"
#include "store/cursor_store.h"
#include "store/store.h"
#include "store/text_index.h"
#include "store/vector_store.h"
#include "store/webhook_store.h"
#include "store/write_rules.h"

namespace cairn::store::sqlite {

struct SqliteStoreOptions {
  std::string path;                       // database file; its directory must exist
  std::string synchronous = "full";       // "full": every commit fsyncs; "normal": survives process crashes only
  GroupCommitWriter::Options writer;
  // Checkpoints on a thread of their own (wal_checkpointer.h); off: SQLite's automatic checkpoint
  // in the writer's commits.
  bool background_checkpoint = true;
  WalCheckpointer::Options checkpoint;
  int64_t idempotency_retention_micros = 24LL * 3600 * 1'000'000;
  // The full-text index is written once this many records wait to be indexed (and before every
  // search): FTS5's cost is mostly per flush, so a few large flushes beat one per commit. 512
  // cost as much CPU as 128 but added 5 ms to the p99 of creates (the commit that flushes).
  size_t full_text_batch_rows = 128;
};

class SqliteStore final : public Store, public EventLog, public WebhookStore, public CursorStore,
                          public ClaimStore, public TextIndex, public VectorStore {
 public:
  // Opens the database and runs migrations. `clock` and `metrics` must outlive the store;
  // `metrics` may be null.
  static Result<std::unique_ptr<SqliteStore>> Open(SqliteStoreOptions options, const Clock& clock,
                                                   MetricsRegistry* metrics);
  ~SqliteStore() override;

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
  Result<StoreStats> Stats() override;
  void Close() override;

  // EventLog
  Result<std::vector<model::Event>> ReadEvents(int64_t after_seq, size_t limit) override;
  Result<EventLogBounds> Bounds() override;
  void SetCommitListener(std::function<void()> listener) override;
  void SetCommittedEventsListener(CommittedEventsListener listener) override;
  Result<int64_t> PruneEvents(int64_t before_micros) override;

  // WebhookStore (sqlite_webhooks.cpp)
  Result<Webhook> CreateWebhook(const WebhookDraft& draft, size_t max_per_owner) override;
  Result<Webhook> GetWebhook(const std::string& owner_id, const std::string& id) override;
  Result<std::vector<Webhook>> ListWebhooks(const std::string& owner_id) override;
  Result<std::vector<Webhook>> ListAllWebhooks() override;
  Result<Webhook> UpdateWebhook(const std::string& owner_id, const std::string& id, const WebhookPatch& patch) override;
  Status DeleteWebhook(const std::string& owner_id, const std::string& id) override;
  Status AdvanceWebhookCursor(const std::string& id, int64_t seq) override;
  Result<DeadLetter> DeadLetterAndAdvance(DeadLetter letter) override;
  Result<DeadLetterPage> ListDeadLetters(const std::string& owner_id, const std::optional<std::string>& webhook_id,
                                         const std::string& after, size_t limit) override;
  Result<DeadLetter> GetDeadLetter(const std::string& owner_id, const std::string& id) override;
  Result<DeadLetter> RecordDeadLetterAttempt(const std::string& owner_id, const std::string& id,
                                             std::optional<int64_t> status, const std::string& error) override;
  Status DeleteDeadLetter(const std::string& owner_id, const std::string& id) override;

  // CursorStore (sqlite_cursors.cpp)
  Result<std::optional<int64_t>> LoadCursor(const std::string& consumer) override;
  Status SaveCursor(const std::string& consumer, int64_t seq) override;
  void SaveCursorSoon(const std::string& consumer, int64_t seq) override;
  Status DeleteCursor(const std::string& consumer) override;

  // ClaimStore (sqlite_cursors.cpp)
  Result<int64_t> ClaimTrigger(const TriggerClaim& claim) override;
  Result<std::vector<TriggerClaim>> ListClaims(const std::string& consumer) override;
  Status ReleaseClaims(const std::string& consumer, const std::vector<std::string>& trigger_keys) override;

  // TextIndex (sqlite_search.cpp)
  // Indexes the text of every committed write first (IndexPendingText), so a search finds every
  // acknowledged write.
  Result<std::vector<TextHit>> SearchText(const std::string& owner_id, const TextSearchQuery& query) override;
  // Writes, in one transaction of the writer, the full-text rows of every record whose text waits
  // to be indexed (a write notes it in its own transaction; the writer indexes in batches of
  // SqliteStoreOptions::full_text_batch_rows). Returns at once when nothing waits.
  Status IndexPendingText();

  // VectorStore (sqlite_vectors.cpp)
  Status PutVectors(const std::string& model, const std::vector<VectorWrite>& writes,
                    const std::vector<VectorKey>& removals, const std::string& consumer, int64_t cursor_seq) override;
  Status ScanVectors(const std::string& owner_id, const std::string& model, const TextSearchQuery& filters,
                     const VectorVisitor& visit) override;
  Result<std::vector<MissingVector>> MissingVectors(const std::string& model, int64_t after_rid, size_t limit) override;
  Result<VectorFingerprint> FingerprintVectors(const std::string& owner_id, const std::string& model) override;
  Result<int64_t> CountVectors(const std::string& model) override;
  Result<std::vector<std::string>> VectorModels() override;
  Result<int64_t> DeleteVectors(const std::string& model, size_t limit) override;

 private:
  // Upserts `consumer`'s cursor within the caller's write transaction (SaveCursor, PutVectors).
  static Status WriteCursor(Connection& conn, std::string_view consumer, int64_t seq, int64_t now);
  SqliteStore(SqliteStoreOptions options, const Clock& clock, MetricsRegistry* metrics);

  // A read connection from the pool, returned to it on destruction.
  class ReadLease;
  Result<ReadLease> AcquireReader();
  void ReleaseReader(std::unique_ptr<Connection> conn);
  // Runs `fn` on a pooled read connection (for code outside sqlite_store.cpp, where ReadLease is
  // incomplete).
  Status WithReader(const std::function<Status(Connection&)>& fn);
  // Submits `fn` to the writer. `fn` adds to `*record_delta` the records it created (+) or removed
  // (-); the count is applied only if the write commits.
  Status Write(const std::function<Status(Connection&, int64_t* record_delta)>& fn);
  // Counts a write that took from `started` to now in cairn_store_write_seconds.
  void ObserveWrite(std::chrono::steady_clock::time_point started);

  using Prepared = PreparedWrite;

  // Logs and counts `row` the first time it is seen and files its system.error.v1 report
  // (unreadable_rows.h) without waiting for it. Safe on the writer thread.
  void ReportUnreadable(UnreadableRow row);

  // The bodies of Create, Update and Delete, run inside a write transaction (shared with Apply).
  Result<CreateResult> CreateIn(Connection& conn, const model::WriteContext& ctx, const model::BreadcrumbDraft& draft,
                                const std::string& idempotency_key, const Prepared& prepared, int64_t now,
                                int64_t* record_delta);
  Result<model::Breadcrumb> UpdateIn(Connection& conn, const model::WriteContext& ctx, const std::string& id,
                                     const model::BreadcrumbPatch& patch, std::optional<int64_t> expected_version,
                                     const Prepared& prepared, int64_t now, int64_t* record_delta);
  Result<model::Breadcrumb> DeleteIn(Connection& conn, const model::WriteContext& ctx, const std::string& id,
                                     std::optional<int64_t> expected_version, int64_t now, int64_t* record_delta);

  SqliteStoreOptions options_;
  const Clock& clock_;
  UuidV7Generator ids_;
  Histogram* write_seconds_ = nullptr;
  std::unique_ptr<WalCheckpointer> checkpointer_;  // before writer_: outlives the connection it hooks
  std::unique_ptr<GroupCommitWriter> writer_;
  UnreadableRows unreadable_;
  std::atomic<int64_t> records_{0};  // kept in step with committed writes; read by Stats()
  std::mutex readers_mu_;
  std::vector<std::unique_ptr<Connection>> idle_readers_;
};

}  // namespace cairn::store::sqlite
