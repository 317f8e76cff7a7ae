// wait_for: the first event after the request that matches a selector, event-driven (woken by
// the bus, never polling the store), bounded by the input's timeout_ms and the run's budget.
#include <condition_variable>
#include <mutex>

#include "exec/tools/builtin_tools.h"
#include "model/selector.h"
#include "model/subscription.h"

namespace cairn::exec {
namespace json = boost::json;
namespace {

constexpr size_t kEventContextBytes = 256 * 1024;

class WaitForTool final : public Tool {
 public:
  explicit WaitForTool(const BuiltinToolDeps& deps) : deps_(deps) {}

  Result<json::value> Invoke(const ToolCall& call) override {
    const json::object& input = call.input.as_object();
    auto selector = model::ParseSelector(input.at("selector"), deps_.options.limits);
    if (!selector.ok()) return model::PrefixField(selector.status(), "input.selector");
    auto timeout = std::min(std::chrono::milliseconds(input.at("timeout_ms").to_number<int64_t>()), call.timeout);
    auto deadline = std::chrono::steady_clock::now() + timeout;

    std::mutex mu;
    std::condition_variable cv;
    bool woken = true;
    auto subscription = deps_.bus.SubscribeWhen(
        [&] {
          std::lock_guard lock(mu);
          woken = true;
          cv.notify_all();
        },
        [&selector, owner = call.trigger.owner_id](const model::Event& event) {
          return event.owner_id == owner && model::Matches(*selector, event);
        },
        1024);
    int64_t after = call.trigger.seq;
    while (true) {
      {
        std::unique_lock lock(mu);
        // The cancel flag has no wake-up of its own: re-check it every 50 ms.
        cv.wait_until(lock, std::min(deadline, std::chrono::steady_clock::now() + std::chrono::milliseconds(50)),
                      [&] { return woken; });
        woken = false;
      }
      if (call.cancelled) return Status::Unavailable("wait_for was cancelled");
      while (true) {
        CAIRN_ASSIGN_OR_RETURN(auto events, deps_.bus.Read(after, 256));
        if (events.empty()) break;
        for (const auto& event : events) {
          after = event->seq;
          if (event->owner_id == call.trigger.owner_id && event->breadcrumb_id != call.trigger.breadcrumb_id &&
              model::Matches(*selector, *event)) {
            return json::value(model::EventView(*event, kEventContextBytes));
          }
        }
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        return Status::Unavailable("no matching event within " + std::to_string(timeout.count()) + " ms");
      }
    }
  }

 private:
  const BuiltinToolDeps& deps_;
};

}  // namespace

std::unique_ptr<Tool> MakeWaitForTool(const BuiltinToolDeps& deps) { return std::make_unique<WaitForTool>(deps); }

}  // namespace cairn::exec
