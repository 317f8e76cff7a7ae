#include "exec/execution_record.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include "model/tool_definition.h"

namespace cairn::exec {
namespace {
namespace json = boost::json;

model::Event ToolRequest(json::object context) {
  model::Event e;
  e.breadcrumb_id = "req-1";
  e.version = 1;
  e.type = "breadcrumb.created";
  e.schema_name = std::string(model::kToolRequestSchema);
  e.context = std::move(context);
  return e;
}

TEST(ExecutionRecordTest, IdsAreStablePerRunAndDifferAcrossRuns) {
  std::string a = StableExecutionId("default", "exec:x", "t1/1");
  EXPECT_EQ(a.size(), 32u);
  EXPECT_EQ(a, StableExecutionId("default", "exec:x", "t1/1"));
  EXPECT_NE(a, StableExecutionId("default", "exec:x", "t1/2"));
  EXPECT_NE(a, StableExecutionId("default", "exec:y", "t1/1"));
  EXPECT_NE(a, StableExecutionId("acme", "exec:x", "t1/1"));
  ExecutorSpec spec;
  spec.consumer_id = "exec:x";
  model::Event deleted = ToolRequest({});
  deleted.breadcrumb_id = "t1";
  EXPECT_EQ(ExecutionIdFor(spec, deleted), a);
  deleted.type = "breadcrumb.deleted";
  EXPECT_NE(ExecutionIdFor(spec, deleted), a) << "a deletion is another run than the creation";
}

TEST(ExecutionRecordTest, ARequestCarryingItsRequesterMakesAChild) {
  json::object request{{"tool", "echo"}};
  AddRequesterLineage(request, "agent-run", Lineage{"", "top", 2, "s1"});
  Lineage child = LineageOf(ToolRequest(request), "tool-run");
  EXPECT_EQ(child.parent_execution_id, "agent-run");
  EXPECT_EQ(child.root_execution_id, "top");
  EXPECT_EQ(child.depth, 3);
  EXPECT_EQ(child.session_id, "s1");

  // A requester that is itself a root names itself as the root.
  json::object from_root;
  AddRequesterLineage(from_root, "agent-run", Lineage{"", "", 0, ""});
  EXPECT_EQ(LineageOf(ToolRequest(from_root), "tool-run").root_execution_id, "agent-run");
}

TEST(ExecutionRecordTest, MalformedLineageMakesARoot) {
  for (const char* text : {R"({})", R"({"execution_id":"p","root_execution_id":"r"})",
                           R"({"execution_id":"p","root_execution_id":"r","execution_depth":-1})",
                           R"({"execution_id":"p","root_execution_id":"r","execution_depth":1000})",
                           R"({"execution_id":"","root_execution_id":"r","execution_depth":1})",
                           R"({"execution_id":7,"root_execution_id":"r","execution_depth":1})"}) {
    Lineage l = LineageOf(ToolRequest(json::parse(text).as_object()), "self");
    EXPECT_EQ(l.parent_execution_id, "") << text;
    EXPECT_EQ(l.root_execution_id, "self") << text;
    EXPECT_EQ(l.depth, 0) << text;
  }
  json::object long_id{{"execution_id", std::string(129, 'a')}, {"root_execution_id", "r"}, {"execution_depth", 1}};
  EXPECT_EQ(LineageOf(ToolRequest(long_id), "self").parent_execution_id, "");
  model::Event not_a_request = ToolRequest({{"execution_id", "p"}, {"root_execution_id", "r"}, {"execution_depth", 1}});
  not_a_request.schema_name = "note.v1";
  EXPECT_EQ(LineageOf(not_a_request, "self").parent_execution_id, "") << "only tool requests carry lineage";
}

TEST(ExecutionRecordTest, OneShapeForEveryRun) {
  ExecutionRecord r;
  r.id = "e1";
  r.kind = "tool";
  r.executor = "echo";
  r.status = "failed";
  r.lineage = Lineage{"p1", "r1", 1, "s1"};
  r.error_code = "timeout";
  r.error_message = "too slow";
  r.token_usage = TokenUsage{1, 2, 3};
  r.started_micros = 1'000'000;
  r.completed_micros = 3'500'000;
  model::BreadcrumbDraft draft = ExecutionDraft(r);
  EXPECT_EQ(draft.path, "executions/e1");
  const json::object& c = draft.context.as_object();
  for (const char* key : {"id", "kind", "executor", "definition", "status", "trigger", "session_id",
                          "parent_execution_id", "root_execution_id", "depth", "attempt", "input", "output", "error",
                          "step_count", "token_usage", "last_snapshot_id", "metadata", "created_at", "started_at",
                          "completed_at", "duration_ms"}) {
    EXPECT_TRUE(c.contains(key)) << key;
  }
  EXPECT_EQ(c.at("duration_ms").as_int64(), 2500);
  EXPECT_EQ(c.at("error").at("code"), "timeout");
  EXPECT_EQ(c.at("token_usage").at("input"), 1);
  EXPECT_TRUE(c.at("trigger").is_null());
  EXPECT_EQ(draft.tags, (std::vector<std::string>{"execution", "kind:tool", "executor:echo", "status:failed", "root:r1",
                                                  "parent:p1", "session:s1"}));
}

TEST(ExecutionRecordTest, LifecycleMoves) {
  EXPECT_TRUE(CanMoveExecution("pending", "running"));
  EXPECT_TRUE(CanMoveExecution("running", "paused"));
  EXPECT_TRUE(CanMoveExecution("paused", "running"));
  EXPECT_TRUE(CanMoveExecution("running", "cancelled"));
  EXPECT_FALSE(CanMoveExecution("pending", "completed"));
  EXPECT_FALSE(CanMoveExecution("paused", "completed"));
  for (const char* end : {"completed", "failed", "cancelled"}) {
    EXPECT_FALSE(CanMoveExecution(end, "running")) << end;
    EXPECT_FALSE(IsActiveStatus(end)) << end;
  }
}

TEST(ExecutionRecordTest, LargeValuesAreOmittedFromTheRecord) {
  EXPECT_EQ(BoundedCopy(json::value("small")), json::value("small"));
  json::value big = json::value(std::string(20000, 'x'));
  json::value kept = BoundedCopy(big);
  ASSERT_TRUE(kept.is_object());
  EXPECT_EQ(kept.at("omitted_bytes").as_int64(), 20002);
}

}  // namespace
}  // namespace cairn::exec
