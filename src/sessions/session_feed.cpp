#include "sessions/session_feed.h"

#include <limits>

#include "base/json_util.h"

namespace cairn::sessions {

namespace {
constexpr const char* kExecutionTag = "session-execution";
}  // namespace

std::unique_ptr<bus::Subscription> FollowSessionExecutions(bus::EventBus& bus, ScheduleSession schedule,
                                                           CancelExecution cancel) {
  bus::InterestKeys keys;
  keys.every_event = false;
  keys.tags = {kExecutionTag};
  // The interest does the work (it is asked about every event under the keys, in seq order) and
  // never asks for a wake-up: there is nothing to read afterwards.
  auto interest = [schedule = std::move(schedule), cancel = std::move(cancel)](const model::Event& event) {
    const auto* context = event.context.if_object();
    if (context && event.type == "breadcrumb.updated" && StringMember(*context, "status") == "cancelled") {
      std::string id = StringMember(*context, "id");
      if (!id.empty()) cancel(event.owner_id, id);
    }
    const auto* session = context ? context->if_contains("session_id") : nullptr;
    if (session && session->is_string() && !session->get_string().empty()) {
      schedule(event.owner_id, std::string(session->get_string()));
    }
    return false;
  };
  return bus.SubscribeWhen([] {}, std::move(interest), std::numeric_limits<int64_t>::max(), std::move(keys));
}

}  // namespace cairn::sessions
