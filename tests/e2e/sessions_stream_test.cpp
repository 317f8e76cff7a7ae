// Sessions end to end (docs/sessions.md, docs/api.md "Sessions"): the real server runs a session's
// agent against the scripted fixture LLM (llm_servers.h); the tests drive it through /sessions,
// /executions and /snapshots and read everything that happens from the session's event stream,
// GET /sessions/{id}/events. Waiting is always on a stream with a deadline.
//
// This file: the whole flow told by the stream in order, resuming the stream, the first message
// creating its session. The other sessions_*_test.cpp files: user_input, cancel and policies,
// failures and crashes, the API's refusals, snapshots and listings.
#include <algorithm>
#include <set>

#include "session_support.h"

namespace cairn::e2e {
namespace {

using namespace std::chrono_literals;
using namespace session_tests;
using SteadyClock = std::chrono::steady_clock;

// ---- the whole flow -----------------------------------------------------------------------------

TEST_F(e2e_sessions, MessageRunsTheAgentAndTheStreamTellsEverythingInOrder) {
  Script({Rule(Match({{"last_role", "user"}}), ToolCallsReply({{"echo", json::object{{"text", "ping"}}}})),
          Rule(Match({{"last_role", "tool"}}), Text("The tool said {{last_tool_content}}"))});
  SessionAgent("helper");
  json::object session = NewSession(json::object{{"title", "Trip planning"}, {"user_id", "u1"}, {"agent_id", "helper"}});
  std::string sid = StringAt(session, "id");
  ASSERT_FALSE(sid.empty());
  EXPECT_EQ(StringAt(session, "title"), "Trip planning");
  EXPECT_EQ(StringAt(session, "user_id"), "u1");
  EXPECT_EQ(StringAt(session, "agent_id"), "helper");
  EXPECT_EQ(StringAt(session, "status"), "active");
  EXPECT_EQ(StringAt(session, "policy"), "enqueue");
  EXPECT_EQ(StringAt(session, "snapshot_policy"), "final");
  EXPECT_EQ(IntAt(ObjAt(session, "token_usage"), "total"), 0) << JsonText(session);
  EXPECT_TRUE(IsNull(session, "last_execution_id")) << JsonText(session);
  EXPECT_TRUE(IsNull(session, "last_snapshot_id")) << JsonText(session);
  EXPECT_GT(MicrosAt(session, "created_at"), 0) << JsonText(session);

  SessionStream stream(server(), sid);
  ASSERT_TRUE(stream.Open()) << stream.Describe();
  Posted p = Send(sid, "Find me a train to Porto");
  ASSERT_FALSE(p.execution_id.empty());
  auto done = stream.AwaitType("execution.completed", p.execution_id);
  ASSERT_TRUE(done) << stream.Describe();

  // ---- the stream: the documented order, well-formed frames ----
  // The end of the tool run the agent caused is a frame of its own naming its parent (no
  // message behind it); the others are the session run's messages.
  std::vector<SessionEvent> frames = stream.Events();
  std::vector<SessionEvent> events = OfExecution(frames, p.execution_id);
  ASSERT_EQ(frames.size(), events.size() + 1) << DescribeEvents(frames);
  auto child = std::find_if(frames.begin(), frames.end(),
                            [&](const SessionEvent& e) { return e.execution_id != p.execution_id; });
  EXPECT_EQ(child->event_type, "execution.completed") << child->Describe();
  EXPECT_EQ(StringAt(child->data, "parent_execution_id"), p.execution_id) << child->Describe();
  EXPECT_TRUE(child->message_id.empty()) << child->Describe();
  EXPECT_EQ(StringAt(child->metadata, "executor"), "echo") << child->Describe();
  EXPECT_TRUE(IsToolThenAnswerOrder(TypesOf(events))) << DescribeEvents(events);
  for (size_t i = 0; i < events.size(); ++i) {
    const SessionEvent& e = events[i];
    EXPECT_EQ(e.session_id, sid) << e.Describe();
    EXPECT_FALSE(e.message_id.empty()) << e.Describe();
    EXPECT_GT(e.timestamp, 1600000000000000) << "timestamp in microseconds: " << JsonText(e.data);
    for (const char* key : {"session_id", "message_id", "execution_id", "event_type", "role", "content", "metadata",
                            "timestamp"}) {
      EXPECT_TRUE(e.data.contains(key)) << key << " missing in " << JsonText(e.data);
    }
    if (i > 0) {
      EXPECT_GT(e.seq, events[i - 1].seq) << "seq ids increase";
      EXPECT_GE(e.timestamp, events[i - 1].timestamp) << "timestamps do not go back: " << DescribeEvents(events);
      EXPECT_EQ(e.execution_id, p.execution_id) << e.Describe();
    }
    if (e.event_type != "message.created") {
      EXPECT_EQ(e.role, "info") << e.Describe();
    }
  }
  ASSERT_GE(events.size(), 10u) << DescribeEvents(events);
  const SessionEvent& user = events[0];
  EXPECT_EQ(user.role, "user");
  EXPECT_EQ(user.content, "Find me a train to Porto");
  EXPECT_EQ(user.message_id, p.message_id);
  EXPECT_TRUE(user.execution_id.empty() || user.execution_id == p.execution_id) << JsonText(user.data);
  EXPECT_EQ(events[1].content, "Execution queued");
  EXPECT_EQ(events[2].content, "Execution started");
  EXPECT_EQ(events[3].content, "Step 1 started");
  int called = IndexOf(events, "tool.called");
  int completed_tool = IndexOf(events, "tool.completed");
  ASSERT_GE(called, 0);
  ASSERT_GE(completed_tool, 0);
  EXPECT_EQ(events[called].content, "Calling echo");
  EXPECT_EQ(StringAt(events[called].metadata, "tool"), "echo") << JsonText(events[called].data);
  std::string request_id = StringAt(events[called].metadata, "request_id");
  EXPECT_FALSE(request_id.empty()) << JsonText(events[called].data);
  const json::value* arguments = events[called].metadata.if_contains("arguments");
  EXPECT_TRUE(arguments != nullptr && Mentions(*arguments, "ping")) << JsonText(events[called].data);
  EXPECT_EQ(events[completed_tool].content, "echo finished");
  EXPECT_EQ(StringAt(events[completed_tool].metadata, "tool"), "echo") << JsonText(events[completed_tool].data);
  EXPECT_EQ(StringAt(events[completed_tool].metadata, "request_id"), request_id);
  EXPECT_EQ(StringAt(events[completed_tool].metadata, "status"), "success") << JsonText(events[completed_tool].data);
  int step_done = IndexOf(events, "step.completed");
  ASSERT_GE(step_done, 0);
  EXPECT_EQ(events[step_done].content, "Step 1 completed");
  EXPECT_TRUE(events[step_done].metadata.contains("usage")) << JsonText(events[step_done].data);
  EXPECT_EQ(IntAt(events[step_done].metadata, "step"), 1) << JsonText(events[step_done].data);
  if (events.size() == 11) {
    EXPECT_EQ(events[7].content, "Step 2 started");
    EXPECT_EQ(events[8].content, "Step 2 completed");
    EXPECT_EQ(IntAt(events[8].metadata, "step"), 2) << JsonText(events[8].data);
  }
  int answer_at = IndexOf(events, "message.created", "", "assistant");
  ASSERT_GE(answer_at, 0) << DescribeEvents(events);
  const SessionEvent& answer = events[answer_at];
  EXPECT_EQ(answer.content.rfind("The tool said", 0), 0u) << answer.content;
  EXPECT_NE(answer.content.find("ping"), std::string::npos) << answer.content;
  EXPECT_EQ(done->content, "Execution completed");
  EXPECT_EQ(IntAt(done->metadata, "step_count"), 2) << JsonText(done->data);
  EXPECT_GT(IntAt(ObjAt(done->metadata, "token_usage"), "total"), 0) << JsonText(done->data);

  // The tool call went through the tool protocol, under the request id the events name.
  json::object tool_answer = tools().AwaitResponse(request_id);
  EXPECT_EQ(StatusOf(tool_answer), "success") << JsonText(tool_answer);

  // The reply streamed as agent.token frames (no id), after step 2 started and before it completed,
  // adding up to the assistant message's text.
  std::vector<SessionEvent> all = stream.Events(/*tokens=*/true);
  std::string streamed;
  int step2 = -1, step2_done = -1, first_token = -1, last_token = -1, step_starts = 0, step_ends = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    const SessionEvent& e = all[i];
    if (e.event_type == "step.started" && ++step_starts == 2) step2 = static_cast<int>(i);
    if (e.event_type == "step.completed" && ++step_ends == 2) step2_done = static_cast<int>(i);
    if (e.event_type != "agent.token") continue;
    EXPECT_FALSE(e.stored()) << "a token frame has no id";
    EXPECT_EQ(e.message_id, "");
    EXPECT_EQ(e.role, "assistant");
    EXPECT_EQ(e.execution_id, p.execution_id);
    EXPECT_EQ(IntAt(e.metadata, "step"), 2) << JsonText(e.data);
    if (first_token < 0) first_token = static_cast<int>(i);
    last_token = static_cast<int>(i);
    streamed += e.content;
  }
  EXPECT_EQ(streamed, answer.content);
  EXPECT_GT(first_token, step2) << DescribeEvents(all);
  EXPECT_LT(last_token, step2_done) << DescribeEvents(all);

