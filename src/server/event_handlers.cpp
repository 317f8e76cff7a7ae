#include "server/event_handlers.h"

#include "server/request_support.h"
#include "server/selector_handlers.h"
#include "server/sse_stream.h"

namespace cairn::server {
namespace {

// The selector of a stream: `selector_id` (a stored selector) or selector query parameters
// (model::ParseSelectorQuery), not both. Its `types` may name agent.token: the stream then also
// gets ephemeral events, and only them when it names no breadcrumb.* type (SseStream, sse_stream.h).
Result<model::Selector> StreamSelector(const QueryReader& query, store::Store& store, const std::string& owner_id,
                                       const model::Limits& limits) {
  CAIRN_ASSIGN_OR_RETURN(std::optional<std::string> selector_id, query.Text("selector_id"));
  if (!selector_id) {
    auto selector = model::ParseSelectorQuery(query.params(), {"since"}, limits);
    if (!selector.ok()) return AsParameterError(selector.status());
    return selector;
  }
  for (const auto& [name, value] : query.params()) {
    if (name != "selector_id" && name != "since") {
      return BadParameter("selector_id", "cannot be combined with other selector parameters (got '" + name + "')");
    }
  }
  return LoadStoredSelector(store, owner_id, *selector_id, limits);
}

}  // namespace

void AddEventRoutes(Router& router, bus::EventBus& bus, store::Store& store, const model::Limits& limits) {
  router.Add("GET", "/events/stream", Dispatch::kWorker, [&bus, &store, limits](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(model::WriteContext ctx, WriteContextFrom(req));
    // The selector parameters of model::ParseSelectorQuery, `selector_id` and `since`.
    CAIRN_ASSIGN_OR_RETURN(QueryReader query,
                           QueryReader::Open(req.query,
                                             {"schema_name", "any_tags", "all_tags", "path", "types", "context_match",
                                              "when", "selector_id", "since"},
                                             {"tag"}));
    CAIRN_ASSIGN_OR_RETURN(model::Selector selector, StreamSelector(query, store, ctx.owner_id, limits));
    CAIRN_ASSIGN_OR_RETURN(int64_t after_seq, StreamResumePoint(req, bus));
    auto spec = std::make_shared<SseSpec>();
    spec->selector = std::move(selector);
    spec->owner_id = ctx.owner_id;
    spec->reader = ctx.access;
    spec->after_seq = after_seq;
    HttpResponse response;
    response.event_stream = std::move(spec);
    return response;
  });
}

}  // namespace cairn::server
