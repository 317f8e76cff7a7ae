// The shape of a list query (Store::List), written once for every backend: the owner, expiry,
// schema, tag, path, rule, reader, secret, creator and cursor filters, the order and the page
// bound. A backend gives its dialect: how a bound value is named in its SQL, and the SQL of a
// context rule and of a reader's scope, which are where backends differ.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "base/status.h"
#include "model/query.h"

namespace cairn::store {

struct ListQueryDialect {
  // Bind a value and return how the SQL names it ("?3", "$3::bigint"); a name may be used twice.
  std::function<std::string(const std::string&)> text;
  std::function<std::string(int64_t)> integer;
  // One context rule over the record `b`, as a condition.
  std::function<std::string(const model::ContextRule&)> rule;
  // " AND (...)" (or "" for a scope that reads everything): the reader's rule over `b`.
  std::function<std::string(const model::AccessScope&)> read_scope;
};

// "SELECT <columns> FROM ... WHERE ... ORDER BY <rid> LIMIT <query.limit + 1>" over the
// breadcrumbs table aliased `b` (one row more than a page, to know whether another follows);
// `now_micros` hides expired records. With a tag and no exact path, the scan is driven by the
// first tag's index rows in rid order. A cursor that does not decode is kInvalidArgument with
// field "cursor".
Result<std::string> BuildListSql(const std::string& columns, const std::string& owner_id,
                                 const model::BreadcrumbQuery& query, int64_t now_micros,
                                 const ListQueryDialect& dialect);

}  // namespace cairn::store