  // ---- REST: the execution ----
  json::object execution = GetExecution(p.execution_id);
  EXPECT_EQ(StringAt(execution, "id"), p.execution_id);
  EXPECT_EQ(StringAt(execution, "session_id"), sid);
  EXPECT_EQ(StringAt(execution, "status"), "completed") << JsonText(execution);
  EXPECT_EQ(IntAt(execution, "step_count"), 2) << JsonText(execution);
  const json::object& usage = ObjAt(execution, "token_usage");
  EXPECT_GT(IntAt(usage, "input"), 0) << JsonText(execution);
  EXPECT_GT(IntAt(usage, "output"), 0) << JsonText(execution);
  EXPECT_EQ(IntAt(usage, "total"), IntAt(usage, "input") + IntAt(usage, "output")) << JsonText(execution);
  EXPECT_EQ(IntAt(usage, "total"), IntAt(ObjAt(done->metadata, "token_usage"), "total"));
  ASSERT_TRUE(execution.contains("output")) << JsonText(execution);
  EXPECT_TRUE(Mentions(execution.at("output"), "The tool said")) << JsonText(execution);
  EXPECT_TRUE(execution.contains("input") && Mentions(execution.at("input"), "Porto")) << JsonText(execution);
  EXPECT_EQ(StringAt(execution, "user_id"), "u1") << JsonText(execution);
  EXPECT_EQ(StringAt(execution, "snapshot_policy"), "final") << JsonText(execution);
  EXPECT_TRUE(IsNull(execution, "error")) << JsonText(execution);
  int64_t created_at = MicrosAt(execution, "created_at"), started_at = MicrosAt(execution, "started_at"),
          completed_at = MicrosAt(execution, "completed_at");
  EXPECT_GT(created_at, 0) << JsonText(execution);
  EXPECT_GE(started_at, created_at) << JsonText(execution);
  EXPECT_GE(completed_at, started_at) << JsonText(execution);
  std::string last_snapshot = StringAt(execution, "last_snapshot_id");
  EXPECT_FALSE(last_snapshot.empty()) << JsonText(execution);

