#include "exec/response_waiter.h"

#include "model/tool_definition.h"

namespace cairn::exec {
namespace json = boost::json;
namespace {

// A string member of an answer's context ("request_id", "tool"), or "".
std::string Member(const json::value& context, std::string_view key) {
  const json::value* v = context.is_object() ? context.as_object().if_contains(key) : nullptr;
  return v && v->is_string() ? std::string(v->as_string()) : "";
}

}  // namespace

Result<std::optional<json::object>> ResponseWaiter::FindStored(store::Store& store, const std::string& owner_id,
                                                                   const std::string& request_id,
                                                                   const std::string& source, ResponseKind kind) {
  model::BreadcrumbQuery query;
  query.schema_name = std::string(kind.schema);
  query.all_tags = {"request:" + request_id};
  query.include_context = true;
  if (!source.empty()) query.all_tags.push_back(std::string(kind.source_tag) + ":" + source);
  query.limit = 1;
  CAIRN_ASSIGN_OR_RETURN(store::Page found, store.List(owner_id, query));
  for (const auto& crumb : found.items) {
    if (crumb.context.is_object() && Member(crumb.context, "request_id") == request_id &&
        (source.empty() || Member(crumb.context, kind.source_field) == source)) {
      return std::optional<json::object>(crumb.context.as_object());
    }
  }
  return std::optional<json::object>();
}

ResponseWaiter::ResponseWaiter(store::Store& store, bus::EventBus& bus, std::string owner_id, ResponseKind kind)
    : ResponseWaiter(store, bus, std::move(owner_id), std::vector<ResponseKind>{kind}) {}

const ResponseKind* ResponseWaiter::KindOf(const model::Event& event) const {
  if (event.owner_id != owner_id_ || !event.schema_name) return nullptr;
  for (const auto& kind : kinds_) {
    if (*event.schema_name == kind.schema) return &kind;
  }
  return nullptr;
}

ResponseWaiter::ResponseWaiter(store::Store& store, bus::EventBus& bus, std::string owner_id,
                               std::vector<ResponseKind> kinds)
    : store_(store), bus_(bus), owner_id_(std::move(owner_id)), kinds_(std::move(kinds)), after_seq_(bus.LastSeq()) {
  // Woken by the answers it waits for only (not every answer of the tenant); the wait looks at
  // the bus at least every 50 ms anyway.
  subscription_ = bus_.SubscribeWhen(
      [this] {
        std::lock_guard lock(mu_);
        woken_ = true;
        cv_.notify_all();
      },
      [this](const model::Event& event) {
        std::lock_guard lock(awaited_mu_);
        if (interrupt_ && interrupt_(event)) return true;
        if (!KindOf(event)) return false;
        return awaited_.count(Member(event.context, "request_id")) != 0;
      },
      1024);
}

void ResponseWaiter::InterruptOn(std::function<bool(const model::Event&)> interrupt) {
  std::lock_guard lock(awaited_mu_);
  interrupt_ = std::move(interrupt);
}

Result<std::set<std::string>> ResponseWaiter::Wait(
    std::map<std::string, std::string> ids, bool look_in_store, std::chrono::steady_clock::time_point deadline,
    const std::atomic<bool>& cancelled, const std::function<void(const std::string&, const json::object&)>& on_answer,
    const std::atomic<bool>* also_cancelled) {
  std::function<bool(const model::Event&)> interrupt;
  {
    std::lock_guard lock(awaited_mu_);
    awaited_.clear();
    for (const auto& [id, source] : ids) awaited_.insert(id);
    interrupt = interrupt_;
  }
  bool interrupted = false;
  auto take = [&](const json::value& context, const ResponseKind& kind) {
    std::string id = Member(context, "request_id");
    auto asked = ids.find(id);
    if (asked == ids.end() || Member(context, kind.source_field) != asked->second) return;
    ids.erase(asked);
    {
      std::lock_guard lock(awaited_mu_);
      awaited_.erase(id);
    }
    on_answer(id, context.as_object());
  };
  if (look_in_store) {
    for (const auto& [id, tool] : std::map<std::string, std::string>(ids)) {
      for (const auto& kind : kinds_) {
        CAIRN_ASSIGN_OR_RETURN(auto found, FindStored(store_, owner_id_, id, tool, kind));
        if (found) {
          take(*found, kind);
          break;
        }
      }
    }
  }
  while (!ids.empty()) {
    while (true) {
      CAIRN_ASSIGN_OR_RETURN(auto events, bus_.Read(after_seq_, 256));
      if (events.empty()) break;
      for (const auto& event : events) {
        after_seq_ = event->seq;
        const ResponseKind* kind = KindOf(*event);
        if (kind && event->type == "breadcrumb.created" && event->context.is_object()) take(event->context, *kind);
        if (interrupt && interrupt(*event)) interrupted = true;
      }
    }
    if (ids.empty() || interrupted || cancelled || (also_cancelled && *also_cancelled) || std::chrono::steady_clock::now() >= deadline) {
      break;
    }
    std::unique_lock lock(mu_);
    // The cancel flag has no wake-up of its own: look at it at least every 50 ms.
    cv_.wait_until(lock, std::min(deadline, std::chrono::steady_clock::now() + std::chrono::milliseconds(50)),
                   [this] { return woken_; });
    woken_ = false;
  }
  std::set<std::string> unanswered;
  for (const auto& [id, tool] : ids) unanswered.insert(id);
  return unanswered;
}

}  // namespace cairn::exec
