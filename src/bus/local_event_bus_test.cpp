#include "bus/local_event_bus.h"
#include "bus/interest_skip.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

namespace cairn::bus {
namespace {

// An in-memory EventLog; Append() commits events and calls the listener like the store's writer.
class FakeLog final : public store::EventLog {
 public:
  // Shapes each appended event (schema, context, ...) before it is committed; may be empty.
  std::function<void(model::Event&)> shape;
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
        if (shape) shape(event);
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
  // Whether, within 10 s of wake-ups, every interest was asked about the events up to `seq`.
  bool WaitChecked(const EventBus& bus, int64_t seq) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(10), [&] { return bus.InterestCheckedSeq() >= seq; });
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

// Events 1..n: every third of schema "note.v1"; the others after the first of schema "req.v1"
// with context {"tool": "echo"} (seq even) or {"tool": "other"}; the first of no schema.
void ShapeMixed(model::Event& event) {
  if (event.seq == 1) return;
  if (event.seq % 3 == 0) {
    event.schema_name = "note.v1";
    return;
  }
  event.schema_name = "req.v1";
  event.context = boost::json::object{{"tool", event.seq % 2 == 0 ? "echo" : "other"}};
}

TEST(LocalEventBusTest, KeyedInterestIsAskedAboutEveryEventWithinItsKeysAndNoOther) {
  FakeLog log;
  log.hand_over = true;
  log.shape = ShapeMixed;
  auto bus = LocalEventBus::Start(log, 100, nullptr);
  ASSERT_TRUE(bus.ok());
  std::mutex mu;
  std::map<std::string, std::vector<int64_t>> asked;
  auto asking = [&](const std::string& who, bool answer) {
    return [&, who, answer](const model::Event& event) {
      std::lock_guard lock(mu);
      asked[who].push_back(event.seq);
      return answer;
    };
  };
  InterestKeys notes;
  notes.every_event = false;
  notes.schemas = {"note.v1"};
  InterestKeys echo;
  echo.every_event = false;
  echo.fields = {{"req.v1", "tool", "echo"}};
  echo.breadcrumb_ids = {"b5"};
  Waiter woken;
  auto note_sub = (*bus)->SubscribeWhen([] {}, asking("notes", false), 1000, notes);
  auto echo_sub = (*bus)->SubscribeWhen([] {}, asking("echo", false), 1000, echo);
  // Answers yes at once, and is still asked about every later event of the commit.
  auto every_sub = (*bus)->SubscribeWhen([&] { woken.Wake(); }, asking("every", true), 1000, InterestKeys{});
  log.Append(10);
  ASSERT_TRUE(woken.WaitChecked(**bus, 10));
  std::lock_guard lock(mu);
  EXPECT_EQ(asked["notes"], (std::vector<int64_t>{3, 6, 9}));
  EXPECT_EQ(asked["echo"], (std::vector<int64_t>{2, 4, 5, 8, 10}));  // b5 by its id
  EXPECT_EQ(asked["every"], (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
}

// Events 1..n tagged by seq: "a" when divisible by 2, "b" when divisible by 3 (6 carries both).
void ShapeTagged(model::Event& event) {
  if (event.seq % 2 == 0) event.tags.push_back("a");
  if (event.seq % 3 == 0) event.tags.push_back("b");
}

TEST(LocalEventBusTest, TagKeyedInterestIsAskedOnceAboutEachEventCarryingOneOfItsTags) {
  FakeLog log;
  log.hand_over = true;
  log.shape = ShapeTagged;
  auto bus = LocalEventBus::Start(log, 100, nullptr);
  ASSERT_TRUE(bus.ok());
  std::mutex mu;
  std::vector<int64_t> asked;
  InterestKeys tags;
  tags.every_event = false;
  tags.tags = {"a", "b"};
  auto sub = (*bus)->SubscribeWhen([] {}, [&](const model::Event& event) {
    std::lock_guard lock(mu);
    asked.push_back(event.seq);
    return false;
  }, 1000, tags);
  Waiter waiter;
  auto plain = (*bus)->Subscribe([&] { waiter.Wake(); });
  log.Append(7);
  ASSERT_TRUE(waiter.WaitChecked(**bus, 7));
  std::lock_guard lock(mu);
  EXPECT_EQ(asked, (std::vector<int64_t>{2, 3, 4, 6}));  // 6 once, though under both keys
}

TEST(SelectorKeysTest, TheSchemaElseATagElseEveryEvent) {
  model::Selector selector;
  EXPECT_TRUE(SelectorKeys(selector).every_event);
  selector.all_tags = {"x", "y"};
  InterestKeys keys = SelectorKeys(selector);
  EXPECT_FALSE(keys.every_event);
  EXPECT_EQ(keys.tags, (std::vector<std::string>{"x"}));  // every match carries x
  selector.any_tags = {"p", "q"};
  EXPECT_EQ(SelectorKeys(selector).tags, (std::vector<std::string>{"p", "q"}));
  selector.schema_name = "note.v1";
  keys = SelectorKeys(selector);
  EXPECT_EQ(keys.schemas, (std::vector<std::string>{"note.v1"}));
  EXPECT_TRUE(keys.tags.empty());
  // A required top-level string field narrows the schema to the events with that value.
  selector.context_match.push_back({"$.tool", model::RuleOp::kEq, boost::json::value("echo")});
  keys = SelectorKeys(selector);
  EXPECT_TRUE(keys.schemas.empty());
  ASSERT_EQ(keys.fields.size(), 1u);
  EXPECT_EQ(keys.fields[0].schema, "note.v1");
  EXPECT_EQ(keys.fields[0].field, "tool");
  EXPECT_EQ(keys.fields[0].value, "echo");
}

TEST(LocalEventBusTest, AnUnsubscribedKeyedInterestIsAskedNoMore) {
  FakeLog log;
  log.hand_over = true;
  log.shape = ShapeMixed;
  auto bus = LocalEventBus::Start(log, 100, nullptr);
  ASSERT_TRUE(bus.ok());
  std::atomic<int> asked{0};
  InterestKeys notes;
  notes.every_event = false;
  notes.schemas = {"note.v1"};
  auto sub = (*bus)->SubscribeWhen([] {}, [&](const model::Event&) { return ++asked, false; }, 1000, notes);
  Waiter waiter;
  auto plain = (*bus)->Subscribe([&] { waiter.Wake(); });
  auto checked = [&](int64_t seq) { return waiter.WaitChecked(**bus, seq); };
  log.Append(3);
  ASSERT_TRUE(checked(3));
  EXPECT_EQ(asked.load(), 1);
  sub.reset();
  log.Append(6);
  ASSERT_TRUE(checked(9));
  EXPECT_EQ(asked.load(), 1);
}

TEST(InterestSkipTest, MovesACursorOnlyPastRefusedEventsJudgedSinceTheSubscription) {
  FakeLog log;
  log.hand_over = true;
  auto bus = LocalEventBus::Start(log, 100, nullptr);
  ASSERT_TRUE(bus.ok());
  Waiter waiter;
  auto plain = (*bus)->Subscribe([&] { waiter.Wake(); });
  auto checked = [&](int64_t seq) { return waiter.WaitChecked(**bus, seq); };
  InterestSkip skip;
  log.Append(4);
  ASSERT_TRUE(checked(4));
  EXPECT_EQ(skip.SkipTo(0, **bus), 0);  // not subscribed yet: nothing was judged for it
  skip.Subscribed(2);
  EXPECT_EQ(skip.SkipTo(1, **bus), 1);  // events up to 2 must be read
  EXPECT_EQ(skip.SkipTo(2, **bus), 4);
  skip.Took(6);
  log.Append(4);
  ASSERT_TRUE(checked(8));
  EXPECT_EQ(skip.SkipTo(4, **bus), 4);  // 6 was taken: read on
  EXPECT_EQ(skip.SkipTo(6, **bus), 8);
  EXPECT_EQ(skip.SkipTo(8, **bus), 8);
}

}  // namespace
}  // namespace cairn::bus
