// SqliteStore's WebhookStore half: the `webhooks` and `webhook_dead_letters` tables (migration 2).
#include "base/json_util.h"
#include "store/sqlite/sqlite_store.h"
#include "store/webhook_rows.h"

namespace cairn::store::sqlite {
namespace {

std::string_view SV(const std::string& s) { return s; }

Result<Webhook> LoadWebhook(Connection& conn, const std::string& owner_id, const std::string& id) {
  CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare("SELECT " + WebhookColumns() +
                                                 " FROM webhooks WHERE owner_id = ?1 AND id = ?2"));
  stmt->Bind(1, SV(owner_id)).Bind(2, SV(id));
  CAIRN_ASSIGN_OR_RETURN(bool found, stmt->Step());
  if (!found) return WebhookNotFound(id);
  return ReadWebhook(*stmt);
}

Result<DeadLetter> LoadDeadLetter(Connection& conn, const std::string& owner_id, const std::string& id) {
  CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare("SELECT " + DeadLetterColumns() +
                                                 " FROM webhook_dead_letters WHERE owner_id = ?1 AND id = ?2"));
  stmt->Bind(1, SV(owner_id)).Bind(2, SV(id));
  CAIRN_ASSIGN_OR_RETURN(bool found, stmt->Step());
  if (!found) return DeadLetterNotFound(id);
  return ReadDeadLetter(*stmt);
}

// The newest committed seq, as seen inside the writer's transaction (so no event can commit
// between reading it and storing a cursor).
Result<int64_t> LastEventSeq(Connection& conn) {
  CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare("SELECT COALESCE(MAX(seq), 0) FROM events"));
  CAIRN_ASSIGN_OR_RETURN(bool row, stmt->Step());
  return row ? stmt->Int(0) : int64_t{0};
}

// Unreadable rows are skipped and passed to `report`.
Result<std::vector<Webhook>> QueryWebhooks(Connection& conn, const std::string& sql,
                                           const std::optional<std::string>& owner_id,
                                           const std::function<void(UnreadableRow)>& report) {
  CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare(sql));
  if (owner_id) stmt->Bind(1, SV(*owner_id));
  std::vector<Webhook> hooks;
  while (true) {
    CAIRN_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) break;
    std::string damage;
    CAIRN_ASSIGN_OR_RETURN(Webhook hook, ReadWebhook(*stmt, &damage));
    if (!damage.empty()) {
      report({"webhook", hook.id, hook.owner_id, std::move(damage)});
      continue;
    }
    hooks.push_back(std::move(hook));
  }
  return hooks;
}

Status AdvanceCursor(Connection& conn, const std::string& id, int64_t seq) {
  CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare("UPDATE webhooks SET cursor = MAX(cursor, ?2) WHERE id = ?1"));
  CAIRN_RETURN_IF_ERROR(stmt->Bind(1, SV(id)).Bind(2, seq).Run());
  if (sqlite3_changes(conn.raw()) == 0) return WebhookNotFound(id);
  return Status::Ok();
}

}  // namespace

Result<Webhook> SqliteStore::CreateWebhook(const WebhookDraft& draft, size_t max_per_owner) {
  CAIRN_RETURN_IF_ERROR(CheckStorableSelector(draft.selector));
  Webhook hook;
  CAIRN_RETURN_IF_ERROR(Write([&](Connection& conn, int64_t*) -> Status {
    CAIRN_ASSIGN_OR_RETURN(auto count, conn.Prepare("SELECT COUNT(*) FROM webhooks WHERE owner_id = ?1"));
    count->Bind(1, SV(draft.owner_id));
    CAIRN_ASSIGN_OR_RETURN(bool counted, count->Step());
    if (counted && count->Int(0) >= static_cast<int64_t>(max_per_owner)) return TooManyWebhooks(max_per_owner);
    count.reset();
    CAIRN_ASSIGN_OR_RETURN(int64_t last_seq, LastEventSeq(conn));
    hook = NewWebhook(draft, ids_.Next(), last_seq, clock_.NowMicros());
    CAIRN_ASSIGN_OR_RETURN(auto insert, conn.Prepare("INSERT INTO webhooks(" + WebhookColumns() +
                                                     ") VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12)"));
    return insert->Bind(1, SV(hook.id)).Bind(2, SV(hook.owner_id)).Bind(3, SV(hook.url))
        .Bind(4, std::string_view(CanonicalJson(hook.selector))).Bind(5, hook.secret)
        .Bind(6, int64_t{hook.active ? 1 : 0}).Bind(7, hook.cursor).Bind(8, hook.created_at).Bind(9, hook.updated_at)
        .Bind(10, SV(hook.created_by)).Bind(11, hook.secret_name).Bind(12, std::string_view(CanonicalJson(hook.headers)))
        .Run();
  }));
  return hook;
}

