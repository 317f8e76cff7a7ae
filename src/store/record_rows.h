// How records and events are laid out in rows, shared by every backend: the columns a read
// selects (portable SQL over the aliases `b`, `e` and `v`), how a row decodes, and the text of
// the JSON columns a write stores. The SQL that writes rows stays with each backend.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/json/value.hpp>

#include "base/status.h"
#include "model/breadcrumb.h"
#include "model/event.h"
#include "store/stored_row.h"

namespace cairn::store {

// Tags as the JSON array text stored in the `tags` columns.
std::string TagsJson(const std::vector<std::string>& tags);
// The `llm_hints` column's text (null when the hints are null).
std::optional<std::string> HintsText(const boost::json::value& hints);

// The `acl` column's text of an ACL (null when absent), and back. An ACL that does not parse is
// named in `*damage` (when still empty) and reads as one that names nobody.
std::optional<std::string> AclText(const std::optional<model::RecordAcl>& acl);
std::optional<model::RecordAcl> DecodeStoredAcl(std::string_view text, std::string* damage);

// Parses a JSON column written by the store. A column that does not parse is `fallback`, and
// `*damage` (when still empty) gets "<column>: <parser message>".
boost::json::value DecodeStoredJson(std::string_view text, const char* column, boost::json::value fallback,
                                    std::string* damage);

// The message of a record that cannot be read, for the readers that cannot skip it.
Status UnreadableRecord(const std::string& id, const std::string& damage);

// The select list that ReadBreadcrumb() decodes; columns of the `b` alias, rid first (24 columns).
const std::string& BreadcrumbColumns();
inline constexpr int kBreadcrumbColumnCount = 24;

// Decodes a row selecting BreadcrumbColumns(). Sets `rid`.
//
// A JSON column that does not parse (tags, context, llm_hints: rows written by an older version
// could hold a non-finite number, see sqlite/unreadable_rows.h) is left empty (no tags, null
// context and hints). With `damage`, the read then succeeds and `*damage` names the column and
// the reason (it is cleared otherwise): callers that can go on without the record skip it and
// report it. Without `damage`, such a row is kInternal "breadcrumb <id> cannot be read (...)".
Result<model::Breadcrumb> ReadBreadcrumb(const StoredRow& row, int64_t* rid, std::string* damage = nullptr);

// The select list and FROM clause that ReadEventRow() decodes: an event with, for an update, the
// previous version from the history (LEFT JOINs: null when that version is gone).
const std::string& EventColumnsAndJoins();

// Decodes a row of EventColumnsAndJoins(). An event whose tags or context do not decode is still
// returned (no tags, null context, `context_unreadable`) so that the log has no gap; `*damage`
// then names the reason.
model::Event ReadEventRow(const StoredRow& row, std::string* damage);

// `context` as the event log reads it back (what a staged event must carry to equal the row).
boost::json::value ReadBackContext(const boost::json::value& context);

// The `access` column of an event: who may read the record as the write left it, null for the
// common case (team, low sensitivity, no acl).
std::optional<std::string> AccessText(const model::Breadcrumb& crumb);

// The event a write appends, as the log will read it back, at `seq`. For an update, `previous`
// is the record before it: the event's `before` is made of it, taking its context (moved).
// `read_back_context`, when given, is ReadBackContext(crumb.context), made earlier (moved).
model::Event StagedEvent(int64_t seq, std::string_view type, const model::Breadcrumb& crumb, const std::string& actor,
                         int64_t at, model::Breadcrumb* previous, boost::json::value* read_back_context);

// The opaque cursor of a list page that ended at row `rid`, and back (nullopt for text this
// server did not issue).
std::string EncodeCursor(int64_t rid);
std::optional<int64_t> DecodeCursor(const std::string& cursor);

}  // namespace cairn::store
