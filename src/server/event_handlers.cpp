#include "server/event_handlers.h"

#include <charconv>

#include "server/request_support.h"
#include "server/selector_handlers.h"
#include "server/sse_stream.h"

namespace cairn::server {
namespace {

// The resume point: Last-Event-ID (sent by reconnecting EventSource clients) wins over ?since=.
Result<std::optional<int64_t>> ResumePoint(const HttpRequest& req) {
  std::optional<std::string_view> text = req.Header("last-event-id");
  std::string from = "Last-Event-ID";
  if (!text) {
    for (const auto& [name, value] : req.query) {
      if (name == "since") text = value;
    }
    from = "since";
  }
  if (!text) return std::optional<int64_t>();
  int64_t seq = 0;
  auto [ptr, ec] = std::from_chars(text->data(), text->data() + text->size(), seq);
  if (text->empty() || ec != std::errc() || ptr != text->data() + text->size() || seq < 0) {
    return Status::InvalidArgument(from + " must be an event seq (a whole number >= 0), got '" + std::string(*text) + "'");
  }
  return std::optional<int64_t>(seq);
}

// The selector of a stream: `selector_id` (a stored selector) or selector query parameters, not both.
// Its `types` may name agent.token: the stream then also gets ephemeral events, and only them
// when it names no breadcrumb.* type (SseStream, sse_stream.h).
Result<model::Selector> StreamSelector(const HttpRequest& req, store::Store& store, const std::string& owner_id,
                                       const model::Limits& limits) {
  std::optional<std::string> selector_id;
  bool other_conditions = false;
  for (const auto& [name, value] : req.query) {
    if (name == "selector_id") {
      if (selector_id) return Status::InvalidArgument("selector_id given more than once");
      selector_id = value;
    } else if (name != "since") {
      other_conditions = true;
    }
  }
  if (!selector_id) return model::ParseSelectorQuery(req.query, {"since"}, limits);
  if (other_conditions) {
    return Status::InvalidArgument("selector_id cannot be combined with other selector parameters");
  }
  return LoadStoredSelector(store, owner_id, *selector_id, limits);
}

}  // namespace

void AddEventRoutes(Router& router, bus::EventBus& bus, store::Store& store, const model::Limits& limits) {
  router.Add("GET", "/events/stream", Dispatch::kWorker, [&bus, &store, limits](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(model::WriteContext ctx, WriteContextFrom(req));
    CAIRN_ASSIGN_OR_RETURN(model::Selector selector, StreamSelector(req, store, ctx.owner_id, limits));
    CAIRN_ASSIGN_OR_RETURN(std::optional<int64_t> since, ResumePoint(req));
    auto spec = std::make_shared<SseSpec>();
    spec->selector = std::move(selector);
    spec->owner_id = ctx.owner_id;
    spec->after_seq = bus.LastSeq();
    if (since) {
      CAIRN_ASSIGN_OR_RETURN(store::EventLogBounds bounds, bus.Bounds());
      if (*since > bounds.last_seq) {
        return Status::InvalidArgument("since " + std::to_string(*since) + " is ahead of the newest event (" +
                                       std::to_string(bounds.last_seq) + ")");
      }
      if (*since < bounds.first_seq - 1) {
        return Status(StatusCode::kGone, "events after " + std::to_string(*since) +
                                             " are no longer retained; the oldest retained event is " +
                                             std::to_string(bounds.first_seq) + " (resume from there or re-read state)");
      }
      spec->after_seq = *since;
    }
    HttpResponse response;
    response.event_stream = std::move(spec);
    return response;
  });
}

}  // namespace cairn::server
