#include "server/compact_queue.h"

#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <random>

namespace cairn::server {
namespace {

TEST(CompactQueue, IsFirstInFirstOutAcrossReclaimsAndTruncation) {
  // Against std::deque, through a long random run of pushes, pops and truncations.
  CompactQueue<int> queue;
  std::deque<int> expected;
  std::mt19937 random(7);
  int next = 0;
  for (int step = 0; step < 20'000; ++step) {
    int action = static_cast<int>(random() % 10);
    if (action < 6) {
      queue.push_back(next);
      expected.push_back(next++);
    } else if (action < 9 && !expected.empty()) {
      ASSERT_EQ(queue.front(), expected.front());
      queue.pop_front();
      expected.pop_front();
    } else if (!expected.empty()) {
      size_t keep = random() % (expected.size() + 1);
      queue.truncate(keep);
      expected.resize(keep);
    }
    ASSERT_EQ(queue.size(), expected.size());
    ASSERT_EQ(queue.empty(), expected.empty());
    for (size_t i = 0; i < expected.size(); i += 1 + expected.size() / 4) ASSERT_EQ(queue[i], expected[i]);
  }
}

TEST(CompactQueue, APoppedItemIsReleasedAtOnce) {
  CompactQueue<std::shared_ptr<int>> queue;
  auto first = std::make_shared<int>(1);
  std::weak_ptr<int> watch = first;
  queue.push_back(std::move(first));
  queue.push_back(std::make_shared<int>(2));
  queue.pop_front();
  EXPECT_TRUE(watch.expired()) << "a popped frame must not stay alive until its slot is reused";
  EXPECT_EQ(*queue.front(), 2);
}

}  // namespace
}  // namespace cairn::server
