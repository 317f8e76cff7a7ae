#include "store/sqlite/record_filters.h"

namespace cairn::store::sqlite {

std::string RecordFilterSql(const TextSearchQuery& filters, std::vector<SqlValue>& binds) {
  auto param = [&binds](SqlValue value) {
    binds.push_back(std::move(value));
    return "?" + std::to_string(binds.size());
  };
  std::string sql;
  if (filters.schema_name) sql += " AND b.schema_name = " + param(*filters.schema_name);
  for (const std::string& tag : filters.all_tags) {
    sql += " AND b.rid IN (SELECT rid FROM breadcrumb_tags WHERE tag = " + param(tag) + ")";
  }
  if (filters.path_prefix) {
    // Whole segments, as BuildListQuery: the prefix itself or anything under "prefix/".
    sql += " AND (b.path = " + param(*filters.path_prefix) + " OR (b.path >= " + param(*filters.path_prefix + "/") +
           " AND b.path < " + param(*filters.path_prefix + "0") + "))";
  }
  return sql;
}

}  // namespace cairn::store::sqlite
