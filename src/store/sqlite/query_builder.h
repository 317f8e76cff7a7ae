// Turns a BreadcrumbQuery into one SQL statement over the breadcrumbs table (aliased `b`) and
// its bind values. Tags are matched through the breadcrumb_tags index; context rules through
// SQLite's JSON functions, typed so that 1 equals 1.0 but never "1".
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "model/query.h"
#include "store/record_rows.h"
#include "store/sqlite/connection.h"

namespace cairn::store::sqlite {

struct BuiltQuery {
  std::string sql;
  std::vector<SqlValue> binds;
};

// `columns` is the select list; `now_micros` hides expired records. The statement returns at most
// query.limit + 1 rows (one more than a page, to know whether another page follows), ordered by
// rid. A cursor that does not decode is kInvalidArgument with field "cursor".
Result<BuiltQuery> BuildListQuery(const std::string& columns, const std::string& owner_id,
                                  const model::BreadcrumbQuery& query, int64_t now_micros);

}  // namespace cairn::store::sqlite
