// InterestSkip: the rule by which a subscriber with InterestKeys (EventBus::SubscribeWhen) moves its
// cursor past the events its interest was asked about and refused, without reading them. Used by
// executor consumers and webhook workers.
//
//   Subscribed(bus.LastSeq())   right after (re)subscribing: the events up to there were judged by
//                               an earlier subscription, or by none, so they must be read;
//   Took(event.seq)             in the interest, each time it takes an event (the bus's thread);
//   SkipTo(cursor, bus)         where the cursor may move now: the bus's InterestCheckedSeq() when
//                               nothing after `cursor` was taken and `cursor` has passed the
//                               events before the subscription; else `cursor`.
// Until the first Subscribed, SkipTo never moves the cursor. Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>

#include "bus/event_bus.h"

namespace cairn::bus {

class InterestSkip {
 public:
  void Subscribed(int64_t last_seq) { read_all_until_.store(last_seq, std::memory_order_release); }
  void Took(int64_t seq) {
    if (seq > taken_.load(std::memory_order_relaxed)) taken_.store(seq, std::memory_order_release);
  }
  int64_t SkipTo(int64_t cursor, const EventBus& bus) const {
    const int64_t checked = bus.InterestCheckedSeq();  // before reading taken_: its calls came first
    if (checked <= cursor || cursor < read_all_until_.load(std::memory_order_acquire)) return cursor;
    return taken_.load(std::memory_order_acquire) > cursor ? cursor : checked;
  }

 private:
  std::atomic<int64_t> taken_{0};
  std::atomic<int64_t> read_all_until_{std::numeric_limits<int64_t>::max()};
};

}  // namespace cairn::bus
