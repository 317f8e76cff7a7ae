#include "store/postgres/pg_query.h"

#include <boost/json/serialize.hpp>
#include <functional>

#include "store/list_query.h"

namespace cairn::store::postgres {
namespace json = boost::json;
namespace {

// A validated model path ("$.a.b[0]": names [A-Za-z0-9_-]+, decimal indices) as a strict SQL/JSON
// path with quoted names: strict, because lax mode would look into arrays for `.a` where SQLite
// (and the contract) finds nothing.
std::string StrictJsonPath(const std::string& path) {
  std::string out = "strict $";
  size_t i = 1;  // after '$'
  while (i < path.size()) {
    if (path[i] == '.') {
      size_t end = path.find_first_of(".[", i + 1);
      if (end == std::string::npos) end = path.size();
      out += ".\"" + path.substr(i + 1, end - i - 1) + "\"";
      i = end;
    } else {  // "[index]"
      size_t end = path.find(']', i);
      if (end == std::string::npos) end = path.size() - 1;
      out += path.substr(i, end - i + 1);
      i = end + 1;
    }
  }
  return out;
}

// SQL that is true when the jsonb value `x` equals `v` as JSON: jsonb's equality compares numbers
// numerically, objects whatever their key order and arrays element by element.
std::string Equals(const std::string& x, const json::value& v, PgParams& p) {
  return "(" + x + " = " + p.Add(json::serialize(v)) + "::jsonb)";
}

std::string Compare(const std::string& x, const char* op, const json::value& v, PgParams& p) {
  if (v.is_string()) {
    return "(jsonb_typeof(" + x + ") = 'string' AND (" + x + " #>> '{}') COLLATE \"C\" " + op + " " +
           p.Add(std::string_view(v.get_string())) + "::text COLLATE \"C\")";
  }
  // CASE, not AND: PostgreSQL may evaluate AND's operands in any order, and a string does not cast.
  return "(CASE WHEN jsonb_typeof(" + x + ") = 'number' THEN (" + x + ")::numeric " + op + " " +
         p.Add(json::serialize(v)) + "::numeric ELSE false END)";
}

// True when the array `x` holds an element equal to `v`, or, for a string `v`, when the string `x`
// contains it.
std::string Contains(const std::string& x, const json::value& v, PgParams& p) {
  std::string sql = "(CASE jsonb_typeof(" + x + ") WHEN 'array' THEN EXISTS (SELECT 1 FROM jsonb_array_elements(" + x +
                    ") el WHERE el = " + p.Add(json::serialize(v)) + "::jsonb)";
  if (v.is_string()) {
    sql += " WHEN 'string' THEN strpos(" + x + " #>> '{}', " + p.Add(std::string_view(v.get_string())) + "::text) > 0";
  }
  return sql + " ELSE false END)";
}

std::string AnyOf(const json::array& options, const std::function<std::string(const json::value&)>& one) {
  std::string sql;
  for (const auto& option : options) sql += (sql.empty() ? "(" : " OR ") + one(option);
  return sql.empty() ? "false" : sql + ")";
}

std::string RuleSql(const model::ContextRule& rule, PgParams& p) {
  const std::string x = "jsonb_path_query_first(b.doc, " + p.Add(StrictJsonPath(rule.path)) + "::jsonpath, '{}', true)";
  using model::RuleOp;
  switch (rule.op) {
    case RuleOp::kExists: return "(" + x + (rule.value.as_bool() ? " IS NOT NULL)" : " IS NULL)");
    case RuleOp::kEq: return Equals(x, rule.value, p);
    case RuleOp::kNe: return "(NOT COALESCE(" + Equals(x, rule.value, p) + ", false))";
    case RuleOp::kGt: return Compare(x, ">", rule.value, p);
    case RuleOp::kGte: return Compare(x, ">=", rule.value, p);
    case RuleOp::kLt: return Compare(x, "<", rule.value, p);
    case RuleOp::kLte: return Compare(x, "<=", rule.value, p);
    case RuleOp::kIn:
      return AnyOf(rule.value.get_array(), [&](const json::value& v) { return Equals(x, v, p); });
    case RuleOp::kContains: return Contains(x, rule.value, p);
    case RuleOp::kContainsAny:
      return AnyOf(rule.value.get_array(), [&](const json::value& v) { return Contains(x, v, p); });
    case RuleOp::kPrefix:
      return "(jsonb_typeof(" + x + ") = 'string' AND starts_with(" + x + " #>> '{}', " +
             p.Add(std::string_view(rule.value.as_string())) + "::text))";
  }
  return "false";
}

// " AND ...": the record's path is `prefix` or under it, whole segments ("a/b" holds "a/b" and
// "a/b/c", not "a/bc"): "prefix/" up to "prefix0" ('0' sorts right after '/', paths compare
// byte-wise).
std::string PathPrefixSql(const std::string& prefix, PgParams& p) {
  return " AND (b.path = " + p.Add(prefix) + " OR (b.path >= " + p.Add(prefix + "/") + " AND b.path < " +
         p.Add(prefix + "0") + "))";
}

}  // namespace

std::string PgReadScopeSql(const model::AccessScope& reader, PgParams& p) {
  if (reader.admin) return "";
  // As AccessScope::MayRead: public, the creator, else acl.read when the record has one, else team.
  const std::string principal = p.Add(reader.principal) + "::text";
  std::string named = principal;
  for (const std::string& role : reader.roles) named += ", " + p.Add(std::string(model::kAclRolePrefix) + role);
  const std::string read = "(b.acl::jsonb -> 'read')";
  return " AND (b.visibility = 'public' OR (b.created_by = " + principal + " AND " + principal +
         " <> '') OR CASE WHEN " + read + " IS NULL THEN b.visibility = 'team' WHEN jsonb_typeof(" + read +
         ") = 'array' THEN EXISTS (SELECT 1 FROM jsonb_array_elements_text(" + read + ") r WHERE r IN (" + named +
         ")) ELSE false END)";
}

std::string PgRecordFilterSql(const TextSearchQuery& filters, PgParams& p) {
  std::string sql;
  if (filters.schema_name) sql += " AND b.schema_name = " + p.Add(*filters.schema_name);
  for (const std::string& tag : filters.all_tags) {
    sql += " AND b.rid IN (SELECT rid FROM breadcrumb_tags WHERE tag = " + p.Add(tag) + ")";
  }
  if (filters.path_prefix) sql += PathPrefixSql(*filters.path_prefix, p);
  if (filters.reader) sql += PgReadScopeSql(*filters.reader, p);
  if (filters.exclude_secret) sql += " AND b.sensitivity <> 'secret'";
  return sql;
}

Result<PgQuery> BuildPgListQuery(const std::string& columns, const std::string& owner_id,
                                 const model::BreadcrumbQuery& query, int64_t now_micros) {
  PgQuery out;
  PgParams& p = out.params;
  ListQueryDialect dialect;
  dialect.text = [&p](const std::string& value) { return p.Add(value); };
  dialect.integer = [&p](int64_t value) { return p.Add(value) + "::bigint"; };
  dialect.rule = [&p](const model::ContextRule& rule) { return RuleSql(rule, p); };
  dialect.read_scope = [&p](const model::AccessScope& reader) { return PgReadScopeSql(reader, p); };
  CAIRN_ASSIGN_OR_RETURN(out.sql, BuildListSql(columns, owner_id, query, now_micros, dialect));
  return out;
}

}  // namespace cairn::store::postgres
