#include "bus/ephemeral_hub.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace cairn::bus {
namespace {

EphemeralPtr Token(const std::string& delta) {
  auto event = std::make_shared<EphemeralEvent>();
  event->type = "agent.token";
  event->owner_id = "default";
  event->tags = {"session:s1"};
  event->at = 1'000'000;
  event->data = {{"delta", delta}};
  return event;
}

TEST(EphemeralHubTest, PublishReachesEverySubscriberInOrder) {
  EphemeralHub hub;
  std::vector<std::string> a, b;
  auto sub_a = hub.Subscribe([&](const EphemeralPtr& e) { a.push_back(std::string(e->data.at("delta").as_string())); });
  auto sub_b = hub.Subscribe([&](const EphemeralPtr& e) { b.push_back(std::string(e->data.at("delta").as_string())); });
  EXPECT_EQ(hub.subscriber_count(), 2u);
  hub.Publish(Token("he"));
  hub.Publish(Token("llo"));
  EXPECT_EQ(a, (std::vector<std::string>{"he", "llo"}));
  EXPECT_EQ(b, (std::vector<std::string>{"he", "llo"}));
}

TEST(EphemeralHubTest, EverySubscriberGetsTheSameSharedEvent) {
  EphemeralHub hub;
  const EphemeralEvent* seen_a = nullptr;
  const EphemeralEvent* seen_b = nullptr;
  auto sub_a = hub.Subscribe([&](const EphemeralPtr& e) { seen_a = e.get(); });
  auto sub_b = hub.Subscribe([&](const EphemeralPtr& e) { seen_b = e.get(); });
  EphemeralPtr event = Token("x");
  hub.Publish(event);
  EXPECT_EQ(seen_a, event.get());
  EXPECT_EQ(seen_b, event.get());
}

TEST(EphemeralHubTest, PublishingWithoutSubscribersOrANullEventDoesNothing) {
  EphemeralHub hub;
  hub.Publish(Token("nobody listens"));
  int calls = 0;
  auto sub = hub.Subscribe([&](const EphemeralPtr&) { ++calls; });
  hub.Publish(nullptr);
  EXPECT_EQ(calls, 0);
}

TEST(EphemeralHubTest, AnUnsubscribedFunctionIsNeverCalledAgain) {
  EphemeralHub hub;
  int calls_a = 0, calls_b = 0;
  auto sub_a = hub.Subscribe([&](const EphemeralPtr&) { ++calls_a; });
  auto sub_b = hub.Subscribe([&](const EphemeralPtr&) { ++calls_b; });
  hub.Publish(Token("1"));
  sub_a.reset();
  EXPECT_EQ(hub.subscriber_count(), 1u);
  hub.Publish(Token("2"));
  hub.Publish(Token("3"));
  EXPECT_EQ(calls_a, 1);
  EXPECT_EQ(calls_b, 3);
  sub_b.reset();
  EXPECT_EQ(hub.subscriber_count(), 0u);
  hub.Publish(Token("4"));
  EXPECT_EQ(calls_b, 3);
}

TEST(EphemeralHubTest, ADeliveryMayUnsubscribeAnotherSubscriber) {
  EphemeralHub hub;
  int calls_second = 0;
  std::unique_ptr<Subscription> second;
  auto first = hub.Subscribe([&](const EphemeralPtr&) { second.reset(); });
  second = hub.Subscribe([&](const EphemeralPtr&) { ++calls_second; });
  hub.Publish(Token("1"));  // the first delivery unsubscribes the second before its turn
  hub.Publish(Token("2"));
  EXPECT_EQ(calls_second, 0);
  EXPECT_EQ(hub.subscriber_count(), 1u);
}

// Publishers and (un)subscribers on several threads: every delivery reaches a live subscriber
// (never one whose Subscription destructor has returned), and a subscriber that stays subscribed
// throughout receives every event.
TEST(EphemeralHubTest, ConcurrentPublishAndUnsubscribeNeverDeliversToAGoneSubscriber) {
  EphemeralHub hub;
  constexpr int kPublishers = 3;
  constexpr int kEventsEach = 3000;
  constexpr int kChurners = 2;

  std::atomic<int> steady_calls{0};
  auto steady = hub.Subscribe([&](const EphemeralPtr&) { steady_calls.fetch_add(1); });

  std::atomic<int> late_calls{0};     // deliveries after the destructor returned: must stay 0
  std::atomic<int> churned_calls{0};  // deliveries to the short-lived subscribers
  std::atomic<bool> publishing{true};
  std::vector<std::thread> churners;
  for (int c = 0; c < kChurners; ++c) {
    churners.emplace_back([&] {
      do {
        auto gone = std::make_shared<std::atomic<bool>>(false);
        auto sub = hub.Subscribe([&, gone](const EphemeralPtr&) {
          if (gone->load()) late_calls.fetch_add(1);
          churned_calls.fetch_add(1);
        });
        sub.reset();
        gone->store(true);
      } while (publishing.load());
    });
  }
  std::vector<std::thread> publishers;
  for (int p = 0; p < kPublishers; ++p) {
    publishers.emplace_back([&] {
      for (int i = 0; i < kEventsEach; ++i) hub.Publish(Token("t"));
    });
  }
  for (auto& t : publishers) t.join();
  publishing.store(false);
  for (auto& t : churners) t.join();

  EXPECT_EQ(late_calls.load(), 0) << "of " << churned_calls.load() << " deliveries to short-lived subscribers";
  EXPECT_EQ(steady_calls.load(), kPublishers * kEventsEach);
  EXPECT_EQ(hub.subscriber_count(), 1u);
  steady.reset();
  EXPECT_EQ(hub.subscriber_count(), 0u);
}

}  // namespace
}  // namespace cairn::bus
