#include "store/sqlite/unreadable_rows.h"

#include "base/log.h"
#include "model/reserved.h"

namespace cairn::store::sqlite {

UnreadableRows::UnreadableRows(MetricsRegistry* metrics) {
  if (metrics) {
    counter_ = &metrics->GetCounter("cairn_store_unreadable_rows_total",
                                    "Stored rows that could not be decoded and were skipped (see system.error.v1 records)");
  }
}

bool UnreadableRows::Note(const UnreadableRow& row) {
  {
    std::lock_guard lock(mu_);
    if (seen_.size() >= kMaxRemembered) seen_.clear();
    if (!seen_.insert(row.kind + "/" + row.key).second) return false;
  }
  if (counter_) counter_->Increment();
  CAIRN_LOG_WARN("store: skipping unreadable {} {} of tenant {}: {}", row.kind, row.key, row.owner_id, row.reason);
  return true;
}

model::BreadcrumbDraft UnreadableRowReport(const UnreadableRow& row) {
  model::BreadcrumbDraft draft;
  draft.schema_name = model::kSystemErrorSchema;
  draft.title = "Unreadable stored " + row.kind + " " + row.key;
  draft.tags = {"system:error", "error:unreadable_row"};
  draft.path = "system/errors/unreadable/" + row.kind + "/" + row.key;
  draft.context = boost::json::object{
      {"code", "unreadable_row"},
      {"kind", row.kind},
      {"key", row.key},
      {"message", "a stored " + row.kind + " could not be decoded and is skipped by every reader: " + row.reason},
  };
  return draft;
}

}  // namespace cairn::store::sqlite
