// The shared runtime's parts: JobGroup (one part stopping alone on shared pools) and
// LaneScheduler (one job per lane at a time, a bounded number of lanes at once).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <chrono>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "exec/job_group.h"
#include "exec/lane_scheduler.h"
#include "exec/runtime.h"

namespace cairn::exec {
namespace {

using namespace std::chrono_literals;

// Generous: only a broken scheduler makes a test wait this long, and then it fails instead of hanging.
constexpr auto kPatience = 20s;

// A run as the executors write them: it polls its cancel flag while it works.
void RunUntilCancelled(const std::atomic<bool>& cancelled) {
  while (!cancelled) std::this_thread::sleep_for(1ms);
}

TEST(JobGroupTest, StopCancelsTheWatchedRunsAndReturnsWhenNoneRuns) {
  WorkerPool pool(2);
  JobGroup group;
  std::promise<void> started;
  std::atomic<bool> finished{false};
  ASSERT_TRUE(group.Submit(pool, [&] {
    std::atomic<bool> cancelled{false};
    JobGroup::Watch watch = group.WatchCancel(&cancelled);
    started.set_value();
    RunUntilCancelled(cancelled);
    finished = true;
  }));
  ASSERT_EQ(started.get_future().wait_for(kPatience), std::future_status::ready);
  EXPECT_FALSE(group.stopping());
  group.Stop();
  EXPECT_TRUE(group.stopping());
  EXPECT_TRUE(finished);  // Stop returned after the job, not before
  EXPECT_FALSE(group.Submit(pool, [] {}));
}

TEST(JobGroupTest, AJobStillQueuedWhenItsGroupStopsDoesNothing) {
  WorkerPool pool(1);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<void> blocking;
  // Another part's job holds the only thread.
  ASSERT_TRUE(pool.Submit([&] {
    blocking.set_value();
    released.wait();
  }));
  ASSERT_EQ(blocking.get_future().wait_for(kPatience), std::future_status::ready);
  std::atomic<bool> ran{false};
  {
    JobGroup group;
    ASSERT_TRUE(group.Submit(pool, [&] { ran = true; }));
    group.Stop();  // nothing of the group runs: returns at once
  }                // and the group is gone before its job's turn
  release.set_value();
  pool.Stop();  // runs what is queued
  EXPECT_FALSE(ran);
}

TEST(JobGroupTest, AFlagWatchedAfterStopIsSetAtOnceAndAnEndedWatchIsNotTouched) {
  JobGroup group;
  std::atomic<bool> ended_early{false};
  { JobGroup::Watch watch = group.WatchCancel(&ended_early); }
  group.Stop();
  EXPECT_FALSE(ended_early);
  std::atomic<bool> late{false};
  JobGroup::Watch watch = group.WatchCancel(&late);
  EXPECT_TRUE(late);
}

class LaneSchedulerTest : public ::testing::Test {
 protected:
  // Records when each lane's work starts and ends; the work of a lane listed in `hold_` waits
  // until its promise is released.
  void Work(const LaneScheduler::Lane& lane) {
    std::shared_future<void> hold;
    {
      std::lock_guard lock(mu_);
      log_.push_back(lane.id + " start");
      if (++running_[lane.id] > 1) overlapped_ = true;
      auto it = holds_.find(lane.id);
      if (it != holds_.end()) hold = it->second;
      changed_.notify_all();
    }
    if (hold.valid()) hold.wait();
    std::lock_guard lock(mu_);
    --running_[lane.id];
    log_.push_back(lane.id + " end");
    changed_.notify_all();
  }
  // Whether `entry` is in the log `count` times within kPatience.
  bool WaitFor(const std::string& entry, size_t count = 1) {
    std::unique_lock lock(mu_);
    return changed_.wait_for(lock, kPatience, [&] { return Count(entry) >= count; });
  }
  size_t Count(const std::string& entry) const { return std::count(log_.begin(), log_.end(), entry); }
  size_t IndexOf(const std::string& entry) {
    std::lock_guard lock(mu_);
    return std::find(log_.begin(), log_.end(), entry) - log_.begin();
  }