Result<Webhook> SqliteStore::GetWebhook(const std::string& owner_id, const std::string& id) {
  Result<Webhook> out = Status::Internal("unset");
  CAIRN_RETURN_IF_ERROR(WithReader([&](Connection& conn) {
    out = LoadWebhook(conn, owner_id, id);
    return Status::Ok();
  }));
  return out;
}

Result<std::vector<Webhook>> SqliteStore::ListWebhooks(const std::string& owner_id) {
  Result<std::vector<Webhook>> out = Status::Internal("unset");
  CAIRN_RETURN_IF_ERROR(WithReader([&](Connection& conn) {
    out = QueryWebhooks(conn, "SELECT " + WebhookColumns() + " FROM webhooks WHERE owner_id = ?1 ORDER BY id",
                        owner_id, [this](UnreadableRow row) { ReportUnreadable(std::move(row)); });
    return Status::Ok();
  }));
  return out;
}

Result<std::vector<Webhook>> SqliteStore::ListAllWebhooks() {
  Result<std::vector<Webhook>> out = Status::Internal("unset");
  CAIRN_RETURN_IF_ERROR(WithReader([&](Connection& conn) {
    out = QueryWebhooks(conn, "SELECT " + WebhookColumns() + " FROM webhooks ORDER BY id", std::nullopt,
                        [this](UnreadableRow row) { ReportUnreadable(std::move(row)); });
    return Status::Ok();
  }));
  return out;
}

Result<Webhook> SqliteStore::UpdateWebhook(const std::string& owner_id, const std::string& id,
                                           const WebhookPatch& patch) {
  if (patch.selector) CAIRN_RETURN_IF_ERROR(CheckStorableSelector(*patch.selector));
  Webhook hook;
  CAIRN_RETURN_IF_ERROR(Write([&](Connection& conn, int64_t*) -> Status {
    CAIRN_ASSIGN_OR_RETURN(Webhook current, LoadWebhook(conn, owner_id, id));
    CAIRN_ASSIGN_OR_RETURN(hook, PatchedWebhook(std::move(current), patch, clock_.NowMicros(),
                                                [&] { return LastEventSeq(conn); }));
    CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare("UPDATE webhooks SET url = ?2, selector = ?3, secret = ?4, "
                                                   "active = ?5, cursor = ?6, updated_at = ?7, secret_name = ?8, headers = ?9 WHERE id = ?1"));
    return stmt->Bind(1, SV(hook.id)).Bind(2, SV(hook.url)).Bind(3, std::string_view(CanonicalJson(hook.selector)))
        .Bind(4, hook.secret).Bind(5, int64_t{hook.active ? 1 : 0}).Bind(6, hook.cursor).Bind(7, hook.updated_at)
        .Bind(8, hook.secret_name).Bind(9, std::string_view(CanonicalJson(hook.headers)))
        .Run();
  }));
  return hook;
}

Status SqliteStore::DeleteWebhook(const std::string& owner_id, const std::string& id) {
  return Write([&](Connection& conn, int64_t*) -> Status {
    CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare("DELETE FROM webhooks WHERE owner_id = ?1 AND id = ?2"));
    CAIRN_RETURN_IF_ERROR(stmt->Bind(1, SV(owner_id)).Bind(2, SV(id)).Run());
    if (sqlite3_changes(conn.raw()) == 0) return WebhookNotFound(id);
    CAIRN_ASSIGN_OR_RETURN(auto letters, conn.Prepare("DELETE FROM webhook_dead_letters WHERE webhook_id = ?1"));
    return letters->Bind(1, SV(id)).Run();
  });
}

