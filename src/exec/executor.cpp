#include "exec/executor.h"

#include <boost/json/array.hpp>

#include "base/time_format.h"

namespace cairn::exec {
namespace json = boost::json;

json::object TriggerView(const model::Event& event) {
  json::array tags;
  for (const auto& tag : event.tags) tags.emplace_back(tag);
  return json::object{
      {"id", event.breadcrumb_id},
      {"schema_name", event.schema_name ? json::value(*event.schema_name) : json::value(nullptr)},
      {"title", event.title},
      {"tags", std::move(tags)},
      {"path", event.path ? json::value(*event.path) : json::value(nullptr)},
      {"version", event.version},
      {"context", event.context},
      {"created_by", event.created_by},
      {"trace", json::object{{"trace_id", event.trace.trace_id},
                             {"caused_by", event.trace.caused_by.empty() ? json::value(nullptr)
                                                                         : json::value(event.trace.caused_by)},
                             {"depth", event.trace.depth}}},
      {"at", FormatRfc3339Micros(event.at)},
      {"seq", event.seq},
  };
}

}  // namespace cairn::exec
