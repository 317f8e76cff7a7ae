#include "store/sqlite/record_filters.h"

namespace cairn::store::sqlite {

namespace {

std::string Param(std::vector<SqlValue>& binds, SqlValue value) {
  binds.push_back(std::move(value));
  return "?" + std::to_string(binds.size());
}

}  // namespace

std::string ReadScopeSql(const model::AccessScope& reader, std::vector<SqlValue>& binds) {
  if (reader.admin) return "";
  // As AccessScope::MayRead: public, the creator, else acl.read when the record has one, else team.
  const std::string principal = Param(binds, reader.principal);
  std::string named = principal;
  for (const std::string& role : reader.roles) {
    named += ", " + Param(binds, std::string(model::kAclRolePrefix) + role);
  }
  return " AND (b.visibility = 'public' OR (b.created_by = " + principal + " AND " + principal +
         " <> '') OR CASE WHEN json_type(b.acl, '$.read') IS NULL THEN b.visibility = 'team' ELSE EXISTS (SELECT 1 "
         "FROM json_each(b.acl, '$.read') WHERE value IN (" + named + ")) END)";
}

std::string RecordFilterSql(const TextSearchQuery& filters, std::vector<SqlValue>& binds) {
  auto param = [&binds](SqlValue value) { return Param(binds, std::move(value)); };
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
  if (filters.reader) sql += ReadScopeSql(*filters.reader, binds);
  if (filters.exclude_secret) sql += " AND b.sensitivity <> 'secret'";
  return sql;
}

}  // namespace cairn::store::sqlite
