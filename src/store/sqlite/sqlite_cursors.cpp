// SqliteStore's CursorStore: one row per consumer in consumer_cursors (migration 3).
#include "store/sqlite/sqlite_store.h"

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

Status SqliteStore::SaveCursor(const std::string& consumer, int64_t seq) {
  return Write([&](Connection& conn, int64_t*) -> Status {
    CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare(
        "INSERT INTO consumer_cursors(consumer, seq, updated_at) VALUES (?1, ?2, ?3) "
        "ON CONFLICT(consumer) DO UPDATE SET seq = excluded.seq, updated_at = excluded.updated_at"));
    return stmt->Bind(1, std::string_view(consumer)).Bind(2, seq).Bind(3, clock_.NowMicros()).Run();
  });
}

Status SqliteStore::DeleteCursor(const std::string& consumer) {
  return Write([&](Connection& conn, int64_t*) -> Status {
    CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare("DELETE FROM consumer_cursors WHERE consumer = ?1"));
    return stmt->Bind(1, std::string_view(consumer)).Run();
  });
}

}  // namespace cairn::store::sqlite
