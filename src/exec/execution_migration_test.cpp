#include "exec/execution_migration.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <cstdlib>
#include <filesystem>

#include "base/clock.h"
#include "base/metrics.h"
#include "exec/execution_record.h"
#include "store/sqlite/sqlite_store.h"
#include "support/sqlite_store.h"

namespace cairn::exec {
namespace {
namespace json = boost::json;

class ExecutionMigrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(store_.Open(clock_, &metrics_));
  }

  // A record as an earlier version wrote it.
  void WriteOld(const std::string& path, std::vector<std::string> tags, const char* context) {
    model::BreadcrumbDraft d;
    d.schema_name = std::string(kExecutionSchema);
    d.title = "old run";
    d.path = path;
    d.tags = std::move(tags);
    d.context = json::parse(context);
    auto created = store_->Create(model::WriteContext{"default", "system:test", true}, d, "");
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }

  model::Breadcrumb At(const std::string& path) {
    model::BreadcrumbQuery q;
    q.path = path;
    q.include_context = true;
    auto page = store_->List("default", q);
    EXPECT_TRUE(page.ok() && page->items.size() == 1) << path;
    return page.ok() && !page->items.empty() ? page->items.front() : model::Breadcrumb{};
  }

  ManualClock clock_{1'700'000'000'000'000};
  MetricsRegistry metrics_;
  test_support::TempSqliteStore store_{"cairn-migration-test"};
};

TEST_F(ExecutionMigrationTest, OldRecordsMoveToTheOneShapeOnceAndNewOnesAreLeftAlone) {
  WriteOld("executions/exec:def-1/trig-1/1", {"execution", "executor:agent:a", "trigger:trig-1", "status:failed"},
           R"({"executor":"agent:a","kind":"agent","name":"a","consumer":"exec:def-1","definition_id":"def-1",
               "definition_version":2,"trigger_id":"trig-1","trigger_version":1,"trigger_schema":"user.message.v1",
               "trigger_seq":7,"status":"failed","attempt":2,"started_at":"2026-01-01T00:00:00.000000Z",
               "completed_at":"2026-01-01T00:00:01.500000Z","duration_ms":1500,"error":"llm_error: it broke",
               "execution_id":"x","agent_id":"a","model":"m1","steps":3,
               "usage":{"prompt":10,"completion":5,"total":15},"last_snapshot_id":"snap-1"})");
  WriteOld("session-executions/sx-1", {"session:s1", "session-execution", "status:running", "active:s1", "agent:helper"},
           R"({"id":"sx-1","session_id":"s1","parent_execution_id":null,"user_id":"u1","agent_type":"helper",
               "agent_config":{},"status":"running","input":{"content":"hi","message_id":"m1"},"output":null,
               "last_snapshot_id":null,"step_count":1,"token_usage":{"input":1,"output":2,"total":3},"metadata":{},
               "error_message":null,"started_at":"2026-01-01T00:00:00.000000Z","completed_at":null,
               "snapshot_policy":"steps","awaiting_input":null})");
  ExecutionRecord fresh;
  fresh.id = "new-1";
  fresh.kind = "tool";
  fresh.executor = "echo";
  fresh.status = "completed";
  ASSERT_TRUE(store_->Create(model::WriteContext{"default", "system:test", true}, ExecutionDraft(fresh), "").ok());

  auto moved = MigrateExecutionRecords(*store_, *store_, "default");
  ASSERT_TRUE(moved.ok()) << moved.status().ToString();
  EXPECT_EQ(*moved, 2);

  std::string host_id = StableExecutionId("default", "exec:def-1", "trig-1/1");
  model::Breadcrumb host = At("executions/" + host_id);
  const json::object& h = host.context.as_object();
  EXPECT_EQ(h.at("id"), json::value(host_id));
  EXPECT_EQ(h.at("kind"), "agent");
  EXPECT_EQ(h.at("executor"), "a");
  EXPECT_EQ(h.at("definition").at("version"), 2);
  EXPECT_EQ(h.at("trigger").at("breadcrumb_id"), "trig-1");
  EXPECT_EQ(h.at("trigger").at("seq"), 7);
  EXPECT_EQ(h.at("error").at("code"), "llm_error");
  EXPECT_EQ(h.at("error").at("message"), "it broke");
  EXPECT_EQ(h.at("token_usage").at("input"), 10);
  EXPECT_EQ(h.at("step_count"), 3);
  EXPECT_EQ(h.at("root_execution_id"), json::value(host_id));
  EXPECT_EQ(h.at("metadata").at("model"), "m1");
  std::vector<std::string> want_tags{"execution", "kind:agent", "executor:a", "status:failed", "root:" + host_id,
                                     "trigger:trig-1"};
  EXPECT_EQ(host.tags, want_tags);

  model::Breadcrumb session = At("executions/sx-1");
  const json::object& s = session.context.as_object();
  EXPECT_EQ(s.at("executor"), "helper");
  EXPECT_EQ(s.at("session_id"), "s1");
  EXPECT_EQ(s.at("status"), "running");
  EXPECT_EQ(s.at("user_id"), "u1");
  EXPECT_TRUE(s.at("error").is_null());
  EXPECT_FALSE(s.contains("agent_type"));
  EXPECT_NE(std::find(session.tags.begin(), session.tags.end(), "active:s1"), session.tags.end());
  EXPECT_NE(std::find(session.tags.begin(), session.tags.end(), "session-execution"), session.tags.end());

  EXPECT_EQ(At("executions/new-1").version, 1) << "a record in the current shape is not touched";
  auto again = MigrateExecutionRecords(*store_, *store_, "default");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, 0) << "a second start moves nothing";
}

}  // namespace
}  // namespace cairn::exec
