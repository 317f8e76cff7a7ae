// The filters of a search (schema, tags, path prefix) as SQL over the breadcrumbs table aliased
// `b`, shared by full-text and vector scans.
#pragma once

#include <string>
#include <vector>

#include "store/sqlite/connection.h"
#include "store/text_index.h"

namespace cairn::store::sqlite {

// " AND ..." clauses (or "") for `filters` (its reader included), appending their values to
// `binds` as numbered parameters ("?N", N counted from binds' size).
std::string RecordFilterSql(const TextSearchQuery& filters, std::vector<SqlValue>& binds);

// " AND (...)" (or "" for a scope that reads everything): the read rule of model/access.h over
// the record `b`, for every list, search and scan, so pages are filtered before they are cut.
std::string ReadScopeSql(const model::AccessScope& reader, std::vector<SqlValue>& binds);

}  // namespace cairn::store::sqlite
