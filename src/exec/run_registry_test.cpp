#include "exec/run_registry.h"

#include <gtest/gtest.h>

namespace cairn::exec {
namespace {
namespace json = boost::json;

json::object Record(const std::string& id, const std::string& parent, const std::string& root) {
  return json::object{{"id", id},
                      {"status", "running"},
                      {"parent_execution_id", parent.empty() ? json::value(nullptr) : json::value(parent)},
                      {"root_execution_id", root}};
}

TEST(RunRegistryTest, CancellingARunCancelsItsDescendantsOnly) {
  RunRegistry runs;
  std::atomic<bool> top{false}, child{false}, grandchild{false}, other{false};
  auto r1 = runs.Add("default", Record("top", "", "top"), "t-top", &top);
  auto r2 = runs.Add("default", Record("child", "top", "top"), "t-child", &child);
  auto r3 = runs.Add("default", Record("grandchild", "child", "top"), "t-gc", &grandchild);
  auto r4 = runs.Add("default", Record("other", "", "other"), "t-other", &other);
  EXPECT_EQ(runs.CancelTree("default", "child"), 2u);
  EXPECT_FALSE(top);
  EXPECT_TRUE(child);
  EXPECT_TRUE(grandchild);
  EXPECT_FALSE(other);
  EXPECT_TRUE(r2.cancel_requested());
  EXPECT_FALSE(r1.cancel_requested());
  EXPECT_EQ(runs.CancelTree("default", "top"), 1u) << "only the one not told yet";
  EXPECT_TRUE(top);
}

TEST(RunRegistryTest, ARunStartingUnderACancelledAncestorStartsCancelled) {
  RunRegistry runs;
  std::atomic<bool> top{false};
  auto r1 = runs.Add("default", Record("top", "", "top"), "", &top);
  runs.CancelTree("default", "top");
  std::atomic<bool> late{false};
  auto r2 = runs.Add("default", Record("late", "top", "top"), "", &late);
  EXPECT_TRUE(late);
  EXPECT_TRUE(r2.cancel_requested());
  // Another tenant's run with the same ids is not touched.
  std::atomic<bool> theirs{false};
  auto r3 = runs.Add("acme", Record("late2", "top", "top"), "", &theirs);
  EXPECT_FALSE(theirs);
}

TEST(RunRegistryTest, TriggersCancelledBeforeTheirRunStartItCancelled) {
  RunRegistry runs;
  EXPECT_EQ(runs.CancelTrigger("req-1"), 0u);
  std::atomic<bool> flag{false};
  auto r = runs.Add("default", Record("x", "", "x"), "req-1", &flag);
  EXPECT_TRUE(flag);
}

TEST(RunRegistryTest, FindsRunsInFlightUntilTheyEnd) {
  RunRegistry runs;
  std::atomic<bool> flag{false};
  {
    auto r = runs.Add("default", Record("x", "", "root-x"), "", &flag);
    ASSERT_TRUE(runs.Find("default", "x").has_value());
    EXPECT_FALSE(runs.Find("acme", "x").has_value());
    EXPECT_EQ(runs.InFlight("default", "root-x").size(), 1u);
    EXPECT_EQ(runs.InFlight("default", "root-y").size(), 0u);
  }
  EXPECT_FALSE(runs.Find("default", "x").has_value());
  EXPECT_EQ(runs.CancelTree("default", "x"), 0u);
}

}  // namespace
}  // namespace cairn::exec
