#include "store/sqlite/query_builder.h"

#include <functional>

#include "store/list_query.h"
#include "store/sqlite/record_filters.h"

namespace cairn::store::sqlite {
namespace json = boost::json;
namespace {

// Collects bind values; each Param() is a numbered placeholder ("?7") that may be used more
// than once in the SQL text, so the order of text and binds never has to line up.
struct Binder {
  std::vector<SqlValue>& binds;
  std::string Param(SqlValue value) {
    binds.push_back(std::move(value));
    return "?" + std::to_string(binds.size());
  }
};

SqlValue NumberValue(const json::value& v) {
  if (v.is_int64()) return v.get_int64();
  return v.to_number<double>();
}

// A JSON value inside `b.context`, named by an SQL expression that yields its JSON path: a bound
// parameter ("?3"), json_each's `je.fullkey`, or either extended by a bound suffix.
std::string TypeOf(const std::string& path_sql) { return "json_type(b.context, " + path_sql + ")"; }
std::string ValueOf(const std::string& path_sql) { return "json_extract(b.context, " + path_sql + ")"; }

// SQL that is true when the value at `path_sql` equals `v` as JSON: numbers numerically (1 = 1.0),
// strings as text, booleans and null by type, arrays element by element and objects member by
// member whatever their key order.
std::string TypedEquals(const std::string& path_sql, const json::value& v, Binder& b) {
  std::string type = TypeOf(path_sql);
  switch (v.kind()) {
    case json::kind::null: return "(" + type + " = 'null')";
    case json::kind::bool_: return "(" + type + (v.get_bool() ? " = 'true')" : " = 'false')");
    case json::kind::string:
      return "(" + type + " = 'text' AND " + ValueOf(path_sql) + " = " + b.Param(std::string(v.get_string())) + ")";
    case json::kind::array: {
      const json::array& items = v.get_array();
      std::string sql = "(" + type + " = 'array' AND json_array_length(b.context, " + path_sql +
                        ") = " + std::to_string(items.size());
      for (size_t i = 0; i < items.size(); ++i) {
        sql += " AND " + TypedEquals(path_sql + " || " + b.Param("[" + std::to_string(i) + "]"), items[i], b);
      }
      return sql + ")";
    }
    case json::kind::object: {
      // Keys are quoted path labels; SQLite's JSON paths cannot express a key holding '"'.
      const json::object& members = v.get_object();
      std::string sql = "(" + type + " = 'object' AND (SELECT count(*) FROM json_each(b.context, " + path_sql +
                        ")) = " + std::to_string(members.size());
      for (const auto& member : members) {
        std::string label = ".\"" + std::string(member.key()) + "\"";
        sql += " AND " + TypedEquals(path_sql + " || " + b.Param(label), member.value(), b);
      }
      return sql + ")";
    }
    default:
      return "(" + type + " IN ('integer','real') AND " + ValueOf(path_sql) + " = " + b.Param(NumberValue(v)) + ")";
  }
}

std::string Compare(const std::string& path_sql, const char* op, const json::value& v, Binder& b) {
  std::string type = TypeOf(path_sql);
  std::string value = ValueOf(path_sql);
  if (v.is_string()) {
    return "(" + type + " = 'text' AND " + value + " " + op + " " + b.Param(std::string(v.get_string())) + ")";
  }
  return "(" + type + " IN ('integer','real') AND " + value + " " + op + " " + b.Param(NumberValue(v)) + ")";
}

// True when the array at `path_sql` holds an element equal to `v`, or, for a string `v`, when the
// string at `path_sql` contains it.
std::string Contains(const std::string& path_sql, const json::value& v, Binder& b) {
  std::string sql = "(" + TypeOf(path_sql) + " = 'array' AND EXISTS (SELECT 1 FROM json_each(b.context, " +
                    path_sql + ") je WHERE " + TypedEquals("je.fullkey", v, b) + "))";
  if (v.is_string()) {
    sql = "(" + sql + " OR (" + TypeOf(path_sql) + " = 'text' AND instr(" + ValueOf(path_sql) + ", " +
          b.Param(std::string(v.get_string())) + ") > 0))";
  }
  return sql;
}

std::string AnyOf(const json::array& options, const std::function<std::string(const json::value&)>& one) {
  std::string sql;
  for (const auto& option : options) sql += (sql.empty() ? "(" : " OR ") + one(option);
  return sql + ")";
}

std::string RuleSql(const model::ContextRule& rule, Binder& b) {
  std::string path = b.Param(rule.path);
  using model::RuleOp;
  switch (rule.op) {
    case RuleOp::kExists: return "(" + TypeOf(path) + (rule.value.as_bool() ? " IS NOT NULL)" : " IS NULL)");
    case RuleOp::kEq: return TypedEquals(path, rule.value, b);
    case RuleOp::kNe: return "(NOT COALESCE(" + TypedEquals(path, rule.value, b) + ", 0))";
    case RuleOp::kGt: return Compare(path, ">", rule.value, b);
    case RuleOp::kGte: return Compare(path, ">=", rule.value, b);
    case RuleOp::kLt: return Compare(path, "<", rule.value, b);
    case RuleOp::kLte: return Compare(path, "<=", rule.value, b);
    case RuleOp::kIn:
      return AnyOf(rule.value.get_array(), [&](const json::value& v) { return TypedEquals(path, v, b); });
    case RuleOp::kContains: return Contains(path, rule.value, b);
    case RuleOp::kContainsAny:
      return AnyOf(rule.value.get_array(), [&](const json::value& v) { return Contains(path, v, b); });
    case RuleOp::kPrefix: {
      // Every string starts with "" (SQLite's substr of an empty blob does not compare equal to
      // one, so the general form below would miss an empty string).
      if (rule.value.as_string().empty()) return "(" + TypeOf(path) + " = 'text')";
      // Compares bytes (not LIKE/GLOB, so '%', '_', '*' are literal; as blobs, so length() counts
      // bytes and does not stop at a NUL): the first length(prefix) bytes of the string equal it.
      std::string prefix = "CAST(" + b.Param(std::string(rule.value.as_string())) + " AS BLOB)";
      return "(" + TypeOf(path) + " = 'text' AND substr(CAST(" + ValueOf(path) + " AS BLOB), 1, length(" + prefix +
             ")) = " + prefix + ")";
    }
  }
  return "0";
}

}  // namespace

Result<BuiltQuery> BuildListQuery(const std::string& columns, const std::string& owner_id,
                                  const model::BreadcrumbQuery& query, int64_t now_micros) {
  BuiltQuery out;
  Binder b{out.binds};
  ListQueryDialect dialect;
  dialect.text = [&b](const std::string& value) { return b.Param(value); };
  dialect.integer = [&b](int64_t value) { return b.Param(value); };
  dialect.rule = [&b](const model::ContextRule& rule) { return RuleSql(rule, b); };
  dialect.read_scope = [&out](const model::AccessScope& reader) { return ReadScopeSql(reader, out.binds); };
  CAIRN_ASSIGN_OR_RETURN(out.sql, BuildListSql(columns, owner_id, query, now_micros, dialect));
  return out;
}

}  // namespace cairn::store::sqlite
