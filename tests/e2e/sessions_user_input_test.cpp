// Sessions end to end: the user_input tool — a question pauses the execution, the answer (or a
// message in the session, or a resume without one) comes back as the tool result; cancelling a
// paused execution. See sessions_stream_test.cpp for the setting.
#include <algorithm>
#include <set>

#include "session_support.h"

namespace cairn::e2e {
namespace {

using namespace std::chrono_literals;
using namespace session_tests;
using SteadyClock = std::chrono::steady_clock;

// ---- user_input ---------------------------------------------------------------------------------

class e2e_sessions_user_input : public SessionTest {
 protected:
  void SetUp() override {
    SessionTest::SetUp();
    if (HasFatalFailure()) return;
    Script({Rule(Match({{"last_role", "user"}}), AskUser("Which city do you leave from?")),
            Rule(Match({{"last_role", "tool"}}), Text("Booked, leaving from {{last_tool_content}}"))});
    SessionAgent("booker");
    sid_ = NewSessionId("booker");
    stream_ = std::make_unique<SessionStream>(server(), sid_);
    ASSERT_TRUE(stream_->Open()) << stream_->Describe();
    posted_ = Send(sid_, "Book me a train to Porto");
    ASSERT_FALSE(posted_.execution_id.empty());
    auto paused = stream_->AwaitType("execution.paused", posted_.execution_id);
    ASSERT_TRUE(paused) << stream_->Describe();
    paused_ = *paused;
  }
  void TearDown() override {
    stream_.reset();
    SessionTest::TearDown();
  }
  std::string sid_;
  std::unique_ptr<SessionStream> stream_;
  Posted posted_;
  SessionEvent paused_;
};

TEST_F(e2e_sessions_user_input, QuestionPausesAndTheAnswerComesBackAsTheToolResult) {
  EXPECT_EQ(paused_.role, "notification") << JsonText(paused_.data);
  EXPECT_NE(paused_.content.find("Which city do you leave from?"), std::string::npos) << JsonText(paused_.data);
  json::object execution = GetExecution(posted_.execution_id);
  EXPECT_EQ(StringAt(execution, "status"), "paused") << JsonText(execution);
  ASSERT_TRUE(execution.contains("awaiting_input")) << JsonText(execution);
  const json::value& awaiting = execution.at("awaiting_input");
  EXPECT_TRUE(IsTrueAt(execution, "awaiting_input") ||
              (!awaiting.is_null() && !awaiting.is_bool() && Mentions(awaiting, "Which city")))
      << JsonText(execution);
  auto notes = Messages(sid_, "roles=notification");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(StringAt(ObjAt(notes[0], "metadata"), "event_type"), "execution.paused") << JsonText(notes[0]);
  EXPECT_EQ(StringAt(notes[0], "id"), paused_.message_id);
  EXPECT_EQ(LlmRequests().size(), 1u);

  // A bad answer is refused and writes nothing; the execution stays paused.
  auto before = StoreSnapshot();
  std::string input = "/executions/" + posted_.execution_id + "/input";
  EXPECT_TRUE(IsErrorNaming(PostJson(input, json::object{}), 422, "validation_failed", "content"));
  EXPECT_TRUE(IsErrorNaming(PostJson(input, json::object{{"content", 5}}), 422, "validation_failed", "content"));
  EXPECT_TRUE(IsErrorNaming(PostJson(input, json::array{"Lisbon"}), 422, "validation_failed", "body"));
  EXPECT_EQ(StoreSnapshot(), before);
  EXPECT_EQ(StringAt(GetExecution(posted_.execution_id), "status"), "paused");

  Response r = PostJson(input, json::object{{"content", "Lisbon"}});
  ASSERT_EQ(r.status, 200) << r.Describe();
  EXPECT_EQ(StringAt(ObjectOf(r), "id"), posted_.execution_id);
  EXPECT_NE(StringAt(ObjectOf(r), "status"), "paused") << r.body;
  auto end = stream_->AwaitEnd(posted_.execution_id);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->event_type, "execution.completed") << stream_->Describe();

  auto requests = LlmRequests();
  ASSERT_EQ(requests.size(), 2u);
  auto tool_messages = ToolMessagesOf(requests[1]);
  ASSERT_EQ(tool_messages.size(), 1u) << JsonText(requests[1]);
  EXPECT_NE(StringAt(tool_messages[0], "content").find("Lisbon"), std::string::npos) << JsonText(tool_messages[0]);
  auto assistant = WithRole(Messages(sid_), "assistant");
  ASSERT_EQ(assistant.size(), 1u);
  EXPECT_NE(StringAt(assistant[0], "content").find("Lisbon"), std::string::npos);
  auto events = stream_->Events();
  EXPECT_LT(IndexOf(events, "execution.paused"), IndexOf(events, "message.created", "", "assistant")) << DescribeEvents(events);
  // The answered question closes its tool call and its step before the next step starts.
  EXPECT_LT(IndexOf(events, "execution.paused"), IndexOf(events, "tool.completed")) << DescribeEvents(events);
  EXPECT_LT(IndexOf(events, "tool.completed"), IndexOf(events, "message.created", "", "assistant")) << DescribeEvents(events);
  EXPECT_EQ(CountOf(events, "execution.paused"), 1u);

