// Sessions end to end: cancelling executions (during a slow tool, while pending) and the session
// policies (enqueue, reject, interrupt). See sessions_stream_test.cpp for the setting.
#include <algorithm>
#include <set>

#include "session_support.h"

namespace cairn::e2e {
namespace {

using namespace std::chrono_literals;
using namespace session_tests;
using SteadyClock = std::chrono::steady_clock;

// ---- cancel -------------------------------------------------------------------------------------

TEST_F(e2e_sessions, CancelDuringASlowToolStopsItPromptly) {
  Script({Rule(Match({{"last_role", "user"}, {"last_content_contains", "nap"}}), SleepCall(10000)),
          Rule(Match({{"last_role", "tool"}}), Text("woke up")),
          Rule(Match({{"last_role", "user"}}), Text("still here"))});
  SessionAgent("sleeper");
  std::string sid = NewSessionId("sleeper");
  SessionStream stream(server(), sid);
  ASSERT_TRUE(stream.Open()) << stream.Describe();
  Posted p = Send(sid, "take a long nap");
  auto called = stream.AwaitType("tool.called", p.execution_id);
  ASSERT_TRUE(called) << stream.Describe();
  EXPECT_EQ(StringAt(called->metadata, "tool"), "sleep");
  std::string request_id = StringAt(called->metadata, "request_id");
  EXPECT_EQ(StringAt(GetExecution(p.execution_id), "status"), "running");

  auto t0 = SteadyClock::now();
  Response r = client().Send(Request{"POST", "/executions/" + p.execution_id + "/cancel", {}, std::nullopt, std::nullopt});
  ASSERT_EQ(r.status, 200) << r.Describe();
  EXPECT_EQ(StringAt(ObjectOf(r), "id"), p.execution_id);
  auto end = stream.AwaitEnd(p.execution_id, 9000ms);
  ASSERT_TRUE(end) << "not cancelled within 9 s of a 10 s sleep";
  int64_t took = Elapsed(t0);
  EXPECT_EQ(end->event_type, "execution.cancelled") << stream.Describe();
  EXPECT_EQ(end->role, "info");
  EXPECT_LT(took, 5000) << "cancelled " << took << " ms after the request";

  json::object execution = GetExecution(p.execution_id);
  EXPECT_EQ(StringAt(execution, "status"), "cancelled");
  EXPECT_GT(MicrosAt(execution, "completed_at"), 0) << JsonText(execution);
  auto messages = Messages(sid);
  EXPECT_TRUE(WithRole(messages, "assistant").empty());
  bool info = false;
  for (const auto& m : WithRole(messages, "info")) {
    info = info || StringAt(ObjAt(m, "metadata"), "event_type") == "execution.cancelled";
  }
  EXPECT_TRUE(info) << "an info message says the execution was cancelled";
  EXPECT_EQ(LlmRequests().size(), 1u) << "the model is not asked again";

  // The running tool was stopped (its answer comes now, not after 10 s, and is not a success).
  if (!request_id.empty()) {
    json::object tool_answer = tools().AwaitResponse(request_id, 5000ms);
    EXPECT_NE(StatusOf(tool_answer), "success") << JsonText(tool_answer);
  }

  // Every other transition of a cancelled execution is a conflict.
  for (const char* action : {"cancel", "resume"}) {
    EXPECT_TRUE(IsError(PostJson("/executions/" + p.execution_id + "/" + action, json::object{}), 409, "conflict")) << action;
  }
  EXPECT_TRUE(IsError(PostJson("/executions/" + p.execution_id + "/input", json::object{{"content", "x"}}), 409, "conflict"));

  // The session goes on.
  Posted next = Send(sid, "are you there?");
  auto next_end = stream.AwaitEnd(next.execution_id);
  ASSERT_TRUE(next_end);
  EXPECT_EQ(next_end->event_type, "execution.completed");
}

TEST_F(e2e_sessions, CancelAPendingExecutionAtOnce) {
  Script({Rule(Match({{"last_role", "user"}, {"last_content_contains", "nap"}}), SleepCall(10000)),
          Rule(Match({{"last_role", "tool"}}), Text("woke up")),
          Rule(Match({{"last_role", "user"}}), Text("never asked"))});
  SessionAgent("sleeper");
  std::string sid = NewSessionId("sleeper");
  SessionStream stream(server(), sid);
  ASSERT_TRUE(stream.Open()) << stream.Describe();
  Posted running = Send(sid, "take a long nap");
  ASSERT_TRUE(stream.AwaitType("tool.called", running.execution_id)) << stream.Describe();
  Posted queued = Send(sid, "then talk");
  ASSERT_FALSE(queued.execution_id.empty());
  EXPECT_NE(queued.execution_id, running.execution_id);
  EXPECT_EQ(StringAt(GetExecution(queued.execution_id), "status"), "pending");
  Response r = PostJson("/executions/" + queued.execution_id + "/cancel", json::object{});
  ASSERT_EQ(r.status, 200) << r.Describe();
  EXPECT_EQ(StringAt(ObjectOf(r), "status"), "cancelled") << "a pending execution is cancelled at once: " << r.body;
  ASSERT_TRUE(stream.AwaitType("execution.cancelled", queued.execution_id));
  ASSERT_EQ(PostJson("/executions/" + running.execution_id + "/cancel", json::object{}).status, 200);
  auto end = stream.AwaitEnd(running.execution_id, 9000ms);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->event_type, "execution.cancelled");
  auto events = stream.Events();
  EXPECT_EQ(CountOf(events, "execution.started", queued.execution_id), 0u) << DescribeEvents(events);
  EXPECT_EQ(LlmRequests().size(), 1u);
}

// ---- policies -----------------------------------------------------------------------------------

class e2e_sessions_policy : public SessionTest {
 protected:
  void SetUp() override {
    SessionTest::SetUp();
    if (HasFatalFailure()) return;
    SessionAgent("worker");
  }
  // The first task sleeps `ms` in a tool; any other message is answered at once.
  void ScriptSlowFirst(int64_t ms) {
    Script({Rule(Match({{"last_role", "user"}, {"last_content_contains", "first task"}}), SleepCall(ms)),
            Rule(Match({{"last_role", "tool"}}), Text("first done")),
            Rule(Match({{"last_role", "user"}}), Text("second done"))});
  }
};

TEST_F(e2e_sessions_policy, EnqueueRunsTheSecondMessageAfterTheFirst) {
  ScriptSlowFirst(2000);
  std::string sid = NewSessionId("worker", json::object{{"policy", "enqueue"}});
  SessionStream stream(server(), sid);
  ASSERT_TRUE(stream.Open()) << stream.Describe();
  Posted a = Send(sid, "the first task");
  ASSERT_TRUE(stream.AwaitType("tool.called", a.execution_id)) << stream.Describe();
  Posted b = Send(sid, "the second task");
  ASSERT_FALSE(b.execution_id.empty());
  EXPECT_NE(a.execution_id, b.execution_id);
  EXPECT_EQ(StringAt(GetExecution(b.execution_id), "status"), "pending") << "waits while the first runs";
  ASSERT_TRUE(stream.AwaitType("execution.queued", b.execution_id));
  auto end_a = stream.AwaitEnd(a.execution_id);
  auto end_b = stream.AwaitEnd(b.execution_id);
  ASSERT_TRUE(end_a && end_b);
  EXPECT_EQ(end_a->event_type, "execution.completed");
  EXPECT_EQ(end_b->event_type, "execution.completed");

  auto events = stream.Events();
  int a_done = IndexOf(events, "execution.completed", a.execution_id);
  int b_start = IndexOf(events, "execution.started", b.execution_id);
  EXPECT_LT(a_done, b_start) << "the second starts after the first completed:" << DescribeEvents(events);
  json::object ea = GetExecution(a.execution_id), eb = GetExecution(b.execution_id);
  EXPECT_GE(MicrosAt(eb, "started_at"), MicrosAt(ea, "completed_at")) << JsonText(ea) << JsonText(eb);
  auto assistant = WithRole(Messages(sid), "assistant");
  ASSERT_EQ(assistant.size(), 2u);
  EXPECT_EQ(StringAt(assistant[0], "content"), "first done");
  EXPECT_EQ(StringAt(assistant[1], "content"), "second done");

  // The second run got the session's user/assistant history, then its question.
  auto requests = LlmRequestsWith("the second task");
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(TurnsOf(requests[0]),
            (std::vector<std::string>{"user: the first task", "assistant: first done", "user: the second task"}));

  // The session adds up the usage; its last execution is the second.
  json::object session = GetSession(sid);
  EXPECT_EQ(StringAt(session, "last_execution_id"), b.execution_id);
  EXPECT_EQ(IntAt(ObjAt(session, "token_usage"), "total"),
            IntAt(ObjAt(ea, "token_usage"), "total") + IntAt(ObjAt(eb, "token_usage"), "total"))
      << JsonText(session);
  auto listed = ListEvery("/executions?kind=agent&session_id=" + sid, 1);
  EXPECT_EQ(IdsOf(listed), (std::vector<std::string>{b.execution_id, a.execution_id})) << "newest first";
  EXPECT_EQ(ListEvery("/executions?kind=agent&session_id=" + sid + "&status=completed").size(), 2u);
}

TEST_F(e2e_sessions_policy, RejectRefusesAMessageWhileOneRunsAndWritesNothing) {
  ScriptSlowFirst(10000);  // still running when the second message comes
  std::string sid = NewSessionId("worker", json::object{{"policy", "reject"}});
  EXPECT_EQ(StringAt(GetSession(sid), "policy"), "reject");
  SessionStream stream(server(), sid);
  ASSERT_TRUE(stream.Open()) << stream.Describe();
  Posted a = Send(sid, "the first task");
  ASSERT_TRUE(stream.AwaitType("tool.called", a.execution_id)) << stream.Describe();
  Response refused = PostJson("/sessions/" + sid + "/messages", json::object{{"content", "the second task"}});
  EXPECT_TRUE(IsError(refused, 409, "conflict"));
  EXPECT_EQ(StringAt(GetExecution(a.execution_id), "status"), "running") << "refused, not interrupted";
  ASSERT_EQ(PostJson("/executions/" + a.execution_id + "/cancel", json::object{}).status, 200);
  auto end = stream.AwaitEnd(a.execution_id, 9000ms);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->event_type, "execution.cancelled");

