// SqliteStore's CursorStore and ClaimStore: consumer_cursors and executor_claims (migration 3).
#include "store/sqlite/sqlite_store.h"

#include "base/log.h"

namespace cairn::store::sqlite {

Result<std::optional<int64_t>> SqliteStore::LoadCursor(const std::string& consumer) {
  std::optional<int64_t> seq;
  CAIRN_RETURN_IF_ERROR(WithReader([&](Connection& conn) -> Status {
    CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare("SELECT seq FROM consumer_cursors WHERE consumer = ?1"));
    stmt->Bind(1, std::string_view(consumer));
    CAIRN_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (row) seq = stmt->Int(0);
    return Status::Ok();
  }));
  return seq;
}

Status SqliteStore::WriteCursor(Connection& conn, std::string_view consumer, int64_t seq, int64_t now) {
  CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare(
      "INSERT INTO consumer_cursors(consumer, seq, updated_at) VALUES (?1, ?2, ?3) "
      "ON CONFLICT(consumer) DO UPDATE SET seq = excluded.seq, updated_at = excluded.updated_at"));
  return stmt->Bind(1, consumer).Bind(2, seq).Bind(3, now).Run();
}

Status SqliteStore::SaveCursor(const std::string& consumer, int64_t seq) {
  return Write([&](Connection& conn, int64_t*) -> Status { return WriteCursor(conn, consumer, seq, clock_.NowMicros()); });
}

void SqliteStore::SaveCursorSoon(const std::string& consumer, int64_t seq) {
  // The writer runs its queue in order, so a write submitted after this one commits with it or
  // after it.
  writer_->Post([this, consumer, seq](Connection& conn) { return WriteCursor(conn, consumer, seq, clock_.NowMicros()); },
                [consumer](const Status& status) {
                  if (!status.ok()) CAIRN_LOG_WARN("store: saving cursor {} failed: {}", consumer, status.message());
                });
}

Status SqliteStore::DeleteCursor(const std::string& consumer) {
  return Write([&](Connection& conn, int64_t*) -> Status {
    CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare("DELETE FROM consumer_cursors WHERE consumer = ?1"));
    return stmt->Bind(1, std::string_view(consumer)).Run();
  });
}

Result<int64_t> SqliteStore::ClaimTrigger(const TriggerClaim& claim) {
  int64_t attempt = 1;
  CAIRN_RETURN_IF_ERROR(Write([&](Connection& conn, int64_t*) -> Status {
    CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare(
        "INSERT INTO executor_claims(consumer, trigger_key, trigger_id, owner_id, trigger_seq, attempt, claimed_at) "
        "VALUES (?1, ?2, ?3, ?4, ?5, 1, ?6) ON CONFLICT(consumer, trigger_key) DO UPDATE SET "
        "attempt = attempt + 1, claimed_at = excluded.claimed_at, trigger_seq = excluded.trigger_seq RETURNING attempt"));
    stmt->Bind(1, std::string_view(claim.consumer)).Bind(2, std::string_view(claim.trigger_key))
        .Bind(3, std::string_view(claim.trigger_id)).Bind(4, std::string_view(claim.owner_id))
        .Bind(5, claim.trigger_seq).Bind(6, clock_.NowMicros());
    CAIRN_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) return Status::Internal("claim returned no attempt");
    attempt = stmt->Int(0);
    return Status::Ok();
  }));
  return attempt;
}

Result<std::vector<TriggerClaim>> SqliteStore::ListClaims(const std::string& consumer) {
  std::vector<TriggerClaim> claims;
  CAIRN_RETURN_IF_ERROR(WithReader([&](Connection& conn) -> Status {
    CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare(
        "SELECT trigger_key, trigger_id, owner_id, trigger_seq, attempt, claimed_at FROM executor_claims "
        "WHERE consumer = ?1 ORDER BY trigger_seq"));
    stmt->Bind(1, std::string_view(consumer));
    while (true) {
      CAIRN_ASSIGN_OR_RETURN(bool row, stmt->Step());
      if (!row) break;
      claims.push_back(TriggerClaim{consumer, std::string(stmt->Text(0)), std::string(stmt->Text(1)),
                                    std::string(stmt->Text(2)), stmt->Int(3), stmt->Int(4), stmt->Int(5)});
    }
    return Status::Ok();
  }));
  return claims;
}

Status SqliteStore::ReleaseClaims(const std::string& consumer, const std::vector<std::string>& trigger_keys) {
  if (trigger_keys.empty()) return Status::Ok();
  return Write([&](Connection& conn, int64_t*) -> Status {
    CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare("DELETE FROM executor_claims WHERE consumer = ?1 AND trigger_key = ?2"));
    for (const auto& key : trigger_keys) {
      CAIRN_RETURN_IF_ERROR(stmt->Bind(1, std::string_view(consumer)).Bind(2, std::string_view(key)).Run());
      stmt->Reset();
    }
    return Status::Ok();
  });
}

}  // namespace cairn::store::sqlite
