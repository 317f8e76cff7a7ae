// NatsEventFeed: the event log as this process's bus sees it when events travel through NATS
// JetStream. It is a store::EventLog whose commit notifications come from the stream instead of
// the store: each message hands its event over (LocalEventBus publishes it when it continues its
// window without a gap), while reads (a gap, a subscriber behind the window, Bounds, pruning) go to
// the store's log.
//
// So the bus reads the database only to catch up: after a gap in the stream (a marker for an event
// too large for a message, messages the stream no longer keeps, a NATS outage) and once after
// each (re)connection, for what passed by meanwhile.
#pragma once

#include <atomic>
#include <mutex>

#include "base/metrics.h"
#include "bus/nats/nats_stream_client.h"
#include "store/event_log.h"

namespace cairn::bus::nats {

class NatsEventFeed final : public store::EventLog {
 public:
  // `log` (the store's) and `stream` must outlive the feed. `metrics` may be null.
  NatsEventFeed(store::EventLog& log, NatsStreamClient& stream, MetricsRegistry* metrics);
  ~NatsEventFeed() override;

  Result<std::vector<model::Event>> ReadEvents(int64_t after_seq, size_t limit) override {
    return log_.ReadEvents(after_seq, limit);
  }
  Result<store::EventLogBounds> Bounds() override { return log_.Bounds(); }
  Result<int64_t> PruneEvents(int64_t before_micros) override { return log_.PruneEvents(before_micros); }
  // Subscribes to the stream (kUnavailable when NATS refuses). Call once, before the bus starts:
  // messages that arrive before a listener is set are dropped, and setting one reads the log.
  Status Start();

  void SetCommitListener(std::function<void()> listener) override;
  // A listener set asks at once for a read of the log (for what was committed before it was set);
  // null ends the calls.
  void SetCommittedEventsListener(CommittedEventsListener listener) override;

 private:
  void OnMessage(std::string_view body);
  void ReadTheLog();

  store::EventLog& log_;
  NatsStreamClient& stream_;
  Counter* received_ = nullptr;
  Counter* log_reads_ = nullptr;
  mutable std::mutex mu_;
  CommittedEventsListener listener_;
};

}  // namespace cairn::bus::nats