Status SqliteStore::AdvanceWebhookCursor(const std::string& id, int64_t seq) {
  return Write([&](Connection& conn, int64_t*) { return AdvanceCursor(conn, id, seq); });
}

Result<DeadLetter> SqliteStore::DeadLetterAndAdvance(DeadLetter letter) {
  CAIRN_RETURN_IF_ERROR(Write([&](Connection& conn, int64_t*) -> Status {
    CAIRN_RETURN_IF_ERROR(AdvanceCursor(conn, letter.webhook_id, letter.event_seq));
    letter = NewDeadLetter(std::move(letter), ids_.Next(), clock_.NowMicros());
    CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare("INSERT INTO webhook_dead_letters(" + DeadLetterColumns() +
                                                   ") VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)"));
    return stmt->Bind(1, SV(letter.id)).Bind(2, SV(letter.webhook_id)).Bind(3, SV(letter.owner_id))
        .Bind(4, letter.event_seq).Bind(5, SV(letter.payload)).Bind(6, letter.attempts).Bind(7, letter.last_status)
        .Bind(8, SV(letter.last_error)).Bind(9, letter.created_at).Bind(10, letter.updated_at).Run();
  }));
  return letter;
}

Result<DeadLetterPage> SqliteStore::ListDeadLetters(const std::string& owner_id,
                                                    const std::optional<std::string>& webhook_id,
                                                    const std::string& after, size_t limit) {
  DeadLetterPage page;
  CAIRN_RETURN_IF_ERROR(WithReader([&](Connection& conn) -> Status {
    CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare(
        "SELECT " + DeadLetterColumns() + " FROM webhook_dead_letters WHERE owner_id = ?1 AND id > ?2 AND "
        "(?3 IS NULL OR webhook_id = ?3) ORDER BY id LIMIT ?4"));
    stmt->Bind(1, SV(owner_id)).Bind(2, SV(after)).Bind(3, webhook_id).Bind(4, static_cast<int64_t>(limit + 1));
    while (true) {
      CAIRN_ASSIGN_OR_RETURN(bool row, stmt->Step());
      if (!row || !AddDeadLetterRow(*stmt, limit, &page)) break;
    }
    return Status::Ok();
  }));
  return page;
}

Result<DeadLetter> SqliteStore::GetDeadLetter(const std::string& owner_id, const std::string& id) {
  Result<DeadLetter> out = Status::Internal("unset");
  CAIRN_RETURN_IF_ERROR(WithReader([&](Connection& conn) {
    out = LoadDeadLetter(conn, owner_id, id);
    return Status::Ok();
  }));
  return out;
}

Result<DeadLetter> SqliteStore::RecordDeadLetterAttempt(const std::string& owner_id, const std::string& id,
                                                        std::optional<int64_t> status, const std::string& error) {
  DeadLetter letter;
  CAIRN_RETURN_IF_ERROR(Write([&](Connection& conn, int64_t*) -> Status {
    CAIRN_ASSIGN_OR_RETURN(DeadLetter current, LoadDeadLetter(conn, owner_id, id));
    letter = DeadLetterAfterAttempt(std::move(current), status, error, clock_.NowMicros());
    CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare("UPDATE webhook_dead_letters SET attempts = ?2, last_status = ?3, "
                                                   "last_error = ?4, updated_at = ?5 WHERE id = ?1"));
    return stmt->Bind(1, SV(letter.id)).Bind(2, letter.attempts).Bind(3, letter.last_status)
        .Bind(4, SV(letter.last_error)).Bind(5, letter.updated_at).Run();
  }));
  return letter;
}

Status SqliteStore::DeleteDeadLetter(const std::string& owner_id, const std::string& id) {
  return Write([&](Connection& conn, int64_t*) -> Status {
    CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare("DELETE FROM webhook_dead_letters WHERE owner_id = ?1 AND id = ?2"));
    CAIRN_RETURN_IF_ERROR(stmt->Bind(1, SV(owner_id)).Bind(2, SV(id)).Run());
    if (sqlite3_changes(conn.raw()) == 0) return DeadLetterNotFound(id);
    return Status::Ok();
  });
}

}  // namespace cairn::store::sqlite
