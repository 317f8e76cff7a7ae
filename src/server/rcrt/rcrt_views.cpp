#include "server/rcrt/rcrt_views.h"

namespace cairn::server::rcrt {
namespace json = boost::json;

json::object EventFrame(const model::Event& event, size_t max_context_bytes) {
  json::object view = model::EventView(event, max_context_bytes);
  json::object frame{{"type", event.type == "breadcrumb.deleted" ? "breadcrumb.deleted" : "breadcrumb.updated"},
                     {"breadcrumb_id", event.breadcrumb_id},
                     {"owner_id", event.owner_id},
                     {"version", event.version},
                     {"schema_name", view["schema_name"]},
                     {"title", event.title},
                     {"tags", view["tags"]},
                     {"path", view["path"]},
                     {"updated_by", event.created_by},
                     {"updated_at", view["at"]}};
  for (const char* field : {"context", "context_omitted", "context_unreadable"}) {
    if (const json::value* value = view.if_contains(field)) frame[field] = *value;
  }
  return frame;
}

std::string CairnRoleName(std::string_view name) {
  if (name == "curator") return "admin";
  if (name == "emitter") return "user";
  if (name == "subscriber") return "reader";
  return std::string(name);
}

}  // namespace cairn::server::rcrt
