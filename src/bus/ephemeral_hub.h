// EphemeralHub: events that are published to live subscribers and never stored — the tokens of
// a streaming agent reply (`agent.token`, docs/agents.md). No seq, no log, no resume: a
// subscriber that is not connected, or whose queue is full, misses them. The stored response
// breadcrumb is the durable record.
//
// Thread-safety: every method may be called from any thread, concurrently. A publisher walks a
// snapshot of the subscriber list (no lock held across deliveries); a subscription being
// destroyed waits only for a delivery to it that is running at that moment.
#pragma once

#include <boost/json/object.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bus/event_bus.h"

namespace cairn::bus {

struct EphemeralEvent {
  std::string type;               // e.g. "agent.token"
  std::string owner_id;           // the tenant; only its streams see it
  std::vector<std::string> tags;  // matched by stream selectors like a breadcrumb's tags
  int64_t at = 0;                 // microseconds since the epoch
  boost::json::object data;       // the payload, e.g. {execution_id, agent_id, delta}
  // Streams send it only after the stored event with this seq (0: no condition), so a token is
  // never seen before the stored event that announced its step.
  int64_t after_seq = 0;
};

using EphemeralPtr = std::shared_ptr<const EphemeralEvent>;

class EphemeralHub {
 public:
  EphemeralHub();
  ~EphemeralHub();  // every Subscription must have been destroyed before the hub
  EphemeralHub(const EphemeralHub&) = delete;
  EphemeralHub& operator=(const EphemeralHub&) = delete;

  // Calls every current subscriber with `event`, on the caller's thread. Subscribers must only
  // hand it on (post to a strand); a slow subscriber would hold up the publisher. A null event is
  // ignored.
  void Publish(EphemeralPtr event);

  // Registers `deliver`; destroying the returned Subscription unregisters it (after the
  // destructor returns `deliver` is never called again; it waits for a delivery running on
  // another thread). `deliver` may subscribe or unsubscribe others, but must neither destroy its
  // own Subscription nor Publish (either would wait for itself).
  std::unique_ptr<Subscription> Subscribe(std::function<void(const EphemeralPtr&)> deliver);

  size_t subscriber_count() const;

 private:
  class HubSubscription;
  struct Slot;  // one subscriber: its function, and whether it is still subscribed
  using SlotList = std::vector<std::pair<uint64_t, std::shared_ptr<Slot>>>;
  void Unsubscribe(uint64_t id);

  mutable std::mutex mu_;  // guards next_id_ and the subscribers_ pointer (not the list it points to)
  uint64_t next_id_ = 1;
  // Copy on write: Subscribe/Unsubscribe install a new list, Publish walks the one it took.
  std::shared_ptr<const SlotList> subscribers_;
};

}  // namespace cairn::bus