  WorkerPool pool_{4};
  JobGroup group_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<std::string> log_;
  std::map<std::string, int> running_;
  std::map<std::string, std::shared_future<void>> holds_;
  bool overlapped_ = false;
};

TEST_F(LaneSchedulerTest, ALaneScheduledWhileItRunsRunsAgainAfterNeverAlongside) {
  std::promise<void> release;
  holds_["a"] = release.get_future().share();
  LaneScheduler lanes(pool_, group_, 4, [this](const auto& lane) { Work(lane); });
  lanes.Schedule({"default", "a"});
  ASSERT_TRUE(WaitFor("a start"));
  lanes.Schedule({"default", "a"});
  lanes.Schedule({"default", "a"});  // folded into the one rerun
  {
    std::lock_guard lock(mu_);
    holds_.erase("a");
  }
  release.set_value();
  ASSERT_TRUE(WaitFor("a end", 2));
  lanes.Stop();
  group_.Stop();
  EXPECT_FALSE(overlapped_);
  EXPECT_EQ(Count("a start"), 2u);
}

TEST_F(LaneSchedulerTest, AtMostMaxActiveLanesRunAndTheNextStartsInOrder) {
  std::promise<void> release;
  holds_["a"] = release.get_future().share();
  LaneScheduler lanes(pool_, group_, 1, [this](const auto& lane) { Work(lane); });
  lanes.Schedule({"default", "a"});
  ASSERT_TRUE(WaitFor("a start"));
  lanes.Schedule({"default", "c"});
  lanes.Schedule({"default", "b"});
  release.set_value();
  ASSERT_TRUE(WaitFor("b end"));
  lanes.Stop();
  group_.Stop();
  EXPECT_LT(IndexOf("a end"), IndexOf("c start"));
  EXPECT_LT(IndexOf("c end"), IndexOf("b start"));
}

TEST_F(LaneSchedulerTest, DifferentLanesRunAtTheSameTime) {
  // a waits until b started: with one lane at a time this would never end.
  std::promise<void> b_started;
  holds_["a"] = b_started.get_future().share();
  LaneScheduler lanes(pool_, group_, 2, [&](const auto& lane) {
    if (lane.id == "b") b_started.set_value();
    Work(lane);
  });
  lanes.Schedule({"default", "a"});
  ASSERT_TRUE(WaitFor("a start"));
  lanes.Schedule({"tenant-2", "b"});
  EXPECT_TRUE(WaitFor("a end"));
  lanes.Stop();
  group_.Stop();
}

TEST(WorkerPoolTest, AJobQueuedWhileEveryThreadWaitsGetsAThreadOfItsOwnUpToTheMaximum) {
  WorkerPool pool(1, 3);
  EXPECT_EQ(pool.threads(), 1u);
  // The first two jobs wait until the third has run: they need three threads at once, and with a
  // fixed pool of one this would never end.
  std::promise<void> third_ran;
  std::shared_future<void> third = third_ran.get_future().share();
  std::promise<void> first_done, second_done;
  ASSERT_TRUE(pool.Submit([&] {
    EXPECT_EQ(third.wait_for(kPatience), std::future_status::ready);
    first_done.set_value();
  }));
  ASSERT_TRUE(pool.Submit([&] {
    EXPECT_EQ(third.wait_for(kPatience), std::future_status::ready);
    second_done.set_value();
  }));
  ASSERT_TRUE(pool.Submit([&] { third_ran.set_value(); }));
  EXPECT_EQ(first_done.get_future().wait_for(kPatience), std::future_status::ready);
  EXPECT_EQ(second_done.get_future().wait_for(kPatience), std::future_status::ready);
  EXPECT_EQ(pool.threads(), 3u);
  // At the maximum it grows no more: queued jobs wait for a free thread.
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(pool.Submit([] {}));
  EXPECT_EQ(pool.threads(), 3u);
  pool.Stop();
  EXPECT_EQ(pool.threads(), 0u);
}

TEST(WorkerPoolTest, ThreadsStartedForABurstEndWhenIdleAndComeBackForTheNext) {
  WorkerPool pool(0, 2, std::chrono::milliseconds(20));
  EXPECT_EQ(pool.threads(), 0u);  // nothing kept ready
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<void> a_ran, b_ran;
  ASSERT_TRUE(pool.Submit([&] { a_ran.set_value(); released.wait(); }));
  ASSERT_TRUE(pool.Submit([&] { b_ran.set_value(); released.wait(); }));
  ASSERT_EQ(a_ran.get_future().wait_for(kPatience), std::future_status::ready);
  ASSERT_EQ(b_ran.get_future().wait_for(kPatience), std::future_status::ready);
  EXPECT_EQ(pool.threads(), 2u);
  release.set_value();
  // Idle for the exit time, both end (polled, with a deadline).
  auto until = std::chrono::steady_clock::now() + kPatience;
  while (pool.threads() > 0 && std::chrono::steady_clock::now() < until) std::this_thread::yield();
  EXPECT_EQ(pool.threads(), 0u);
  std::promise<void> c_ran;
  ASSERT_TRUE(pool.Submit([&] { c_ran.set_value(); }));
  EXPECT_EQ(c_ran.get_future().wait_for(kPatience), std::future_status::ready);
  pool.Stop();
  EXPECT_EQ(pool.threads(), 0u);
}

TEST(RuntimeTest, StopCancelsWhatTheWatchdogGuards) {
  Runtime runtime(RuntimeOptions{1, 1});
  std::atomic<bool> cancelled{false};
  runtime.watchdog().Arm(Watchdog::Clock::now() + 1h, &cancelled);
  runtime.Stop();
  EXPECT_TRUE(cancelled);
  EXPECT_FALSE(runtime.pool().Submit([] {}));
  EXPECT_FALSE(runtime.waiting_pool().Submit([] {}));
}

}  // namespace
}  // namespace cairn::exec
