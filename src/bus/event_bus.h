// EventBus: committed events, in seq order, to every subscriber in the process (SSE streams,
// webhook deliverers, executor consumers, agents awaiting tool answers). The interface is what a
// NATS JetStream feed also drives (bus/nats: LocalEventBus over the stream); subscribers never see the store.
//
// The bus is pull-based: subscribers keep their own cursor (the last seq they have seen), are
// woken when new events commit, and Read() what follows their cursor. Recent events are served
// from a bounded in-memory window; a subscriber that fell behind the window reads from the log,
// so the bus never holds more than the window in memory and never loses an event.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "model/event.h"
#include "model/selector.h"
#include "store/event_log.h"

namespace cairn::bus {

using EventPtr = std::shared_ptr<const model::Event>;

// Which events a subscriber's interest can take (EventBus::SubscribeWhen): every event, or those of
// the listed schema names, of the listed record ids, carrying one of the listed tags, or of a
// schema whose context has a top-level string field with a given value (a tool request's "tool":
// the name of the tool it calls).
struct InterestKeys {
  bool every_event = true;
  std::vector<std::string> schemas;
  std::vector<std::string> breadcrumb_ids;
  std::vector<std::string> tags;
  struct Field {
    std::string schema;
    std::string field;
    std::string value;
  };
  std::vector<Field> fields;
};

// The narrowest keys that hold every event `selector` can match: its schema with the value of a
// top-level string field it requires (a context_match `$.field` eq "value"), else its schema, else
// one of its tags (any_tags, or the first of all_tags); every event when it names none of these.
InterestKeys SelectorKeys(const model::Selector& selector);

// Unregisters its wake-up function when destroyed; after the destructor returns the function is
// never called again.
class Subscription {
 public:
  virtual ~Subscription() = default;
};

class EventBus {
 public:
  virtual ~EventBus() = default;

  // Events with seq > after_seq, oldest first, at most `limit`. Served from memory when
  // InWindow(after_seq); otherwise read from the log (may block on disk: call it off I/O threads).
  virtual Result<std::vector<EventPtr>> Read(int64_t after_seq, size_t limit) = 0;

  // True when Read(after_seq, ...) needs no disk access.
  virtual bool InWindow(int64_t after_seq) const = 0;

  // The newest seq the bus has published to subscribers. Takes no lock a wake-up runs under: a
  // wake-up may call it.
  virtual int64_t LastSeq() const = 0;

  // The retained range of the log (for resume requests that are too old: 410).
  virtual Result<store::EventLogBounds> Bounds() = 0;

  // Calls `wake` (on the bus thread; it must only signal, e.g. post to a strand) each time newer
  // events are available.
  virtual std::unique_ptr<Subscription> Subscribe(std::function<void()> wake) = 0;

  // Like Subscribe(wake), but wakes only when a newly published event passes `interest` (called on
  // the bus thread, so it must be cheap and thread-safe), or when `lag` events have been published
  // since the subscriber was last woken. A subscriber still reads every event in order when it
  // wakes; it is only not woken for events it would skip, which saves a thread wake-up per commit
  // for each executor that the commit does not concern. `lag` bounds how far its cursor can fall
  // behind (keep it well inside the window, so its reads stay in memory). A bus without filtering
  // wakes on every commit.
  using Interest = std::function<bool(const model::Event&)>;
  virtual std::unique_ptr<Subscription> SubscribeWhen(std::function<void()> wake, Interest interest, int64_t lag) {
    (void)interest;
    (void)lag;
    return Subscribe(std::move(wake));
  }

  // Like SubscribeWhen, with `keys` saying which events can pass `interest`: the bus asks it only
  // about those (an index, so a thousand subscribers do not each judge every event), and about
  // every one of those, in seq order, so `interest` may note what concerned it (see
  // InterestCheckedSeq). An event outside the keys is taken as of no interest.
  virtual std::unique_ptr<Subscription> SubscribeWhen(std::function<void()> wake, Interest interest, int64_t lag,
                                                      InterestKeys keys) {
    (void)keys;
    return SubscribeWhen(std::move(wake), std::move(interest), lag);
  }

  // The newest seq whose `interest` calls (SubscribeWhen with keys) have all returned: a subscriber
  // whose interest noted nothing after its cursor up to here may move its cursor here without
  // reading. 0: the bus does not tell (never skip).
  virtual int64_t InterestCheckedSeq() const { return 0; }
};

}  // namespace cairn::bus
