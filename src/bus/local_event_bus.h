// LocalEventBus: the in-process EventBus, fed by the store's commit notifications.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <set>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <unordered_map>

#include "base/metrics.h"
#include "bus/event_bus.h"

namespace cairn::bus {

class LocalEventBus final : public EventBus {
 public:
  // Registers itself as `log`'s commit listener and starts its thread. `log` must outlive the bus.
  // Keeps the newest `window_events` events in memory. `metrics` may be null.
  static Result<std::unique_ptr<LocalEventBus>> Start(store::EventLog& log, size_t window_events,
                                                      MetricsRegistry* metrics);
  ~LocalEventBus() override;  // Stop()s

  Result<std::vector<EventPtr>> Read(int64_t after_seq, size_t limit) override;
  bool InWindow(int64_t after_seq) const override;
  int64_t LastSeq() const override { return last_seq_.load(); }
  Result<store::EventLogBounds> Bounds() override { return log_.Bounds(); }
  std::unique_ptr<Subscription> Subscribe(std::function<void()> wake) override;
  std::unique_ptr<Subscription> SubscribeWhen(std::function<void()> wake, Interest interest, int64_t lag) override;
  std::unique_ptr<Subscription> SubscribeWhen(std::function<void()> wake, Interest interest, int64_t lag,
                                              InterestKeys keys) override;
  int64_t InterestCheckedSeq() const override { return checked_seq_.load(std::memory_order_acquire); }

  // Ends the bus thread; later commits are not published. Idempotent.
  void Stop();

 private:
  class Handle;
  LocalEventBus(store::EventLog& log, size_t window_events, int64_t last_seq);
  void Run();
  // Reads what the log has after last_seq_ into the window; returns false on a read error.
  bool Fetch(std::vector<EventPtr>* fresh);
  // Publishes what the writer handed over when it continues the window without a gap (else
  // reads the log). Returns false on a read error.
  bool Publish(std::vector<model::Event> committed, bool read_log, std::vector<EventPtr>* fresh);
  void WakeSubscribers(const std::vector<EventPtr>& fresh);
  void CountByTenant(const std::vector<EventPtr>& fresh);
  // Registers a subscriber. `asked_every_event`: its interest judges every event within its keys
  // (SubscribeWhen with keys); else one yes per commit is enough.
  std::unique_ptr<Subscription> Add(std::function<void()> wake, Interest interest, int64_t lag, InterestKeys keys,
                                    bool asked_every_event);
  void Unsubscribe(uint64_t id);
  // subscribers_mu_ held: indexes (or, with `add` false, unindexes) subscriber `id` by its keys.
  void Index(uint64_t id, const InterestKeys& keys, bool add);
  // subscribers_mu_ held: calls `ask` with every subscriber `event` may interest.
  template <typename Ask>
  void ForCandidates(const model::Event& event, Ask&& ask);

  store::EventLog& log_;
  const size_t window_events_;
  std::atomic<int64_t> last_seq_;

  mutable std::shared_mutex window_mu_;  // readers (every stream's pump) share it; Fetch takes it alone
  std::deque<EventPtr> window_;  // consecutive seqs, newest at the back

  std::mutex signal_mu_;
  std::condition_variable signal_;
  bool dirty_ = false;
  std::vector<model::Event> committed_;  // handed over by the log's writer, not yet published
  bool read_log_ = false;                // a commit handed nothing over: read the log
  bool stopping_ = false;

  std::mutex subscribers_mu_;
  uint64_t next_id_ = 1;
  struct Subscriber {
    std::function<void()> wake;
    Interest interest;      // empty: woken on every commit
    int64_t lag = 0;        // with an interest: woken at least every `lag` events
    int64_t woken_seq = 0;  // the last seq published when it was last woken
    InterestKeys keys;      // which events reach `interest`
    bool interested = false;  // during WakeSubscribers: to be woken
    bool asked_every_event = true;
    int64_t asked_seq = 0;  // the last event it was asked about (an event under two of its keys is asked once)
    std::multimap<int64_t, uint64_t>::iterator due{};  // its entry in lag_due_ (with an interest)
  };
  std::map<uint64_t, Subscriber> subscribers_;
  // The index over the subscribers with an interest (subscribers_mu_).
  using Ids = std::set<uint64_t>;
  Ids every_event_;
  std::unordered_map<std::string, Ids> by_schema_;
  std::unordered_map<std::string, Ids> by_id_;
  std::unordered_map<std::string, Ids> by_tag_;
  // schema -> context field -> value -> subscribers
  std::unordered_map<std::string, std::unordered_map<std::string, std::unordered_map<std::string, Ids>>> by_field_;
  std::atomic<int64_t> checked_seq_{0};
  std::set<uint64_t> every_commit_;              // subscribers without an interest
  std::multimap<int64_t, uint64_t> lag_due_;     // seq at which a subscriber's lag wakes it -> id
  std::atomic<int64_t> subscriber_count_{0};
  std::unique_ptr<LabeledCounters> published_by_tenant_;  // null without metrics

  std::thread thread_;
};

}  // namespace cairn::bus
