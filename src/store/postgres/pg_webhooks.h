// PgWebhookStore: the WebhookStore (store/webhook_store.h, which states the contract) on
// PostgreSQL, over the `webhooks` and `webhook_dead_letters` tables (pg_migrations.cpp, migration
// 2) of a PgDatabase it shares with PgStore.
//
// Writes run in the process's writer (PgDatabase::Write), whose batches of every process commit
// one at a time: a new or re-activated webhook's cursor is the newest seq inside the writer's
// transaction, and the per-owner limit is counted where no other write can interleave. Rows
// decode as in every backend (store/webhook_rows.h). Every row here was written by this version,
// so a row that does not decode is an error (kInternal), not skipped as SQLite's older rows are.
// The same tests run against both backends (sqlite/sqlite_webhooks_test.cpp).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/uuid.h"
#include "store/postgres/pg_database.h"
#include "store/webhook_store.h"

namespace cairn::store::postgres {

class PgWebhookStore final : public WebhookStore {
 public:
  // The webhook store on `db`. `clock` must outlive it.
  PgWebhookStore(std::shared_ptr<PgDatabase> db, const Clock& clock);

  Result<Webhook> CreateWebhook(const WebhookDraft& draft, size_t max_per_owner) override;
  Result<Webhook> GetWebhook(const std::string& owner_id, const std::string& id) override;
  Result<std::vector<Webhook>> ListWebhooks(const std::string& owner_id) override;
  Result<std::vector<Webhook>> ListAllWebhooks() override;
  Result<Webhook> UpdateWebhook(const std::string& owner_id, const std::string& id,
                                const WebhookPatch& patch) override;
  Status DeleteWebhook(const std::string& owner_id, const std::string& id) override;

  Status AdvanceWebhookCursor(const std::string& id, int64_t seq) override;
  Result<DeadLetter> DeadLetterAndAdvance(DeadLetter letter) override;

  Result<DeadLetterPage> ListDeadLetters(const std::string& owner_id, const std::optional<std::string>& webhook_id,
                                         const std::string& after, size_t limit) override;
  Result<DeadLetter> GetDeadLetter(const std::string& owner_id, const std::string& id) override;
  Result<DeadLetter> RecordDeadLetterAttempt(const std::string& owner_id, const std::string& id,
                                             std::optional<int64_t> status, const std::string& error) override;
  Status DeleteDeadLetter(const std::string& owner_id, const std::string& id) override;

 private:
  std::shared_ptr<PgDatabase> db_;
  const Clock& clock_;
  UuidV7Generator ids_;
};

}  // namespace cairn::store::postgres
