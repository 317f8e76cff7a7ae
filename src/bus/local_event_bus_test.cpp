#include "bus/local_event_bus.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <thread>

namespace cairn::bus {
namespace {

// An in-memory EventLog; Append() commits events and calls the listener like the store's writer.
class FakeLog final : public store::EventLog {
 public:
  void Append(int count) {
    std::function<void()> listener;
    CommittedEventsListener events_listener;
    std::vector<model::Event> fresh;
    bool exact = false;
    {
      std::lock_guard lock(mu_);
      for (int i = 0; i < count; ++i) {
        model::Event event;
        event.seq = static_cast<int64_t>(events_.size()) + 1;
        event.type = "breadcrumb.created";
        event.breadcrumb_id = "b" + std::to_string(event.seq);
        events_.push_back(event);
        fresh.push_back(event);
      }
      listener = listener_;
      events_listener = events_listener_;
      exact = hand_over;
    }
    if (events_listener) {
      events_listener(exact ? std::move(fresh) : std::vector<model::Event>{}, exact);
    } else if (listener) {
      listener();
    }
  }
  // Like the store's writer: the committed events go to the listener (else: only a signal).
  void SetCommittedEventsListener(CommittedEventsListener listener) override {
    std::lock_guard lock(mu_);
    events_listener_ = std::move(listener);
  }
  bool hand_over = false;  // set before Append: pass the committed events over (exact)
  Result<std::vector<model::Event>> ReadEvents(int64_t after_seq, size_t limit) override {
    std::lock_guard lock(mu_);
    ++reads;
    std::vector<model::Event> out;
    for (const auto& event : events_) {
      if (event.seq > after_seq && out.size() < limit) out.push_back(event);
    }
    return out;
  }
  Result<store::EventLogBounds> Bounds() override {
    std::lock_guard lock(mu_);
    return store::EventLogBounds{1, static_cast<int64_t>(events_.size())};
  }
  void SetCommitListener(std::function<void()> listener) override {
    std::lock_guard lock(mu_);
    listener_ = std::move(listener);
  }
  Result<int64_t> PruneEvents(int64_t) override { return int64_t{0}; }

  int reads = 0;

 private:
  std::mutex mu_;
  std::vector<model::Event> events_;
  std::function<void()> listener_;
  CommittedEventsListener events_listener_;
};

// Counts wake-ups and lets a test wait for the bus to publish up to a seq.
struct Waiter {
  std::mutex mu;
  std::condition_variable cv;
  int wakes = 0;
  void Wake() {
    std::lock_guard lock(mu);
    ++wakes;
    cv.notify_all();
  }
  void WaitFor(const EventBus& bus, int64_t seq) {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return bus.LastSeq() >= seq; }));
  }
};

std::vector<int64_t> Seqs(const std::vector<EventPtr>& events) {
  std::vector<int64_t> seqs;
  for (const auto& event : events) seqs.push_back(event->seq);
  return seqs;
}

