// Sessions end to end: failures — a failing or unauthorized model, an unknown agent — and kill -9
// during a slow tool. See sessions_stream_test.cpp for the setting.
#include <algorithm>
#include <set>

#include "session_support.h"

namespace cairn::e2e {
namespace {

using namespace std::chrono_literals;
using namespace session_tests;
using SteadyClock = std::chrono::steady_clock;

// ---- failures -----------------------------------------------------------------------------------

TEST_F(e2e_sessions, AFailingModelFailsTheExecutionSayingWhy) {
  Script({Rule(Match({}), json::object{{"status", 500}, {"body", json::object{{"error", json::object{{"message", "the model exploded"}}}}}})});
  SessionAgent("fragile");
  std::string sid = NewSessionId("fragile");
  SessionStream stream(server(), sid);
  ASSERT_TRUE(stream.Open()) << stream.Describe();
  Posted p = Send(sid, "try your best");
  auto end = stream.AwaitEnd(p.execution_id);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->event_type, "execution.failed") << stream.Describe();
  EXPECT_EQ(end->role, "info");
  EXPECT_FALSE(end->content.empty());
  json::object execution = GetExecution(p.execution_id);
  EXPECT_EQ(StringAt(execution, "status"), "failed");
  std::string error = StringAt(ObjAt(execution, "error"), "message");
  EXPECT_NE(error.find("500"), std::string::npos) << error;
  EXPECT_NE(error.find("the model exploded"), std::string::npos) << error;
  EXPECT_GT(MicrosAt(execution, "completed_at"), 0) << JsonText(execution);
  auto messages = Messages(sid);
  EXPECT_TRUE(WithRole(messages, "assistant").empty());
  EXPECT_EQ(StringAt(ObjAt(messages.back(), "metadata"), "event_type"), "execution.failed");
  EXPECT_EQ(LlmRequests().size(), 4u) << "retried up to llm_max_attempts (4)";

  // The session is not stuck: the next message runs.
  Script({Rule(Match({{"last_role", "user"}}), Text("better now"))});
  Posted again = Send(sid, "once more");
  auto end2 = stream.AwaitEnd(again.execution_id);
  ASSERT_TRUE(end2);
  EXPECT_EQ(end2->event_type, "execution.completed");
  EXPECT_TRUE(IsError(PostJson("/executions/" + p.execution_id + "/resume", json::object{}), 409, "conflict"));
}

TEST_F(e2e_sessions, AnUnauthorizedModelFailsAtOnce) {
  Script({Rule(Match({}), json::object{{"status", 401},
                                       {"body", json::object{{"error", json::object{{"message", "Incorrect API key provided"}}}}}})});
  SessionAgent("locked");
  std::string sid = NewSessionId("locked");
  SessionStream stream(server(), sid);
  ASSERT_TRUE(stream.Open()) << stream.Describe();
  Posted p = Send(sid, "hello");
  auto end = stream.AwaitEnd(p.execution_id);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->event_type, "execution.failed");
  std::string error = StringAt(ObjAt(GetExecution(p.execution_id), "error"), "message");
  EXPECT_NE(error.find("401"), std::string::npos) << error;
  EXPECT_NE(error.find("Incorrect API key"), std::string::npos) << error;
  EXPECT_EQ(LlmRequests().size(), 1u) << "a 401 is not retried";
}

TEST_F(e2e_sessions, AnUnknownAgentFailsTheExecutionSayingSo) {
  std::string sid = NewSessionId("ghost-agent");
  SessionStream stream(server(), sid);
  ASSERT_TRUE(stream.Open()) << stream.Describe();
  Posted p = Send(sid, "anyone there?");
  auto end = stream.AwaitEnd(p.execution_id);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->event_type, "execution.failed");
  std::string error = StringAt(ObjAt(GetExecution(p.execution_id), "error"), "message");
  EXPECT_NE(error.find("ghost-agent"), std::string::npos) << error;
  EXPECT_TRUE(LlmRequests().empty());
}

// ---- crash --------------------------------------------------------------------------------------

TEST_F(e2e_sessions, KillDuringASlowToolCompletesEachExecutionOnceAfterRestart) {
  Script({Rule(Match({{"last_role", "user"}, {"last_content_contains", "nap"}}), SleepCall(1500)),
          Rule(Match({{"last_role", "tool"}}), Text("rested: {{last_tool_content}}")),
          Rule(Match({{"last_role", "user"}}), Text("second answer"))});
  SessionAgent("sleeper");
  std::string sid = NewSessionId("sleeper");
  Posted a, b;
  {
    SessionStream stream(server(), sid);
    ASSERT_TRUE(stream.Open()) << stream.Describe();
    a = Send(sid, "take a nap");
    b = Send(sid, "then talk");  // pending behind the first
    ASSERT_TRUE(stream.AwaitType("tool.called", a.execution_id)) << stream.Describe();
  }
  server().Kill9();
  ASSERT_TRUE(server().Start()) << server().error();
  ReconnectTools();

  SessionStream stream(server(), sid, {}, "since=0");
  ASSERT_TRUE(stream.Open()) << stream.Describe();
  auto end_a = stream.AwaitEnd(a.execution_id);
  auto end_b = stream.AwaitEnd(b.execution_id);
  ASSERT_TRUE(end_a && end_b);
  EXPECT_EQ(end_a->event_type, "execution.completed") << stream.Describe();
  EXPECT_EQ(end_b->event_type, "execution.completed") << stream.Describe();
  auto events = stream.Events();
  EXPECT_EQ(CountOf(events, "execution.completed", a.execution_id), 1u) << DescribeEvents(events);
  EXPECT_EQ(CountOf(events, "execution.completed", b.execution_id), 1u) << DescribeEvents(events);
  EXPECT_EQ(CountOf(events, "tool.called", a.execution_id), 1u) << "the tool call is not made again";
  EXPECT_LT(IndexOf(events, "execution.completed", a.execution_id), IndexOf(events, "execution.started", b.execution_id))
      << DescribeEvents(events);

  auto assistant = WithRole(Messages(sid), "assistant");
  ASSERT_EQ(assistant.size(), 2u);
  EXPECT_EQ(StringAt(assistant[0], "content").rfind("rested:", 0), 0u);
  EXPECT_EQ(StringAt(assistant[1], "content"), "second answer");

  // Each model request once: the first of A (no tool result), the second of A, the one of B.
  auto requests = LlmRequests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(TurnsOf(requests[0]).back(), "user: take a nap");
  EXPECT_TRUE(ToolMessagesOf(requests[0]).empty());
  EXPECT_EQ(ToolMessagesOf(requests[1]).size(), 1u);
  EXPECT_EQ(TurnsOf(requests[2]).back(), "user: then talk");
  EXPECT_EQ(ListAll("schema_name=tool.request.v1&include_context=true").size(), 1u) << "the sleep was requested once";
  EXPECT_EQ(StringAt(GetExecution(a.execution_id), "status"), "completed");
  EXPECT_EQ(StringAt(GetSession(sid), "last_execution_id"), b.execution_id);
}

}  // namespace
}  // namespace cairn::e2e
