// SqliteStore's TextIndex: the FTS5 table `breadcrumbs_fts` (migration 4), kept by triggers in
// every write's transaction, joined to `breadcrumbs` for the tenant, expiry and filters.
#include <string>
#include <vector>

#include "store/sqlite/breadcrumb_rows.h"
#include "store/sqlite/fts_query.h"
#include "store/sqlite/record_filters.h"
#include "store/sqlite/sqlite_store.h"

namespace cairn::store::sqlite {

Result<std::vector<TextHit>> SqliteStore::SearchText(const std::string& owner_id, const TextSearchQuery& query) {
  if (query.limit < 1 || query.limit > kMaxSearchLimit) {
    return Status(StatusCode::kInvalidArgument,
                  "limit: must be from 1 to " + std::to_string(kMaxSearchLimit), "limit");
  }
  CAIRN_ASSIGN_OR_RETURN(std::string match, CompileFtsQuery(query.text));
  std::vector<SqlValue> binds{match, owner_id, clock_.NowMicros()};
  // Weights per column (title, description, tags, body): a word in the title says most.
  std::string sql = "SELECT " + BreadcrumbColumns() + ", -bm25(breadcrumbs_fts, 4.0, 2.0, 2.0, 1.0) AS score, " +
                    (query.snippets ? "snippet(breadcrumbs_fts, -1, '**', '**', '…', 16)" : "''") +
                    " FROM breadcrumbs_fts JOIN breadcrumbs b ON b.rid = breadcrumbs_fts.rowid"
                    " WHERE breadcrumbs_fts MATCH ?1 AND b.owner_id = ?2 AND (b.expires_at IS NULL OR b.expires_at > ?3)";
  sql += RecordFilterSql(query, binds);
  binds.push_back(static_cast<int64_t>(query.limit));
  sql += " ORDER BY score DESC, b.rid DESC LIMIT ?" + std::to_string(binds.size());

  std::vector<TextHit> hits;
  std::vector<UnreadableRow> unreadable;
  const int score_column = 23;  // after the 23 BreadcrumbColumns()
  CAIRN_RETURN_IF_ERROR(WithReader([&](Connection& conn) -> Status {
    CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare(sql));
    for (size_t i = 0; i < binds.size(); ++i) stmt->BindValue(static_cast<int>(i + 1), binds[i]);
    while (true) {
      CAIRN_ASSIGN_OR_RETURN(bool row, stmt->Step());
      if (!row) break;
      int64_t rid = 0;
      std::string damage;
      CAIRN_ASSIGN_OR_RETURN(model::Breadcrumb crumb, ReadBreadcrumb(*stmt, &rid, &damage));
      if (!damage.empty()) {
        unreadable.push_back({"breadcrumb", crumb.id, owner_id, std::move(damage)});
        continue;
      }
      TextHit hit;
      hit.breadcrumb = std::move(crumb);
      hit.score = stmt->Double(score_column);
      hit.snippet = std::string(stmt->Text(score_column + 1));
      hits.push_back(std::move(hit));
    }
    return Status::Ok();
  }));
  for (auto& row : unreadable) ReportUnreadable(std::move(row));
  return hits;
}

}  // namespace cairn::store::sqlite
