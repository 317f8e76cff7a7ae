// SqliteStore's TextIndex: the FTS5 table `breadcrumbs_fts` (migration 4), joined to
// `breadcrumbs` for the tenant, expiry and filters. Triggers remove old text in the write's
// transaction and note new text in `breadcrumbs_fts_pending` (migration 6), indexed in batches and
// before every search.
#include <string>
#include <vector>

#include "store/search_words.h"
#include "store/sqlite/breadcrumb_rows.h"
#include "store/sqlite/fts_query.h"
#include "store/sqlite/migrations.h"
#include "store/sqlite/record_filters.h"
#include "store/sqlite/sqlite_store.h"

namespace cairn::store::sqlite {

Result<std::vector<TextHit>> SqliteStore::SearchText(const std::string& owner_id, const TextSearchQuery& query) {
  CAIRN_RETURN_IF_ERROR(CheckSearchLimit(query.limit));
  CAIRN_ASSIGN_OR_RETURN(std::string match, CompileFtsQuery(query.text));
  CAIRN_RETURN_IF_ERROR(IndexPendingText());
  std::vector<SqlValue> binds;
  binds.reserve(8);
  binds.emplace_back(match);
  binds.emplace_back(owner_id);
  binds.emplace_back(clock_.NowMicros());
  // Two steps: the ranking reads only what the tenant, expiry and filters need of each match; the
  // record and its snippet are read for the `limit` best alone (computing them for every match
  // before the sort made a common word cost a full decode of every record holding it).
  // Weights per column (title, description, tags, body): a word in the title says most.
  std::string rank_sql =
      "SELECT b.rid, -bm25(breadcrumbs_fts, 4.0, 2.0, 2.0, 1.0) AS score FROM breadcrumbs_fts JOIN breadcrumbs b "
      "ON b.rid = breadcrumbs_fts.rowid WHERE breadcrumbs_fts MATCH ?1 AND b.owner_id = ?2 AND "
      "(b.expires_at IS NULL OR b.expires_at > ?3)";
  rank_sql += RecordFilterSql(query, binds);
  binds.emplace_back(static_cast<int64_t>(query.limit));
  rank_sql += " ORDER BY score DESC, b.rid DESC LIMIT ?" + std::to_string(binds.size());
  const std::string read_sql =
      query.snippets ? "SELECT " + BreadcrumbColumns() +
                           ", snippet(breadcrumbs_fts, -1, '**', '**', '…', 16) FROM breadcrumbs_fts JOIN breadcrumbs b "
                           "ON b.rid = breadcrumbs_fts.rowid WHERE breadcrumbs_fts MATCH ?1 AND breadcrumbs_fts.rowid = ?2"
                     : "SELECT " + BreadcrumbColumns() + ", '' FROM breadcrumbs b WHERE b.rid = ?2 AND ?1 IS NOT NULL";

  std::vector<TextHit> hits;
  std::vector<UnreadableRow> unreadable;
  const int snippet_column = 24;  // after the 24 BreadcrumbColumns()
  CAIRN_RETURN_IF_ERROR(WithReader([&](Connection& conn) -> Status {
    std::vector<std::pair<int64_t, double>> ranked;
    {
      CAIRN_ASSIGN_OR_RETURN(auto rank, conn.Prepare(rank_sql));
      for (size_t i = 0; i < binds.size(); ++i) rank->BindValue(static_cast<int>(i + 1), binds[i]);
      while (true) {
        CAIRN_ASSIGN_OR_RETURN(bool row, rank->Step());
        if (!row) break;
        ranked.emplace_back(rank->Int(0), rank->Double(1));
      }
    }
    CAIRN_ASSIGN_OR_RETURN(auto read, conn.Prepare(read_sql));
    for (const auto& [ranked_rid, score] : ranked) {
      read->Reset();
      read->Bind(1, std::string_view(match)).Bind(2, ranked_rid);
      CAIRN_ASSIGN_OR_RETURN(bool row, read->Step());
      if (!row) continue;  // deleted since it was ranked
      int64_t rid = 0;
      std::string damage;
      CAIRN_ASSIGN_OR_RETURN(model::Breadcrumb crumb, ReadBreadcrumb(*read, &rid, &damage));
      if (!damage.empty()) {
        unreadable.push_back({"breadcrumb", crumb.id, owner_id, std::move(damage)});
        continue;
      }
      TextHit hit;
      hit.breadcrumb = std::move(crumb);
      hit.score = score;
      hit.snippet = std::string(read->Text(snippet_column));
      hits.push_back(std::move(hit));
    }
    return Status::Ok();
  }));
  for (auto& row : unreadable) ReportUnreadable(std::move(row));
  return hits;
}

Status SqliteStore::IndexPendingText() {
  bool pending = false;
  CAIRN_RETURN_IF_ERROR(WithReader([&](Connection& conn) -> Status {
    CAIRN_ASSIGN_OR_RETURN(auto query, conn.Prepare(FullTextPendingQuery()));
    CAIRN_ASSIGN_OR_RETURN(pending, query->Step());
    return Status::Ok();
  }));
  if (!pending) return Status::Ok();  // every committed write's text is in the index
  return Write([](Connection& conn, int64_t*) -> Status {
    for (const std::string& sql : FullTextPendingStatements()) CAIRN_RETURN_IF_ERROR(conn.ExecCached(sql));
    return Status::Ok();
  });
}

}  // namespace cairn::store::sqlite
