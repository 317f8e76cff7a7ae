// Row-level operations on the PostgreSQL tables, shared by the store's reads and its write
// closures; each runs on the connection it is given, inside the caller's transaction. Rows
// decode as in every backend (store/record_rows.h).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "model/breadcrumb.h"
#include "model/event.h"
#include "store/postgres/pg_connection.h"

namespace cairn::store::postgres {

// Loads a visible (not expired) record by owner and id: kNotFound otherwise. Sets `rid`.
// With `for_update`, the row is locked until the transaction ends.
Result<model::Breadcrumb> LoadRecord(PgConnection& conn, const std::string& owner_id, const std::string& id,
                                     int64_t now_micros, int64_t* rid, bool for_update = false);

// Inserts a new record (version 1) with its tags; a taken path is kConflict. Returns the rid.
Result<int64_t> InsertRecord(PgConnection& conn, const model::Breadcrumb& crumb, const std::string& context_json);

// Writes the new state of the record at `rid`; with `old_tags`, replaces those tags by crumb.tags.
Status UpdateRecord(PgConnection& conn, int64_t rid, const model::Breadcrumb& crumb,
                    const std::vector<std::string>* old_tags, const std::string& context_json);

// Keeps `crumb` (the state being superseded) in the history table.
Status ArchiveRecordVersion(PgConnection& conn, int64_t rid, const model::Breadcrumb& crumb);

// Removes the record at `rid`, its tags and its history.
Status DeleteRecord(PgConnection& conn, int64_t rid);

// Appends one event for `crumb` at the next seq of the writer's transaction (conn.last_seq())
// and stages it (conn.staged_events()). `previous` and `read_back_context` as StagedEvent().
Status AppendRecordEvent(PgConnection& conn, std::string_view type, const model::Breadcrumb& crumb,
                         const std::string& actor, int64_t at, const std::string* context_json = nullptr,
                         model::Breadcrumb* previous = nullptr, boost::json::value* read_back_context = nullptr);

// Committed events with seq > after_seq, oldest first, at most `limit`; damaged rows as
// ReadEventRow() reads them, with their seq and reason in `damaged`.
Result<std::vector<model::Event>> ReadEventLog(PgConnection& conn, int64_t after_seq, size_t limit,
                                               std::vector<std::pair<int64_t, std::string>>* damaged);

// Upserts `consumer`'s cursor (CursorStore) within the caller's write transaction.
Status WriteCursor(PgConnection& conn, const std::string& consumer, int64_t seq, int64_t now);

}  // namespace cairn::store::postgres
