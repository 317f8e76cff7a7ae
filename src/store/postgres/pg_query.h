// Turns a BreadcrumbQuery into one PostgreSQL statement over the breadcrumbs table (aliased `b`)
// with its parameters, meaning what the SQLite backend's query means (the store contract tests
// run against both): tags through the breadcrumb_tags index, context rules through jsonb, where
// 1 equals 1.0 but never "1", and strings compare byte-wise. The filters of searches and vector
// scans too (PgRecordFilterSql, as sqlite/record_filters.h).
#pragma once

#include <string>

#include "base/status.h"
#include "model/query.h"
#include "store/postgres/pg_connection.h"
#include "store/text_index.h"

namespace cairn::store::postgres {

struct PgQuery {
  std::string sql;
  PgParams params;
};

// `columns` is the select list; `now_micros` hides expired records. The statement returns at most
// query.limit + 1 rows (one more than a page, to know whether another page follows), ordered by
// rid. A cursor that does not decode is kInvalidArgument with field "cursor".
Result<PgQuery> BuildPgListQuery(const std::string& columns, const std::string& owner_id,
                                 const model::BreadcrumbQuery& query, int64_t now_micros);

// " AND (...)" (or "" for a scope that reads everything): the read rule of model/access.h over
// the record `b`.
std::string PgReadScopeSql(const model::AccessScope& reader, PgParams& params);

// " AND ..." clauses (or "") over the record `b` for the filters of a search or a vector scan: its
// schema_name, all_tags, path_prefix, reader and exclude_secret (text and limit are not filters).
std::string PgRecordFilterSql(const TextSearchQuery& filters, PgParams& params);

}  // namespace cairn::store::postgres