  // Answering again is a conflict now.
  EXPECT_TRUE(IsError(PostJson(input, json::object{{"content", "Lisbon"}}), 409, "conflict"));
}

TEST_F(e2e_sessions_user_input, AMessageInTheSessionWhilePausedIsTheAnswer) {
  Posted answer = Send(sid_, "From Lisbon, please");
  EXPECT_TRUE(answer.execution_id.empty() || answer.execution_id == posted_.execution_id)
      << "the message answers the paused execution, it starts none: " << answer.execution_id;
  auto end = stream_->AwaitEnd(posted_.execution_id);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->event_type, "execution.completed") << stream_->Describe();
  auto requests = LlmRequests();
  ASSERT_EQ(requests.size(), 2u);
  auto tool_messages = ToolMessagesOf(requests[1]);
  ASSERT_EQ(tool_messages.size(), 1u);
  EXPECT_NE(StringAt(tool_messages[0], "content").find("From Lisbon"), std::string::npos) << JsonText(tool_messages[0]);
  EXPECT_EQ(ListEvery("/executions?kind=agent&session_id=" + sid_).size(), 1u) << "no second execution";
  auto users = Messages(sid_, "roles=user");
  ASSERT_EQ(users.size(), 2u);
  EXPECT_EQ(StringAt(users[1], "content"), "From Lisbon, please");
  EXPECT_EQ(StringAt(users[1], "id"), answer.message_id);
}

TEST_F(e2e_sessions_user_input, ResumeWithoutAnAnswerTellsTheAgentTheUserDidNotAnswer) {
  std::string target = "/executions/" + posted_.execution_id + "/resume";
  Request no_body{"POST", target, {}, std::nullopt, std::nullopt};
  Response r = client().Send(no_body);
  ASSERT_EQ(r.status, 200) << r.Describe();
  auto end = stream_->AwaitEnd(posted_.execution_id);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->event_type, "execution.completed") << stream_->Describe();
  auto requests = LlmRequests();
  ASSERT_EQ(requests.size(), 2u);
  auto tool_messages = ToolMessagesOf(requests[1]);
  ASSERT_EQ(tool_messages.size(), 1u);
  EXPECT_FALSE(StringAt(tool_messages[0], "content").empty());
  EXPECT_TRUE(IsError(PostJson(target, json::object{}), 409, "conflict"));
}

TEST_F(e2e_sessions_user_input, CancelAPausedExecutionAtOnce) {
  Response r = PostJson("/executions/" + posted_.execution_id + "/cancel", json::object{});
  ASSERT_EQ(r.status, 200) << r.Describe();
  EXPECT_EQ(StringAt(ObjectOf(r), "status"), "cancelled") << "a paused execution is cancelled at once: " << r.body;
  auto end = stream_->AwaitEnd(posted_.execution_id);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->event_type, "execution.cancelled");
  EXPECT_EQ(LlmRequests().size(), 1u);
  EXPECT_TRUE(IsError(PostJson("/executions/" + posted_.execution_id + "/input", json::object{{"content", "x"}}), 409,
                      "conflict"));
}

TEST_F(e2e_sessions, CancellingAPausedExecutionLetsTheQueuedOnesRun) {
  json::object ask = AskUser("Which city?");
  ask["delay_ms"] = 600;  // long enough to queue the second message behind it
  Script({Rule(Match({{"last_content_contains", "first"}}), ask),
          Rule(Match({{"last_content_contains", "second"}}), Text("second done"))});
  SessionAgent("asker");
  std::string sid = NewSessionId("asker");
  SessionStream stream(server(), sid);
  ASSERT_TRUE(stream.Open()) << stream.Describe();
  Posted first = Send(sid, "first question");
  ASSERT_TRUE(stream.AwaitType("execution.started", first.execution_id)) << stream.Describe();
  Posted second = Send(sid, "second question");  // queued while the first runs
  ASSERT_TRUE(stream.AwaitType("execution.paused", first.execution_id)) << stream.Describe();
  EXPECT_EQ(StringAt(GetExecution(second.execution_id), "status"), "pending");
  ASSERT_EQ(PostJson("/executions/" + first.execution_id + "/cancel", json::object{}).status, 200);
  auto end = stream.AwaitEnd(second.execution_id);
  ASSERT_TRUE(end) << stream.Describe();
  EXPECT_EQ(end->event_type, "execution.completed");
}

}  // namespace
}  // namespace cairn::e2e