  // ---- REST: the session, updated when the execution ended ----
  json::object after = GetSession(sid);
  EXPECT_EQ(StringAt(after, "last_execution_id"), p.execution_id) << JsonText(after);
  EXPECT_EQ(StringAt(after, "last_snapshot_id"), last_snapshot) << JsonText(after);
  EXPECT_EQ(IntAt(ObjAt(after, "token_usage"), "total"), IntAt(usage, "total")) << JsonText(after);
  EXPECT_EQ(IntAt(ObjAt(after, "token_usage"), "input"), IntAt(usage, "input")) << JsonText(after);

  // ---- REST: the messages are the stream's stored events ----
  std::vector<json::object> messages = Messages(sid);
  std::vector<std::string> streamed_ids;
  for (const auto& e : events) streamed_ids.push_back(e.message_id);
  EXPECT_EQ(IdsOf(messages), streamed_ids);
  ASSERT_GE(messages.size(), 3u);
  EXPECT_EQ(StringAt(messages.front(), "role"), "user");
  EXPECT_EQ(StringAt(messages.front(), "id"), p.message_id);
  EXPECT_EQ(StringAt(messages.back(), "role"), "info");
  EXPECT_EQ(StringAt(ObjAt(messages.back(), "metadata"), "event_type"), "execution.completed");
  for (size_t i = 1; i + 1 < messages.size(); ++i) {
    const std::string role = StringAt(messages[i], "role");
    if (role == "assistant") {
      EXPECT_EQ(i + 2, messages.size()) << "the assistant message comes just before the last info";
    } else {
      EXPECT_EQ(role, "info") << JsonText(messages[i]);
    }
  }
  for (size_t i = 0; i < messages.size(); ++i) {
    EXPECT_EQ(StringAt(messages[i], "session_id"), sid);
    if (i > 0) {
      EXPECT_GE(MicrosAt(messages[i], "created_at"), MicrosAt(messages[i - 1], "created_at"));
    }
    if (StringAt(messages[i], "role") == "info") {
      EXPECT_EQ(StringAt(ObjAt(messages[i], "metadata"), "event_type"), events[i].event_type) << JsonText(messages[i]);
    }
    if (i > 0) {
      EXPECT_EQ(StringAt(messages[i], "agent_execution_id"), p.execution_id) << JsonText(messages[i]);
    }
  }
  auto assistant = WithRole(messages, "assistant");
  ASSERT_EQ(assistant.size(), 1u);
  EXPECT_EQ(StringAt(assistant[0], "content"), answer.content);
  EXPECT_EQ(StringAt(assistant[0], "id"), answer.message_id);