  EXPECT_EQ(ListEvery("/executions?kind=agent&session_id=" + sid).size(), 1u);
  auto users = Messages(sid, "roles=user");
  ASSERT_EQ(users.size(), 1u);
  for (const auto& m : ListAll("schema_name=agent.session.message.v1&include_context=true")) {
    EXPECT_EQ(JsonText(m).find("the second task"), std::string::npos) << JsonText(m);
  }
  EXPECT_TRUE(LlmRequestsWith("the second task").empty());

  // Once nothing runs, a message is accepted again.
  Posted c = Send(sid, "the third task");
  auto end_c = stream.AwaitEnd(c.execution_id);
  ASSERT_TRUE(end_c);
  EXPECT_EQ(end_c->event_type, "execution.completed");
}

TEST_F(e2e_sessions_policy, InterruptCancelsTheRunningExecutionThenRunsTheNewMessage) {
  ScriptSlowFirst(10000);
  std::string sid = NewSessionId("worker", json::object{{"policy", "interrupt"}});
  SessionStream stream(server(), sid);
  ASSERT_TRUE(stream.Open()) << stream.Describe();
  Posted a = Send(sid, "the first task");
  ASSERT_TRUE(stream.AwaitType("tool.called", a.execution_id)) << stream.Describe();
  auto t0 = SteadyClock::now();
  Posted b = Send(sid, "the second task");
  ASSERT_FALSE(b.execution_id.empty());
  auto end_a = stream.AwaitEnd(a.execution_id, 9000ms);
  ASSERT_TRUE(end_a);
  EXPECT_EQ(end_a->event_type, "execution.cancelled");
  auto end_b = stream.AwaitEnd(b.execution_id, 9000ms);
  ASSERT_TRUE(end_b) << "the second message waited for the 10 s sleep?";
  EXPECT_EQ(end_b->event_type, "execution.completed");
  EXPECT_LT(Elapsed(t0), 5000);
  auto events = stream.Events();
  EXPECT_LT(IndexOf(events, "execution.cancelled", a.execution_id), IndexOf(events, "execution.started", b.execution_id))
      << DescribeEvents(events);
  EXPECT_EQ(StringAt(GetExecution(a.execution_id), "status"), "cancelled");
  EXPECT_EQ(StringAt(GetExecution(b.execution_id), "status"), "completed");
  auto assistant = WithRole(Messages(sid), "assistant");
  ASSERT_EQ(assistant.size(), 1u);
  EXPECT_EQ(StringAt(assistant[0], "content"), "second done");
}

}  // namespace
}  // namespace cairn::e2e
