// NatsRelay: publishes the store's event log to the NATS JetStream stream, in seq order, one
// message per event with Nats-Msg-Id = seq (event_wire.h gives the body).
//
// Exactly one process of a cluster relays: the one holding the relay's lease (the app takes it and
// calls SetActive). When it becomes active it asks the stream for the newest seq published and
// continues after it, so a relay taking over from one that died publishes again at most what that
// one had not confirmed — and JetStream drops those repeats by their Nats-Msg-Id.
//
// Every process's feed reads the stream (nats_event_feed.h); a reader that finds a seq missing
// reads the gap from the log, so a stream that lost messages or started late costs a read of the
// database, never an event. A relay that skips events (it found the stream far behind the log, or
// ahead of it) publishes a marker, so that readers read the log at once.
//
// A relay whose publishing has failed for `give_up_after` calls `on_stuck` (once per activation):
// the app then hands the lease to a process that may reach NATS.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

#include "base/metrics.h"
#include "base/status.h"
#include "bus/nats/nats_stream_client.h"
#include "store/event_log.h"

namespace cairn::bus::nats {

struct NatsRelayOptions {
  std::chrono::milliseconds give_up_after{5000};
  std::function<void()> on_stuck;  // on the relay's thread; must only signal
};

class NatsRelay {
 public:
  using Options = NatsRelayOptions;
  // `log` and `stream` must outlive the relay. `metrics` may be null.
  NatsRelay(store::EventLog& log, NatsStreamClient& stream, MetricsRegistry* metrics, Options options = {});
  ~NatsRelay();  // Stop()s

  // Starts the relay's thread; it publishes only while active.
  void Start();
  // The store committed events (of any process): only signals.
  void Notify();
  // Whether this process relays (it holds the lease). A relay made inactive stops publishing before
  // its next message.
  void SetActive(bool active);
  void Stop();

  int64_t published_seq() const { return published_.load(); }
  // Waits until the relay published event `seq` (true) or `timeout` passed (false).
  bool WaitPublished(int64_t seq, std::chrono::milliseconds timeout);

 private:
  void Run();
  // Sets published_ from the stream (after the newest message in it) and the log; marks a skip.
  Status Resume();
  // Publishes what the log holds after published_, while active and not stopping.
  Status PublishBacklog();

  store::EventLog& log_;
  NatsStreamClient& stream_;
  Options options_;
  std::atomic<int64_t> published_{0};
  Counter* published_total_ = nullptr;

  std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable published_cv_;
  bool dirty_ = true;
  bool active_ = false;
  uint64_t activations_ = 0;  // times SetActive(true) made it active
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace cairn::bus::nats