  auto talk = Messages(sid, "roles=user,assistant");
  ASSERT_EQ(talk.size(), 2u);
  EXPECT_EQ(StringAt(talk[0], "role"), "user");
  EXPECT_EQ(StringAt(talk[1], "role"), "assistant");
  auto folded = Messages(sid, "fold_info=true");
  EXPECT_EQ(IdsOf(folded), IdsOf(talk));
  auto later = Messages(sid, "after=" + p.message_id);
  EXPECT_EQ(IdsOf(later), std::vector<std::string>(streamed_ids.begin() + 1, streamed_ids.end()));
  auto first_two = Messages(sid, "limit=2");
  EXPECT_EQ(IdsOf(first_two), std::vector<std::string>(streamed_ids.begin(), streamed_ids.begin() + 2));

  // ---- snapshots: the final one holds the conversation ----
  auto snapshots = ListEvery("/executions/" + p.execution_id + "/snapshots");
  ASSERT_FALSE(snapshots.empty());
  EXPECT_EQ(snapshots.size(), 1u) << "snapshot_policy final keeps only the final snapshot";
  EXPECT_EQ(StringAt(snapshots.front(), "id"), last_snapshot);
  EXPECT_TRUE(IsTrueAt(snapshots.front(), "is_final"))
      << JsonText(snapshots.front());
  Response got = client().Get("/snapshots/" + last_snapshot);
  ASSERT_EQ(got.status, 200) << got.Describe();
  json::object snapshot = ObjectOf(got);
  EXPECT_EQ(StringAt(snapshot, "agent_execution_id"), p.execution_id);
  EXPECT_EQ(StringAt(snapshot, "agent_id"), "helper");
  EXPECT_TRUE(IsTrueAt(snapshot, "is_final")) << JsonText(snapshot);
  json::object state = StateOf(snapshot);
  ASSERT_TRUE(state.contains("messages") && state.at("messages").is_array()) << JsonText(snapshot);
  std::string whole = JsonText(state.at("messages"));
  EXPECT_NE(whole.find("Find me a train to Porto"), std::string::npos) << whole;
  EXPECT_NE(whole.find("ping"), std::string::npos) << whole;
  EXPECT_NE(whole.find("The tool said"), std::string::npos) << whole;
  EXPECT_TRUE(state.contains("step")) << JsonText(state);
  EXPECT_TRUE(state.contains("usage")) << JsonText(state);

