#include "bus/consumer_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>

namespace cairn::bus {
namespace {

using namespace std::chrono_literals;

// Counts steps; Await waits (with a deadline) until a count is reached.
class StepCounter {
 public:
  void Step() {
    std::lock_guard lock(mu_);
    ++steps_;
    cv_.notify_all();
  }
  bool Await(int steps, std::chrono::milliseconds deadline = 10s) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, deadline, [&] { return steps_ >= steps; });
  }
  int steps() {
    std::lock_guard lock(mu_);
    return steps_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int steps_ = 0;
};

// A tick long enough that no test below depends on it, unless it says so.
constexpr auto kNoTick = std::chrono::milliseconds(60'000);

TEST(ConsumerPool, AddedMemberStepsOnceAndAgainWhenWoken) {
  ConsumerPool pool(2, kNoTick, "test");
  StepCounter counter;
  auto member = pool.Add([&] { counter.Step(); });
  EXPECT_EQ(counter.steps(), 0);  // not before its first wake-up
  member->Wake();
  ASSERT_TRUE(counter.Await(1));
  member->Wake();
  ASSERT_TRUE(counter.Await(2));
  EXPECT_EQ(pool.members(), 1u);
  member.reset();
  EXPECT_EQ(pool.members(), 0u);
}

TEST(ConsumerPool, AWakeDuringAStepRunsItOnceMoreAndNeverTwoAtOnce) {
  ConsumerPool pool(4, kNoTick, "test");
  std::atomic<int> inside{0};
  std::atomic<bool> overlapped{false};
  std::promise<void> entered;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  StepCounter counter;
  std::atomic<int> calls{0};
  auto member = pool.Add([&] {
    if (inside.fetch_add(1) != 0) overlapped = true;
    if (calls.fetch_add(1) == 0) {
      entered.set_value();
      released.wait();  // the first step is held while others wake the member
    }
    inside.fetch_sub(1);
    counter.Step();
  });
  member->Wake();
  entered.get_future().wait();
  for (int i = 0; i < 100; ++i) member->Wake();  // while the first step runs: one more step
  release.set_value();
  ASSERT_TRUE(counter.Await(2));
  // Nothing woke it since: the count stays at 2 (a third step would mean a wake was counted twice).
  member->Remove();
  EXPECT_EQ(counter.steps(), 2);
  EXPECT_FALSE(overlapped);
}

TEST(ConsumerPool, EveryMemberStepsEachTickWithoutAWake) {
  ConsumerPool pool(1, 5ms, "test");
  StepCounter counter;
  auto member = pool.Add([&] { counter.Step(); });
  member->Wake();
  EXPECT_TRUE(counter.Await(3));  // the first step, then one at each tick
}

TEST(ConsumerPool, WakeAfterRunsTheStepOnceTheDelayPassed) {
  ConsumerPool pool(1, kNoTick, "test");
  StepCounter counter;
  auto member = pool.Add([&] { counter.Step(); });
  EXPECT_EQ(counter.steps(), 0);  // not before its first wake-up
  member->Wake();
  ASSERT_TRUE(counter.Await(1));
  auto asked = std::chrono::steady_clock::now();
  member->WakeAfter(30ms);
  ASSERT_TRUE(counter.Await(2));
  EXPECT_GE(std::chrono::steady_clock::now() - asked, 30ms);
  // A removed member's timer does not fire.
  member->WakeAfter(1ms);
  member->Remove();
  StepCounter other;
  auto witness = pool.Add([&] { other.Step(); });
  witness->WakeAfter(20ms);
  ASSERT_TRUE(other.Await(1));
  EXPECT_EQ(counter.steps(), 2);
}

TEST(ConsumerPool, RemoveWaitsForTheStepInProgressAndNoStepFollows) {
  ConsumerPool pool(2, 1ms, "test");  // ticks would run it again if it were still a member
  std::promise<void> entered;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> calls{0};
  std::atomic<bool> finished{false};
  auto member = pool.Add([&] {
    if (calls.fetch_add(1) == 0) {
      entered.set_value();
      released.wait();
      finished = true;
    }
  });
  member->Wake();
  entered.get_future().wait();
  auto removed = std::async(std::launch::async, [&] {
    member->Remove();
    return finished.load();
  });
  release.set_value();
  EXPECT_TRUE(removed.get());  // Remove returned after the step ended
  const int after = calls.load();
  // Several ticks of the other thread pass: a removed member never steps again.
  StepCounter other;
  auto witness = pool.Add([&] { other.Step(); });
  witness->Wake();
  ASSERT_TRUE(other.Await(5));  // ticks
  EXPECT_EQ(calls.load(), after);
}

TEST(ConsumerPool, AStepMayRemoveItsOwnMember) {
  ConsumerPool pool(1, kNoTick, "test");
  std::unique_ptr<ConsumerPool::Member> member;
  std::promise<void> done;
  std::mutex mu;
  std::unique_lock hold(mu);  // the step waits until `member` is assigned
  member = pool.Add([&] {
    std::lock_guard lock(mu);
    member->Remove();  // must not wait for itself
    done.set_value();
  });
  member->Wake();
  hold.unlock();
  EXPECT_EQ(done.get_future().wait_for(10s), std::future_status::ready);
  EXPECT_EQ(pool.members(), 0u);
}

TEST(ConsumerPool, AThousandMembersShareTheFixedThreads) {
  ConsumerPool pool(2, kNoTick, "test");
  StepCounter counter;
  std::vector<std::unique_ptr<ConsumerPool::Member>> members;
  for (int i = 0; i < 1000; ++i) members.push_back(pool.Add([&] { counter.Step(); }));
  for (auto& member : members) member->Wake();
  ASSERT_TRUE(counter.Await(1000));
  for (auto& member : members) member->Wake();
  ASSERT_TRUE(counter.Await(2000));
  EXPECT_EQ(pool.threads(), 2u);
  EXPECT_EQ(pool.members(), 1000u);
}

TEST(ConsumerPool, AfterStopNothingSteps) {
  ConsumerPool pool(2, kNoTick, "test");
  StepCounter counter;
  auto member = pool.Add([&] { counter.Step(); });
  EXPECT_EQ(counter.steps(), 0);  // not before its first wake-up
  member->Wake();
  ASSERT_TRUE(counter.Await(1));
  pool.Stop();
  member->Wake();
  auto late = pool.Add([&] { counter.Step(); });
  late->Wake();
  EXPECT_EQ(counter.steps(), 1);
}

}  // namespace
}  // namespace cairn::bus
