#include "exec/executor.h"

#include <limits>

namespace cairn::exec {
namespace json = boost::json;

json::object TriggerView(const model::Event& event) {
  // The event's own view, named like a record: "id" rather than "breadcrumb_id".
  json::object view = model::EventView(event, std::numeric_limits<size_t>::max());
  view["id"] = event.breadcrumb_id;
  view.erase("breadcrumb_id");
  return view;
}

}  // namespace cairn::exec