  // ---- the model: asked twice, the tool offered, its result given back ----
  auto requests = LlmRequests();
  ASSERT_EQ(requests.size(), 2u) << "the session message must not also trigger the agent's own subscription";
  auto offered = OfferedTools(requests[0]);
  EXPECT_NE(std::find(offered.begin(), offered.end(), "echo"), offered.end());
  EXPECT_NE(std::find(offered.begin(), offered.end(), "user_input"), offered.end()) << "user_input is offered in a session";
  EXPECT_EQ(TurnsOf(requests[0]).back(), "user: Find me a train to Porto");
  auto tool_messages = ToolMessagesOf(requests[1]);
  ASSERT_EQ(tool_messages.size(), 1u);
  EXPECT_NE(StringAt(tool_messages[0], "content").find("ping"), std::string::npos);

  // GET /executions filtered by session.
  auto listed = ListEvery("/executions?kind=agent&session_id=" + sid);
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(StringAt(listed[0], "id"), p.execution_id);
  EXPECT_EQ(ListEvery("/executions?kind=agent&session_id=" + sid + "&status=failed").size(), 0u);
}

// ---- resuming the stream ------------------------------------------------------------------------

TEST_F(e2e_sessions, StreamResumesAfterADisconnectWithoutGapsOrRepeats) {
  Script({Rule(Match({{"last_role", "user"}, {"last_content_contains", "nap"}}), SleepCall(2500)),
          Rule(Match({{"last_role", "tool"}}), Text("rested")),
          Rule(Match({{"last_role", "user"}}), Text("plain answer"))});
  SessionAgent("helper");
  std::string sid = NewSessionId("helper");
  std::string other = NewSessionId("helper");

  SessionStream first(server(), sid);
  ASSERT_TRUE(first.Open()) << first.Describe();
  Posted p = Send(sid, "take a nap");
  Posted elsewhere = Send(other, "hello from another session");
  ASSERT_TRUE(first.AwaitType("tool.called", p.execution_id)) << first.Describe();
  first.Stop();  // the client goes away in the middle of the run
  std::vector<SessionEvent> seen = first.Events();
  ASSERT_FALSE(seen.empty());
  int64_t cut = seen.back().seq;

  // The whole history, from the start.
  SessionStream everything(server(), sid, {}, "since=0");
  ASSERT_TRUE(everything.Open()) << everything.Describe();
  ASSERT_TRUE(everything.AwaitEnd(p.execution_id)) << everything.Describe();
  std::vector<SessionEvent> history = everything.Events();
  ASSERT_TRUE(history.size() > seen.size()) << "the disconnect must happen mid-run: " << DescribeEvents(history);
  // What the first client saw is a prefix of the history.
  for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i].seq, history[i].seq);
  std::vector<int64_t> rest;
  for (const auto& e : history) {
    if (e.seq > cut) rest.push_back(e.seq);
  }
  ASSERT_FALSE(rest.empty());

  auto seqs = [](const std::vector<SessionEvent>& events) {
    std::vector<int64_t> out;
    for (const auto& e : events) out.push_back(e.seq);
    return out;
  };
  SessionStream by_header(server(), sid, {{"Last-Event-ID", std::to_string(cut)}});
  ASSERT_TRUE(by_header.Open()) << by_header.Describe();
  ASSERT_TRUE(by_header.AwaitCount([](const SessionEvent&) { return true; }, rest.size())) << by_header.Describe();
  SessionStream by_query(server(), sid, {}, "since=" + std::to_string(cut));
  ASSERT_TRUE(by_query.Open()) << by_query.Describe();
  ASSERT_TRUE(by_query.AwaitCount([](const SessionEvent&) { return true; }, rest.size())) << by_query.Describe();
  EXPECT_EQ(seqs(by_header.Events()), rest);
  EXPECT_EQ(seqs(by_query.Events()), rest);
  EXPECT_EQ(by_header.Events().back().event_type, "execution.completed");

  // Only this session's events: the other session ran at the same time.
  for (const auto& e : history) EXPECT_EQ(e.session_id, sid) << JsonText(e.data);
  SessionStream other_stream(server(), other, {}, "since=0");
  ASSERT_TRUE(other_stream.Open());
  ASSERT_TRUE(other_stream.AwaitEnd(elsewhere.execution_id)) << other_stream.Describe();
  for (const auto& e : other_stream.Events()) EXPECT_EQ(e.session_id, other) << JsonText(e.data);

  // Resumed at the newest event: nothing old, then the next message's events live, once each.
  SessionStream tail(server(), sid, {{"Last-Event-ID", std::to_string(history.back().seq)}});
  ASSERT_TRUE(tail.Open()) << tail.Describe();
  Posted p2 = Send(sid, "and now a quick one");
  ASSERT_TRUE(tail.AwaitEnd(p2.execution_id)) << tail.Describe();
  ASSERT_TRUE(by_header.AwaitEnd(p2.execution_id)) << by_header.Describe();
  auto live = tail.Events();
  ASSERT_FALSE(live.empty());
  EXPECT_EQ(live.front().message_id, p2.message_id) << DescribeEvents(live);
  for (const auto& e : live) EXPECT_GT(e.seq, history.back().seq);
  std::vector<int64_t> resumed = seqs(by_header.Events());
  std::set<int64_t> unique(resumed.begin(), resumed.end());
  EXPECT_EQ(unique.size(), resumed.size()) << "no event twice";
  EXPECT_TRUE(std::is_sorted(resumed.begin(), resumed.end()));
  EXPECT_EQ(resumed.size(), rest.size() + live.size());
}

