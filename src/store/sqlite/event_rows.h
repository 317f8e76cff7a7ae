// Row-level operations on the `events` table (the outbox). Each runs on the connection it is
// given, inside the caller's transaction.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "model/breadcrumb.h"
#include "model/event.h"
#include "store/record_rows.h"
#include "store/sqlite/connection.h"

namespace cairn::store::sqlite {

// Appends one event for `crumb` ("breadcrumb.created|updated|deleted") by `actor` at `at`.
// `context_json`, when given, is crumb.context already serialised. For an update, `previous` is
// the record before it: the staged event's `before` (model::Event) is made of it, taking its
// context (moved, not copied). `read_back_context`, when given, is
// ReadBackContext(crumb.context), made earlier: the staged event takes it (moved).
Status AppendEvent(Connection& conn, std::string_view type, const model::Breadcrumb& crumb, const std::string& actor,
                   int64_t at, const std::string* context_json = nullptr, model::Breadcrumb* previous = nullptr,
                   boost::json::value* read_back_context = nullptr);

// Events with seq > after_seq, oldest first, at most `limit`, an update's `before` read from the
// record's history (null when that version is gone). An event whose tags or context do not decode is still returned (no tags, null context, `context_unreadable`) so that the log has
// no gap; its seq and the reason are added to `damaged`.
Result<std::vector<model::Event>> ReadEventRows(Connection& conn, int64_t after_seq, size_t limit,
                                                std::vector<std::pair<int64_t, std::string>>* damaged);

}  // namespace cairn::store::sqlite