TEST(LocalEventBusTest, PublishesCommittedEventsInOrderAndWakesSubscribers) {
  FakeLog log;
  auto bus = LocalEventBus::Start(log, 100, nullptr);
  ASSERT_TRUE(bus.ok());
  Waiter waiter;
  auto subscription = (*bus)->Subscribe([&] { waiter.Wake(); });
  log.Append(5);
  waiter.WaitFor(**bus, 5);
  EXPECT_GE(waiter.wakes, 1);
  auto events = (*bus)->Read(0, 100);
  ASSERT_TRUE(events.ok());
  EXPECT_EQ(Seqs(*events), (std::vector<int64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(Seqs(*(*bus)->Read(3, 100)), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(Seqs(*(*bus)->Read(1, 2)), (std::vector<int64_t>{2, 3}));
  EXPECT_TRUE((*bus)->Read(5, 100)->empty());
}

TEST(LocalEventBusTest, StartsAfterWhatTheLogAlreadyHolds) {
  FakeLog log;
  log.Append(3);
  auto bus = LocalEventBus::Start(log, 100, nullptr);
  ASSERT_TRUE(bus.ok());
  EXPECT_EQ((*bus)->LastSeq(), 3);
  EXPECT_FALSE((*bus)->InWindow(0));  // old events come from the log
  EXPECT_EQ(Seqs(*(*bus)->Read(1, 100)), (std::vector<int64_t>{2, 3}));
}

TEST(LocalEventBusTest, ReaderBehindTheWindowCatchesUpFromTheLog) {
  FakeLog log;
  auto bus = LocalEventBus::Start(log, 10, nullptr);
  ASSERT_TRUE(bus.ok());
  Waiter waiter;
  auto subscription = (*bus)->Subscribe([&] { waiter.Wake(); });
  log.Append(50);
  waiter.WaitFor(**bus, 50);
  EXPECT_TRUE((*bus)->InWindow(40));
  EXPECT_FALSE((*bus)->InWindow(5));
  int reads_before = log.reads;
  auto window_read = (*bus)->Read(45, 100);
  EXPECT_EQ(log.reads, reads_before);  // served from memory
  EXPECT_EQ(Seqs(*window_read), (std::vector<int64_t>{46, 47, 48, 49, 50}));
  auto catch_up = (*bus)->Read(5, 3);
  EXPECT_EQ(log.reads, reads_before + 1);
  EXPECT_EQ(Seqs(*catch_up), (std::vector<int64_t>{6, 7, 8}));
}

TEST(LocalEventBusTest, UnsubscribedFunctionIsNotCalledAgain) {
  FakeLog log;
  auto bus = LocalEventBus::Start(log, 100, nullptr);
  ASSERT_TRUE(bus.ok());
  Waiter kept, dropped;
  auto keep = (*bus)->Subscribe([&] { kept.Wake(); });
  auto drop = (*bus)->Subscribe([&] { dropped.Wake(); });
  log.Append(1);
  kept.WaitFor(**bus, 1);
  drop.reset();
  int dropped_wakes = dropped.wakes;
  log.Append(1);
  kept.WaitFor(**bus, 2);
  {
    std::unique_lock lock(kept.mu);
    kept.cv.wait_for(lock, std::chrono::seconds(10), [&] { return kept.wakes >= 2; });
  }
  EXPECT_EQ(dropped.wakes, dropped_wakes);
}

TEST(LocalEventBusTest, PublishesHandedOverEventsWithoutReadingTheLog) {
  FakeLog log;
  log.hand_over = true;
  auto bus = LocalEventBus::Start(log, 100, nullptr);
  ASSERT_TRUE(bus.ok());
  Waiter waiter;
  auto subscription = (*bus)->Subscribe([&] { waiter.Wake(); });
  log.Append(3);
  waiter.WaitFor(**bus, 3);
  log.Append(2);
  waiter.WaitFor(**bus, 5);
  EXPECT_EQ(Seqs(*(*bus)->Read(0, 100)), (std::vector<int64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ((*(*bus)->Read(3, 1)).front()->breadcrumb_id, "b4");
  EXPECT_EQ(log.reads, 0);  // every event came from the writer's hand-over
}

TEST(LocalEventBusTest, ReadsTheLogWhenWhatIsHandedOverLeavesAGap) {
  FakeLog log;
  auto bus = LocalEventBus::Start(log, 100, nullptr);
  ASSERT_TRUE(bus.ok());
  Waiter waiter;
  auto subscription = (*bus)->Subscribe([&] { waiter.Wake(); });
  log.Append(2);  // signalled only: read from the log
  waiter.WaitFor(**bus, 2);
  log.hand_over = true;
  log.Append(2);
  waiter.WaitFor(**bus, 4);
  EXPECT_EQ(Seqs(*(*bus)->Read(0, 100)), (std::vector<int64_t>{1, 2, 3, 4}));
}

TEST(LocalEventBusTest, SubscribeWhenWakesForInterestingEventsAndAfterTheLag) {
  FakeLog log;
  log.hand_over = true;
  auto bus = LocalEventBus::Start(log, 100, nullptr);
  ASSERT_TRUE(bus.ok());
  Waiter all, filtered;
  auto every = (*bus)->Subscribe([&] { all.Wake(); });
  auto some = (*bus)->SubscribeWhen([&] { filtered.Wake(); },
                                    [](const model::Event& event) { return event.breadcrumb_id == "b3"; }, 10);
  log.Append(1);
  log.Append(1);
  log.Append(1);  // b3
  all.WaitFor(**bus, 3);
  {
    std::unique_lock lock(filtered.mu);
    ASSERT_TRUE(filtered.cv.wait_for(lock, std::chrono::seconds(10), [&] { return filtered.wakes >= 1; }));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  {
    std::lock_guard lock(filtered.mu);
    EXPECT_EQ(filtered.wakes, 1);  // b1 and b2 did not wake it
  }
  log.Append(10);  // none of interest, but 10 events: the lag
  std::unique_lock lock(filtered.mu);
  EXPECT_TRUE(filtered.cv.wait_for(lock, std::chrono::seconds(10), [&] { return filtered.wakes >= 2; }));
}

}  // namespace
}  // namespace cairn::bus
