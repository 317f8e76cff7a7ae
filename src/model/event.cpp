#include "model/event.h"

#include <boost/json/serialize.hpp>
#include <limits>

#include "base/time_format.h"

namespace cairn::model {
namespace json = boost::json;

json::object EventView(const Event& event, size_t max_context_bytes, bool redact_context) {
  json::array tags;
  for (const auto& tag : event.tags) tags.emplace_back(tag);
  json::object out{
      {"type", event.type},
      {"seq", event.seq},
      {"breadcrumb_id", event.breadcrumb_id},
      {"version", event.version},
      {"schema_name", event.schema_name ? json::value(*event.schema_name) : json::value(nullptr)},
      {"title", event.title},
      {"tags", std::move(tags)},
      {"path", event.path ? json::value(*event.path) : json::value(nullptr)},
      {"owner_id", event.owner_id},
      {"created_by", event.created_by},
      {"trace", json::object{{"trace_id", event.trace.trace_id},
                             {"caused_by", event.trace.caused_by.empty() ? json::value(nullptr)
                                                                         : json::value(event.trace.caused_by)},
                             {"depth", event.trace.depth}}},
      {"at", FormatRfc3339Micros(event.at)},
  };
  // No limit, no need to measure: serialising a large context only to compare its size is not free.
  bool unlimited = max_context_bytes == std::numeric_limits<size_t>::max();
  if (redact_context) {
    out["context_omitted"] = true;
    out["context_redacted"] = true;
  } else if (event.context_unreadable) {
    out["context_omitted"] = true;
    out["context_unreadable"] = true;
  } else if (!unlimited && json::serialize(event.context).size() > max_context_bytes) {
    out["context_omitted"] = true;
  } else {
    out["context"] = event.context;
  }
  return out;
}

}  // namespace cairn::model
