// UnreadableRows: what the store does with a stored row it cannot decode.
//
// Nothing written through this version can be unreadable (every write checks its JSON, see
// base/json_util.h), but a database written by an older version may hold JSON text the parser
// refuses (a non-finite number stored as `Infinity`). Such a row must never stop the bus, an
// executor or a list: readers skip it (or degrade it, for events) and report it here. The first
// report of a row in this process logs a warning and counts it in
// `cairn_store_unreadable_rows_total`; the store then files a `system.error.v1` record about it
// (at a path unique to the row, so a restart files nothing twice).
#pragma once

#include <mutex>
#include <string>
#include <unordered_set>

#include "base/metrics.h"
#include "model/breadcrumb.h"

namespace cairn::store::sqlite {

struct UnreadableRow {
  std::string kind;      // "breadcrumb", "version", "event" or "webhook"
  std::string key;       // the record id, "<id>@<version>", the event seq, or the webhook id
  std::string owner_id;  // the tenant the row belongs to
  std::string reason;    // which column, and the parser's message
};

// Thread-safe.
class UnreadableRows {
 public:
  explicit UnreadableRows(MetricsRegistry* metrics);

  // Notes `row`. Returns true the first time this process sees its (kind, key): the row has then
  // been logged and counted, and the caller should file its report. Later calls return false.
  // At most kMaxRemembered rows are remembered; past that every report counts as new again
  // (logged and filed again, which the report's unique path makes harmless).
  bool Note(const UnreadableRow& row);

  static constexpr size_t kMaxRemembered = 10000;

 private:
  std::mutex mu_;
  std::unordered_set<std::string> seen_;
  Counter* counter_ = nullptr;
};

// The `system.error.v1` record reporting `row`, at path "system/errors/unreadable/<kind>/<key>".
model::BreadcrumbDraft UnreadableRowReport(const UnreadableRow& row);

// The actor of the store's own reports.
inline constexpr const char* kStoreActor = "system:store";

}  // namespace cairn::store::sqlite
