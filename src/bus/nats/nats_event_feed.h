// NatsEventFeed: the event log as this process's bus sees it when events travel through NATS
// JetStream. It is a store::EventLog whose commit notifications come from the stream instead of
// the store: each message hands its event over (LocalEventBus publishes it when it continues its
// window without a gap), while reads (a gap, a subscriber behind the window, Bounds, pruning) go to
// the store's log.
//
// So the bus reads the database only to catch up: after a gap in the stream (a marker, a message
// that is not an event, messages the stream no longer keeps), and after each (re)subscription, for
// what passed by meanwhile. While NATS cannot be reached the feed falls back on the store: each of
// its commit notifications (StoreCommitted) then sends the bus to the log, as with the local bus.
//
// The subscription is made again, on the feed's own thread, when the connection comes back and
// when the subscription reports trouble (missed heartbeats: the server lost the consumer), always
// from the newest message on, with a read of the log after it.
#pragma once

#include <condition_variable>
#include <mutex>
#include <thread>

#include "base/metrics.h"
#include "bus/nats/nats_stream_client.h"
#include "store/event_log.h"

namespace cairn::bus::nats {

class NatsEventFeed final : public store::EventLog {
 public:
  // `log` (the store's) and `stream` must outlive the feed. `metrics` may be null.
  NatsEventFeed(store::EventLog& log, NatsStreamClient& stream, MetricsRegistry* metrics);
  ~NatsEventFeed() override;  // Stop()s

  Result<std::vector<model::Event>> ReadEvents(int64_t after_seq, size_t limit) override {
    return log_.ReadEvents(after_seq, limit);
  }
  Result<store::EventLogBounds> Bounds() override { return log_.Bounds(); }
  Result<int64_t> PruneEvents(int64_t before_micros) override { return log_.PruneEvents(before_micros); }

  // Subscribes to the stream (kUnavailable when NATS refuses) and starts the thread that
  // subscribes again when needed. Call once, before the bus starts: messages that arrive before a
  // listener is set are dropped, and setting one reads the log.
  Status Start();
  // Ends the subscription and the thread; the listener is not called once this returns.
  void Stop();

  void SetCommitListener(std::function<void()> listener) override;
  // A listener set asks at once for a read of the log (for what was committed before it was set);
  // null ends the calls.
  void SetCommittedEventsListener(CommittedEventsListener listener) override;

  // The store committed events (this process's or another's): only signals. Sends the bus to the
  // log while NATS is away.
  void StoreCommitted();

  // How many subscriptions the feed has made (Start's is the first).
  uint64_t subscriptions() const;
  // Waits until the feed has made more than `after` subscriptions and NATS is reachable (true),
  // or `timeout` passed (false).
  bool WaitForSubscription(uint64_t after, std::chrono::milliseconds timeout);

 private:
  void OnMessage(std::string_view body);
  void ReadTheLog();
  void Run();  // the thread: subscribes again when asked
  void Resubscribe();

  store::EventLog& log_;
  NatsStreamClient& stream_;
  Counter* received_ = nullptr;
  Counter* log_reads_ = nullptr;

  std::mutex listener_mu_;
  CommittedEventsListener listener_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  uint64_t subscriptions_ = 0;
  bool away_ = false;        // NATS cannot be reached: the store's notifications drive the bus
  bool resubscribe_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace cairn::bus::nats
