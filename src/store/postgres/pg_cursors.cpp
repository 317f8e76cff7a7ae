// PgStore's CursorStore and ClaimStore: consumer_cursors and executor_claims (migration 1).
#include "store/postgres/pg_store.h"

#include "base/log.h"
#include "store/postgres/pg_rows.h"
#include "store/record_rows.h"

namespace cairn::store::postgres {

Result<std::optional<int64_t>> PgStore::LoadCursor(const std::string& consumer) {
  std::optional<int64_t> seq;
  CAIRN_RETURN_IF_ERROR(db_->WithReader([&](PgConnection& conn) -> Status {
    PgParams params;
    CAIRN_ASSIGN_OR_RETURN(PgResult row, conn.Query("SELECT seq FROM consumer_cursors WHERE consumer = " +
                                                    params.Add(consumer), params));
    if (row.rows() > 0) seq = row.Row(0).Int(0);
    return Status::Ok();
  }));
  return seq;
}

Status PgStore::SaveCursor(const std::string& consumer, int64_t seq) {
  return db_->Write([&](PgConnection& conn) -> Status {
    return WriteCursor(conn, consumer, seq, clock_.NowMicros());
  });
}

void PgStore::SaveCursorSoon(const std::string& consumer, int64_t seq) {
  // The writer runs its queue in order, so a write submitted after this one commits with it or
  // after it.
  db_->writer().Post(
      [this, consumer, seq](PgConnection& conn) { return WriteCursor(conn, consumer, seq, clock_.NowMicros()); },
      [consumer](const Status& status) {
        if (!status.ok()) CAIRN_LOG_WARN("store: saving cursor {} failed: {}", consumer, status.message());
      });
}

Status PgStore::DeleteCursor(const std::string& consumer) {
  return db_->Write([&](PgConnection& conn) -> Status {
    PgParams p;
    return conn.Run("DELETE FROM consumer_cursors WHERE consumer = " + p.Add(consumer), p);
  });
}

Result<int64_t> PgStore::ClaimTrigger(const TriggerClaim& claim) {
  int64_t attempt = 1;
  CAIRN_RETURN_IF_ERROR(db_->Write([&](PgConnection& conn) -> Status {
    PgParams p;
    CAIRN_ASSIGN_OR_RETURN(PgResult row, conn.Query(
        "INSERT INTO executor_claims(consumer, trigger_key, trigger_id, owner_id, trigger_seq, attempt, claimed_at) "
        "VALUES (" + p.Add(claim.consumer) + "," + p.Add(claim.trigger_key) + "," + p.Add(claim.trigger_id) + "," +
        p.Add(claim.owner_id) + "," + p.Add(claim.trigger_seq) + "::bigint, 1," + p.Add(clock_.NowMicros()) +
        "::bigint) ON CONFLICT (consumer, trigger_key) DO UPDATE SET attempt = executor_claims.attempt + 1, "
        "claimed_at = excluded.claimed_at, trigger_seq = excluded.trigger_seq RETURNING attempt", p));
    attempt = row.Row(0).Int(0);
    return Status::Ok();
  }));
  return attempt;
}

Result<std::vector<TriggerClaim>> PgStore::ListClaims(const std::string& consumer) {
  std::vector<TriggerClaim> claims;
  CAIRN_RETURN_IF_ERROR(db_->WithReader([&](PgConnection& conn) -> Status {
    PgParams p;
    CAIRN_ASSIGN_OR_RETURN(PgResult rows, conn.Query(
        "SELECT trigger_key, trigger_id, owner_id, trigger_seq, attempt, claimed_at FROM executor_claims "
        "WHERE consumer = " + p.Add(consumer) + " ORDER BY trigger_seq", p));
    for (int i = 0; i < rows.rows(); ++i) {
      PgRow row = rows.Row(i);
      claims.push_back(TriggerClaim{consumer, std::string(row.Text(0)), std::string(row.Text(1)),
                                    std::string(row.Text(2)), row.Int(3), row.Int(4), row.Int(5)});
    }
    return Status::Ok();
  }));
  return claims;
}

Status PgStore::ReleaseClaims(const std::string& consumer, const std::vector<std::string>& trigger_keys) {
  if (trigger_keys.empty()) return Status::Ok();
  return db_->Write([&](PgConnection& conn) -> Status {
    PgParams p;
    return conn.Run("DELETE FROM executor_claims WHERE consumer = " + p.Add(consumer) +
                        " AND trigger_key IN (SELECT jsonb_array_elements_text(" + p.Add(TagsJson(trigger_keys)) +
                        "::jsonb))", p);
  });
}

}  // namespace cairn::store::postgres
