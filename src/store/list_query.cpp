#include "store/list_query.h"

#include "store/record_rows.h"

namespace cairn::store {

Result<std::string> BuildListSql(const std::string& columns, const std::string& owner_id,
                                 const model::BreadcrumbQuery& query, int64_t now_micros,
                                 const ListQueryDialect& d) {
  std::string where = "b.owner_id = " + d.text(owner_id) + " AND (b.expires_at IS NULL OR b.expires_at > " +
                      d.integer(now_micros) + ")";
  if (query.schema_name) where += " AND b.schema_name = " + d.text(*query.schema_name);
  // With a tag, the scan is driven by that tag's rows in rid order (the (tag, rid) primary key),
  // so a page costs about its size instead of reading and sorting every record with the tag.
  const bool tag_driven = !query.all_tags.empty() && !query.path;
  std::string from = "breadcrumbs b";
  std::string order_rid = "b.rid";
  for (size_t i = 0; i < query.all_tags.size(); ++i) {
    if (i == 0 && tag_driven) {
      from = "breadcrumb_tags t JOIN breadcrumbs b ON b.rid = t.rid";
      order_rid = "t.rid";
      where += " AND t.tag = " + d.text(query.all_tags[i]);
      continue;
    }
    where += " AND b.rid IN (SELECT rid FROM breadcrumb_tags WHERE tag = " + d.text(query.all_tags[i]) + ")";
  }
  if (!query.any_tags.empty()) {
    std::string list;
    for (const auto& tag : query.any_tags) list += (list.empty() ? "" : ",") + d.text(tag);
    where += " AND b.rid IN (SELECT rid FROM breadcrumb_tags WHERE tag IN (" + list + "))";
  }
  if (query.path) where += " AND b.path = " + d.text(*query.path);
  if (query.path_prefix) {
    // Whole segments: the prefix itself, or anything under "prefix/" ('0' sorts right after '/').
    where += " AND (b.path = " + d.text(*query.path_prefix) + " OR (b.path >= " + d.text(*query.path_prefix + "/") +
             " AND b.path < " + d.text(*query.path_prefix + "0") + "))";
  }
  for (const auto& rule : query.context_match) where += " AND " + d.rule(rule);
  if (query.reader) where += d.read_scope(*query.reader);
  if (query.exclude_secret) where += " AND b.sensitivity <> 'secret'";
  if (query.created_by) where += " AND b.created_by = " + d.text(*query.created_by);
  bool newest_first = query.order == model::SortOrder::kNewestFirst;
  if (query.cursor) {
    auto rid = DecodeCursor(*query.cursor);
    if (!rid) return Status(StatusCode::kInvalidArgument, "cursor: is not one this server issued", "cursor");
    where += " AND " + order_rid + (newest_first ? " < " : " > ") + d.integer(*rid);
  }
  return "SELECT " + columns + " FROM " + from + " WHERE " + where + " ORDER BY " + order_rid + " " +
         (newest_first ? "DESC" : "ASC") + " LIMIT " + d.integer(static_cast<int64_t>(query.limit + 1));
}

}  // namespace cairn::store
