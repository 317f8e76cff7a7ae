#include "store/postgres/pg_webhooks.h"

#include <utility>

#include "base/json_util.h"
#include "store/webhook_rows.h"

namespace cairn::store::postgres {
namespace {

Result<Webhook> LoadWebhook(PgConnection& conn, const std::string& owner_id, const std::string& id) {
  PgParams p;
  std::string sql = "SELECT " + WebhookColumns() + " FROM webhooks WHERE owner_id = " + p.Add(owner_id) +
                    " AND id = " + p.Add(id);
  CAIRN_ASSIGN_OR_RETURN(PgResult rows, conn.Query(sql, p));
  if (rows.rows() == 0) return WebhookNotFound(id);
  return ReadWebhook(rows.Row(0));
}

Result<DeadLetter> LoadDeadLetter(PgConnection& conn, const std::string& owner_id, const std::string& id) {
  PgParams p;
  std::string sql = "SELECT " + DeadLetterColumns() + " FROM webhook_dead_letters WHERE owner_id = " +
                    p.Add(owner_id) + " AND id = " + p.Add(id);
  CAIRN_ASSIGN_OR_RETURN(PgResult rows, conn.Query(sql, p));
  if (rows.rows() == 0) return DeadLetterNotFound(id);
  return ReadDeadLetter(rows.Row(0));
}

// The newest committed seq as seen inside the writer's transaction, where no other batch can
// commit an event. The counter row (event_counter) moves only when the batch commits
// (pg_writer.cpp), so it would miss the events that earlier writes of the same batch appended;
// the writer's own count includes them, as SQLite's MAX(seq) does inside its write.
int64_t NewestSeq(PgConnection& conn) { return conn.last_seq(); }

Result<std::vector<Webhook>> QueryWebhooks(PgConnection& conn, const std::string& sql, const PgParams& params) {
  CAIRN_ASSIGN_OR_RETURN(PgResult rows, conn.Query(sql, params));
  std::vector<Webhook> hooks;
  hooks.reserve(rows.rows());
  for (int i = 0; i < rows.rows(); ++i) {
    CAIRN_ASSIGN_OR_RETURN(Webhook hook, ReadWebhook(rows.Row(i)));
    hooks.push_back(std::move(hook));
  }
  return hooks;
}

// `active` travels as text that PostgreSQL's boolean input reads.
const char* BoolText(bool value) { return value ? "true" : "false"; }

Status AdvanceCursor(PgConnection& conn, const std::string& id, int64_t seq) {
  PgParams p;
  CAIRN_ASSIGN_OR_RETURN(PgResult done, conn.Query("UPDATE webhooks SET cursor = GREATEST(cursor, " + p.Add(seq) +
                                                   "::bigint) WHERE id = " + p.Add(id), p));
  if (done.affected() == 0) return WebhookNotFound(id);
  return Status::Ok();
}

}  // namespace

PgWebhookStore::PgWebhookStore(std::shared_ptr<PgDatabase> db, const Clock& clock)
    : db_(std::move(db)), clock_(clock), ids_(clock) {}

Result<Webhook> PgWebhookStore::CreateWebhook(const WebhookDraft& draft, size_t max_per_owner) {
  CAIRN_RETURN_IF_ERROR(CheckStorableSelector(draft.selector));
  Webhook hook;
  CAIRN_RETURN_IF_ERROR(db_->Write([&](PgConnection& conn) -> Status {
    PgParams count_params;
    CAIRN_ASSIGN_OR_RETURN(PgResult count, conn.Query("SELECT COUNT(*) FROM webhooks WHERE owner_id = " +
                                                      count_params.Add(draft.owner_id), count_params));
    if (count.Row(0).Int(0) >= static_cast<int64_t>(max_per_owner)) return TooManyWebhooks(max_per_owner);
    hook = NewWebhook(draft, ids_.Next(), NewestSeq(conn), clock_.NowMicros());
    PgParams p;  // in the order of WebhookColumns()
    return conn.Run("INSERT INTO webhooks(" + WebhookColumns() + ") VALUES (" + p.Add(hook.id) + "," +
                        p.Add(hook.owner_id) + "," + p.Add(hook.url) + "," + p.Add(CanonicalJson(hook.selector)) +
                        "," + p.Add(hook.secret) + "," + p.Add(BoolText(hook.active)) + "," + p.Add(hook.cursor) +
                        "::bigint," + p.Add(hook.created_at) + "::bigint," + p.Add(hook.updated_at) + "::bigint," +
                        p.Add(hook.created_by) + "," + p.Add(hook.secret_name) + "," +
                        p.Add(CanonicalJson(hook.headers)) + ")",
                    p);
  }));
  return hook;
}

Result<Webhook> PgWebhookStore::GetWebhook(const std::string& owner_id, const std::string& id) {
  Webhook hook;
  CAIRN_RETURN_IF_ERROR(db_->WithReader([&](PgConnection& conn) -> Status {
    CAIRN_ASSIGN_OR_RETURN(hook, LoadWebhook(conn, owner_id, id));
    return Status::Ok();
  }));
  return hook;
}

Result<std::vector<Webhook>> PgWebhookStore::ListWebhooks(const std::string& owner_id) {
  std::vector<Webhook> hooks;
  CAIRN_RETURN_IF_ERROR(db_->WithReader([&](PgConnection& conn) -> Status {
    PgParams p;
    std::string sql = "SELECT " + WebhookColumns() + " FROM webhooks WHERE owner_id = " + p.Add(owner_id) +
                      " ORDER BY id";
    CAIRN_ASSIGN_OR_RETURN(hooks, QueryWebhooks(conn, sql, p));
    return Status::Ok();
  }));
  return hooks;
}

Result<std::vector<Webhook>> PgWebhookStore::ListAllWebhooks() {
  std::vector<Webhook> hooks;
  CAIRN_RETURN_IF_ERROR(db_->WithReader([&](PgConnection& conn) -> Status {
    CAIRN_ASSIGN_OR_RETURN(hooks, QueryWebhooks(conn, "SELECT " + WebhookColumns() + " FROM webhooks ORDER BY id", {}));
    return Status::Ok();
  }));
  return hooks;
}

Result<Webhook> PgWebhookStore::UpdateWebhook(const std::string& owner_id, const std::string& id,
                                              const WebhookPatch& patch) {
  if (patch.selector) CAIRN_RETURN_IF_ERROR(CheckStorableSelector(*patch.selector));
  Webhook hook;
  CAIRN_RETURN_IF_ERROR(db_->Write([&](PgConnection& conn) -> Status {
    CAIRN_ASSIGN_OR_RETURN(Webhook current, LoadWebhook(conn, owner_id, id));
    CAIRN_ASSIGN_OR_RETURN(hook, PatchedWebhook(std::move(current), patch, clock_.NowMicros(),
                                                [&]() -> Result<int64_t> { return NewestSeq(conn); }));
    PgParams p;
    return conn.Run("UPDATE webhooks SET url = " + p.Add(hook.url) + ", selector = " +
                        p.Add(CanonicalJson(hook.selector)) + ", secret = " + p.Add(hook.secret) + ", active = " +
                        p.Add(BoolText(hook.active)) + ", cursor = " + p.Add(hook.cursor) + "::bigint, updated_at = " +
                        p.Add(hook.updated_at) + "::bigint, secret_name = " + p.Add(hook.secret_name) +
                        ", headers = " + p.Add(CanonicalJson(hook.headers)) + " WHERE id = " + p.Add(hook.id),
                    p);
  }));
  return hook;
}

Status PgWebhookStore::DeleteWebhook(const std::string& owner_id, const std::string& id) {
  return db_->Write([&](PgConnection& conn) -> Status {
    PgParams p;
    CAIRN_ASSIGN_OR_RETURN(PgResult done, conn.Query("DELETE FROM webhooks WHERE owner_id = " + p.Add(owner_id) +
                                                     " AND id = " + p.Add(id), p));
    if (done.affected() == 0) return WebhookNotFound(id);
    PgParams letters;
    return conn.Run("DELETE FROM webhook_dead_letters WHERE webhook_id = " + letters.Add(id), letters);
  });
}

Status PgWebhookStore::AdvanceWebhookCursor(const std::string& id, int64_t seq) {
  return db_->Write([&](PgConnection& conn) { return AdvanceCursor(conn, id, seq); });
}

Result<DeadLetter> PgWebhookStore::DeadLetterAndAdvance(DeadLetter letter) {
  CAIRN_RETURN_IF_ERROR(db_->Write([&](PgConnection& conn) -> Status {
    CAIRN_RETURN_IF_ERROR(AdvanceCursor(conn, letter.webhook_id, letter.event_seq));
    letter = NewDeadLetter(std::move(letter), ids_.Next(), clock_.NowMicros());
    PgParams p;  // in the order of DeadLetterColumns()
    return conn.Run("INSERT INTO webhook_dead_letters(" + DeadLetterColumns() + ") VALUES (" + p.Add(letter.id) +
                        "," + p.Add(letter.webhook_id) + "," + p.Add(letter.owner_id) + "," + p.Add(letter.event_seq) +
                        "::bigint," + p.Add(letter.payload) + "," + p.Add(letter.attempts) + "::bigint," +
                        p.Add(letter.last_status) + "::bigint," + p.Add(letter.last_error) + "," +
                        p.Add(letter.created_at) + "::bigint," + p.Add(letter.updated_at) + "::bigint)",
                    p);
  }));
  return letter;
}

Result<DeadLetterPage> PgWebhookStore::ListDeadLetters(const std::string& owner_id,
                                                       const std::optional<std::string>& webhook_id,
                                                       const std::string& after, size_t limit) {
  DeadLetterPage page;
  CAIRN_RETURN_IF_ERROR(db_->WithReader([&](PgConnection& conn) -> Status {
    PgParams p;
    std::string sql = "SELECT " + DeadLetterColumns() + " FROM webhook_dead_letters WHERE owner_id = " +
                      p.Add(owner_id) + " AND id > " + p.Add(after);
    if (webhook_id) sql += " AND webhook_id = " + p.Add(*webhook_id);
    sql += " ORDER BY id LIMIT " + p.Add(static_cast<int64_t>(limit + 1)) + "::bigint";
    CAIRN_ASSIGN_OR_RETURN(PgResult rows, conn.Query(sql, p));
    for (int i = 0; i < rows.rows(); ++i) {
      if (!AddDeadLetterRow(rows.Row(i), limit, &page)) break;
    }
    return Status::Ok();
  }));
  return page;
}

Result<DeadLetter> PgWebhookStore::GetDeadLetter(const std::string& owner_id, const std::string& id) {
  DeadLetter letter;
  CAIRN_RETURN_IF_ERROR(db_->WithReader([&](PgConnection& conn) -> Status {
    CAIRN_ASSIGN_OR_RETURN(letter, LoadDeadLetter(conn, owner_id, id));
    return Status::Ok();
  }));
  return letter;
}

Result<DeadLetter> PgWebhookStore::RecordDeadLetterAttempt(const std::string& owner_id, const std::string& id,
                                                           std::optional<int64_t> status, const std::string& error) {
  DeadLetter letter;
  CAIRN_RETURN_IF_ERROR(db_->Write([&](PgConnection& conn) -> Status {
    CAIRN_ASSIGN_OR_RETURN(DeadLetter current, LoadDeadLetter(conn, owner_id, id));
    letter = DeadLetterAfterAttempt(std::move(current), status, error, clock_.NowMicros());
    PgParams p;
    return conn.Run("UPDATE webhook_dead_letters SET attempts = " + p.Add(letter.attempts) +
                        "::bigint, last_status = " + p.Add(letter.last_status) + "::bigint, last_error = " +
                        p.Add(letter.last_error) + ", updated_at = " + p.Add(letter.updated_at) +
                        "::bigint WHERE id = " + p.Add(letter.id),
                    p);
  }));
  return letter;
}

Status PgWebhookStore::DeleteDeadLetter(const std::string& owner_id, const std::string& id) {
  return db_->Write([&](PgConnection& conn) -> Status {
    PgParams p;
    CAIRN_ASSIGN_OR_RETURN(PgResult done, conn.Query("DELETE FROM webhook_dead_letters WHERE owner_id = " +
                                                     p.Add(owner_id) + " AND id = " + p.Add(id), p));
    if (done.affected() == 0) return DeadLetterNotFound(id);
    return Status::Ok();
  });
}

}  // namespace cairn::store::postgres