// ---- the first message creates the session ------------------------------------------------------

TEST_F(e2e_sessions, FirstMessageWithoutASessionCreatesOne) {
  Script({Rule(Match({{"last_role", "user"}}), Text("Happy to help with Porto."))});
  SessionAgent("helper");
  auto before = StoreSnapshot();
  EXPECT_TRUE(IsErrorNaming(PostJson("/sessions/messages", json::object{{"agent_id", "helper"}}), 422,
                            "validation_failed", "content"));
  EXPECT_TRUE(IsErrorNaming(PostJson("/sessions/messages", json::object{{"content", "x"}, {"agent_id", 5}}), 422,
                            "validation_failed", "agent_id"));
  EXPECT_TRUE(IsErrorNaming(PostJson("/sessions/messages", json::array{"content"}), 422, "validation_failed", "body"));
  EXPECT_EQ(StoreSnapshot(), before) << "a refused first message creates no session";

  const std::string content =
      "Plan a three day trip to Porto with trains, museums and a boat ride on the Douro, please";
  Response r = PostJson("/sessions/messages", json::object{{"content", content},
                                                           {"agent_id", "helper"},
                                                           {"user_id", "u1"},
                                                           {"initial_context_url", "https://example.com/page"}});
  ASSERT_EQ(r.status, 202) << r.Describe();
  json::object accepted = ObjectOf(r);
  std::string sid = StringAt(accepted, "session_id");
  std::string execution_id = StringAt(accepted, "execution_id");
  ASSERT_FALSE(sid.empty()) << r.body;
  ASSERT_FALSE(execution_id.empty()) << r.body;
  EXPECT_FALSE(StringAt(accepted, "message_id").empty()) << r.body;

  json::object session = GetSession(sid);
  EXPECT_EQ(StringAt(session, "agent_id"), "helper");
  EXPECT_EQ(StringAt(session, "user_id"), "u1");
  EXPECT_EQ(StringAt(session, "initial_context_url"), "https://example.com/page");
  EXPECT_EQ(StringAt(session, "title"), content.substr(0, 60)) << "the title is the message's first 60 characters";
  EXPECT_EQ(StringAt(session, "status"), "active");

  SessionStream stream(server(), sid, {}, "since=0");
  ASSERT_TRUE(stream.Open()) << stream.Describe();
  auto end = stream.AwaitEnd(execution_id);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->event_type, "execution.completed") << stream.Describe();
  auto talk = Messages(sid, "roles=user,assistant");
  ASSERT_EQ(talk.size(), 2u);
  EXPECT_EQ(StringAt(talk[0], "content"), content);
  EXPECT_EQ(StringAt(talk[1], "content"), "Happy to help with Porto.");
  auto listed = ListEvery("/sessions?user_id=u1");
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(StringAt(listed[0], "id"), sid);
}

}  // namespace
}  // namespace cairn::e2e
