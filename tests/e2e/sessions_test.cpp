// Sessions end to end (docs/sessions.md, docs/api.md "Sessions"): the real server runs a session's
// agent against the scripted fixture LLM (llm_servers.h); the tests drive it through /sessions,
// /executions and /snapshots and read everything that happens from the session's event stream,
// GET /sessions/{id}/events. Waiting is always on a stream with a deadline.
#include <algorithm>
#include <set>

#include "session_support.h"

namespace cairn::e2e {
namespace {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

json::object Match(std::initializer_list<std::pair<const char*, json::value>> fields) {
  json::object m;
  for (const auto& [k, v] : fields) m[k] = v;
  return m;
}

json::object Text(const std::string& content) { return json::object{{"content", content}}; }
json::object SleepCall(int64_t ms) { return ToolCallsReply({{"sleep", json::object{{"ms", ms}}}}); }
json::object AskUser(const std::string& question) {
  return ToolCallsReply({{"user_input", json::object{{"question", question}}}});
}

bool IsTrueAt(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_bool() && v->as_bool();
}

bool IsNull(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v == nullptr || v->is_null() || (v->is_string() && v->as_string().empty());
}

// A 4xx JSON error with `status` whose error.field contains `field` (when not empty).
::testing::AssertionResult IsErrorNaming(const Response& r, long status, const std::string& code,
                                         const std::string& field) {
  ::testing::AssertionResult shape = IsError(r, status, code);
  if (!shape) return shape;
  if (field.empty()) return ::testing::AssertionSuccess();
  json::value v = r.Json();
  std::string got = StringAt(ObjAt(v.as_object(), "error"), "field");
  if (got.find(field) == std::string::npos) {
    return ::testing::AssertionFailure() << "error.field \"" << got << "\" does not name " << field << ": " << r.Describe();
  }
  return ::testing::AssertionSuccess();
}

int64_t Elapsed(SteadyClock::time_point since) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - since).count();
}

// Index of the first event of `type` (of `execution`, when not empty) in `events`; -1 if none.
int IndexOf(const std::vector<SessionEvent>& events, const std::string& type, const std::string& execution = "",
            const std::string& role = "") {
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].event_type == type && (execution.empty() || events[i].execution_id == execution) &&
        (role.empty() || events[i].role == role)) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

size_t CountOf(const std::vector<SessionEvent>& events, const std::string& type, const std::string& execution = "",
               const std::string& role = "") {
  return std::count_if(events.begin(), events.end(), [&](const SessionEvent& e) {
    return e.event_type == type && (execution.empty() || e.execution_id == execution) && (role.empty() || e.role == role);
  });
}

std::vector<json::object> WithRole(const std::vector<json::object>& messages, const std::string& role) {
  std::vector<json::object> out;
  for (const auto& m : messages) {
    if (StringAt(m, "role") == role) out.push_back(m);
  }
  return out;
}

std::vector<std::string> IdsOf(const std::vector<json::object>& items) {
  std::vector<std::string> out;
  for (const auto& i : items) out.push_back(StringAt(i, "id"));
  return out;
}

// The types of a run with one tool call then an answer, as docs/sessions.md lists them (tokens
// left out).
::testing::AssertionResult IsToolThenAnswerOrder(const std::vector<std::string>& types) {
  const std::vector<std::string> expected = {
      "message.created", "execution.queued", "execution.started", "step.started", "tool.called",    "tool.completed",
      "step.completed",  "step.started",     "step.completed",    "message.created", "execution.completed"};
  if (types == expected) return ::testing::AssertionSuccess();
  std::string got;
  for (const auto& t : types) got += " " + t;
  return ::testing::AssertionFailure() << "event order:" << got;
}

class e2e_sessions : public SessionTest {};

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

TEST_F(e2e_sessions, SessionRecordsCannotBeWrittenAroundTheApi) {
  std::string sid = NewSessionId("default-chat-assistant");
  auto before = StoreSnapshot();
  for (const char* schema : {"agent.session.v1", "agent.session.message.v1", "agent.execution.v1", "agent.snapshot.v1"}) {
    Response r = client().Post("/breadcrumbs", JsonText(json::object{{"schema_name", schema}, {"title", "forged"},
                                                                     {"context", json::object{{"status", "pending"}}}}));
    EXPECT_TRUE(IsError(r, 422, "validation_failed", "schema_name")) << schema << ": " << r.body;
  }
  // Nor changed or deleted through /breadcrumbs.
  auto sessions = ListAll("schema_name=agent.session.v1");
  ASSERT_EQ(sessions.size(), 1u);
  std::string record = StringAt(sessions[0], "id");
  EXPECT_TRUE(IsError(client().Patch("/breadcrumbs/" + record, R"({"context":"x"})"), 422, "validation_failed"));
  EXPECT_TRUE(IsError(client().Delete("/breadcrumbs/" + record), 422, "validation_failed"));
  EXPECT_EQ(StoreSnapshot(), before);
  EXPECT_EQ(client().Get("/sessions/" + sid).status, 200);
}

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

// ---- invalid requests ---------------------------------------------------------------------------

TEST_F(e2e_sessions, InvalidTransitionsAreConflicts) {
  Script({Rule(Match({{"last_role", "user"}, {"last_content_contains", "nap"}}), SleepCall(10000)),
          Rule(Match({{"last_role", "user"}}), Text("ok"))});
  SessionAgent("helper");
  std::string sid = NewSessionId("helper");
  SessionStream stream(server(), sid);
  ASSERT_TRUE(stream.Open()) << stream.Describe();
  Posted done = Send(sid, "hi");
  ASSERT_TRUE(stream.AwaitEnd(done.execution_id));
  ASSERT_EQ(StringAt(GetExecution(done.execution_id), "status"), "completed");
  std::string x = "/executions/" + done.execution_id;
  auto before = StoreSnapshot();
  EXPECT_TRUE(IsError(PostJson(x + "/cancel", json::object{}), 409, "conflict")) << "cancel a completed execution";
  EXPECT_TRUE(IsError(PostJson(x + "/resume", json::object{}), 409, "conflict")) << "resume a completed execution";
  EXPECT_TRUE(IsError(PostJson(x + "/input", json::object{{"content", "late"}}), 409, "conflict"))
      << "answer a completed execution";
  EXPECT_EQ(StoreSnapshot(), before);

  // A running one takes no input and cannot be resumed.
  Posted running = Send(sid, "take a nap");
  ASSERT_TRUE(stream.AwaitType("tool.called", running.execution_id));
  std::string y = "/executions/" + running.execution_id;
  EXPECT_TRUE(IsError(PostJson(y + "/input", json::object{{"content", "now?"}}), 409, "conflict"));
  EXPECT_TRUE(IsError(PostJson(y + "/resume", json::object{}), 409, "conflict"));
  EXPECT_EQ(StringAt(GetExecution(running.execution_id), "status"), "running");
  ASSERT_EQ(PostJson(y + "/cancel", json::object{}).status, 200);
  ASSERT_TRUE(stream.AwaitEnd(running.execution_id, 9000ms));
  EXPECT_TRUE(IsError(PostJson(y + "/cancel", json::object{}), 409, "conflict")) << "cancel twice";
}

TEST_F(e2e_sessions, UnknownIdsAre404OnEveryRoute) {
  Script({Rule(Match({{"last_role", "user"}}), Text("ok"))});
  SessionAgent("helper");
  std::string sid = NewSessionId("helper");
  SessionStream stream(server(), sid);
  ASSERT_TRUE(stream.Open()) << stream.Describe();
  Posted p = Send(sid, "hi");
  ASSERT_TRUE(stream.AwaitEnd(p.execution_id));
  std::string snapshot_id = StringAt(GetExecution(p.execution_id), "last_snapshot_id");
  std::string plain = StringAt(CreateOk(json::object{{"title", "not a session"}}), "id");
  auto before = StoreSnapshot();

  // Ids that exist as something else are unknown here too.
  const std::vector<std::string> not_sessions = {"0193e4c2-0000-7000-8000-000000000000", "nope", p.execution_id,
                                                 p.message_id, plain, snapshot_id};
  const std::vector<std::string> not_executions = {"0193e4c2-0000-7000-8000-000000000000", "nope", sid, p.message_id,
                                                   plain, snapshot_id};
  const std::vector<std::string> not_snapshots = {"0193e4c2-0000-7000-8000-000000000000", "nope", sid, p.execution_id,
                                                  plain};
  HttpClient quick(server().port());
  quick.set_timeout(5000ms);  // a stream answered 200 by mistake must not hang the test
  for (const auto& id : not_sessions) {
    std::string s = "/sessions/" + id;
    EXPECT_TRUE(IsError(client().Get(s), 404, "not_found")) << s;
    EXPECT_TRUE(IsError(client().Patch(s, R"({"title":"x"})"), 404, "not_found")) << s;
    EXPECT_TRUE(IsError(client().Post(s + "/messages", R"({"content":"x"})"), 404, "not_found")) << s;
    EXPECT_TRUE(IsError(client().Get(s + "/messages"), 404, "not_found")) << s;
    EXPECT_TRUE(IsError(quick.Get(s + "/events"), 404, "not_found")) << s;
  }
  for (const auto& id : not_executions) {
    std::string x = "/executions/" + id;
    EXPECT_TRUE(IsError(client().Get(x), 404, "not_found")) << x;
    EXPECT_TRUE(IsError(client().Post(x + "/cancel", "{}"), 404, "not_found")) << x;
    EXPECT_TRUE(IsError(client().Post(x + "/resume", "{}"), 404, "not_found")) << x;
    EXPECT_TRUE(IsError(client().Post(x + "/input", R"({"content":"x"})"), 404, "not_found")) << x;
    EXPECT_TRUE(IsError(client().Get(x + "/snapshots"), 404, "not_found")) << x;
  }
  for (const auto& id : not_snapshots) {
    EXPECT_TRUE(IsError(client().Get("/snapshots/" + id), 404, "not_found")) << id;
  }
  EXPECT_EQ(StoreSnapshot(), before);
}

TEST_F(e2e_sessions, BadBodiesAre422BadParametersAre400AndNothingIsWritten) {
  SessionAgent("helper");
  std::string sid = NewSessionId("helper");
  auto before = StoreSnapshot();

  struct Case {
    const char* body;
    const char* field;
  };
  const Case create[] = {
      {R"([])", "body"},
      {R"("a session")", "body"},
      {R"({"policy": "sometimes"})", "policy"},
      {R"({"snapshot_policy": "all"})", "snapshot_policy"},
      {R"({"title": 5})", "title"},
      {R"({"metadata": "x"})", "metadata"},
      {R"({"user_id": 7})", "user_id"},
      {R"({"agent_id": ["a"]})", "agent_id"},
      {R"({"related_id": {}})", "related_id"},
      {R"({"initial_context_url": false})", "initial_context_url"},
  };
  for (const auto& c : create) {
    EXPECT_TRUE(IsErrorNaming(client().Post("/sessions", c.body), 422, "validation_failed", c.field)) << c.body;
  }
  EXPECT_TRUE(IsClientError(client().Post("/sessions", "{not json")));
  const Case patch[] = {
      {R"([])", "body"},
      {R"({"status": "deleted"})", "status"},
      {R"({"title": 7})", "title"},
      {R"({"metadata": []})", "metadata"},
  };
  for (const auto& c : patch) {
    EXPECT_TRUE(IsErrorNaming(client().Patch("/sessions/" + sid, c.body), 422, "validation_failed", c.field)) << c.body;
  }
  const Case message[] = {
      {R"([])", "body"},
      {R"({})", "content"},
      {R"({"content": 5})", "content"},
      {R"({"content": null})", "content"},
      {R"({"content": "x", "metadata": "y"})", "metadata"},
  };
  for (const auto& c : message) {
    EXPECT_TRUE(IsErrorNaming(client().Post("/sessions/" + sid + "/messages", c.body), 422, "validation_failed", c.field))
        << c.body;
  }
  const Case queries[] = {
      {"/sessions?limit=0", "limit"},
      {"/sessions?limit=1001", "limit"},
      {"/sessions?limit=abc", "limit"},
      {"/sessions?status=bogus", "status"},
      {"/sessions?user_id=", "user_id"},
      {"/sessions?bogus=1", "bogus"},
      {"/sessions?limit=5&limit=6", "limit"},
      {"/executions?status=bogus", "status"},
      {"/executions?limit=0", "limit"},
      {"/sessions/SID/messages?roles=robot", "roles"},
      {"/sessions/SID/messages?fold_info=maybe", "fold_info"},
      {"/sessions/SID/messages?limit=0", "limit"},
      {"/sessions?cursor=garbage", "cursor"},
      {"/executions?cursor=garbage", "cursor"},
      {"/sessions/SID?x=1", "x"},
      {"/sessions/SID/events?since=1&since=2", "since"},
  };
  for (const auto& c : queries) {
    std::string target = c.body;
    if (auto at = target.find("SID"); at != std::string::npos) target.replace(at, 3, sid);
    EXPECT_TRUE(IsErrorNaming(client().Get(target), 400, "bad_request", c.field)) << target;
  }
  HttpClient quick(server().port());
  quick.set_timeout(5000ms);
  EXPECT_EQ(quick.Get("/sessions/" + sid + "/events?since=abc").status, 400);
  EXPECT_EQ(quick.Get("/sessions/" + sid + "/events?since=999999999").status, 400) << "since ahead of the newest event";
  EXPECT_EQ(StoreSnapshot(), before);
  EXPECT_TRUE(LlmRequests().empty());
}

TEST_F(e2e_sessions, PatchUpdatesASessionAndAClosedOneTakesNoMessages) {
  SessionAgent("helper");
  std::string sid = NewSessionId("helper", json::object{{"metadata", json::object{{"a", 1}}}});
  json::object created = GetSession(sid);
  Response r = client().Patch("/sessions/" + sid, R"({"title": "Renamed", "metadata": {"b": 2}, "status": "archived"})");
  ASSERT_EQ(r.status, 200) << r.Describe();
  json::object patched = ObjectOf(r);
  EXPECT_EQ(StringAt(patched, "title"), "Renamed");
  EXPECT_EQ(StringAt(patched, "status"), "archived");
  EXPECT_EQ(JsonText(patched.at("metadata")), R"({"b":2})");
  EXPECT_GE(MicrosAt(patched, "updated_at"), MicrosAt(created, "updated_at"));
  EXPECT_EQ(JsonText(GetSession(sid)), JsonText(patched));
  EXPECT_EQ(IdsOf(ListEvery("/sessions?status=archived")), std::vector<std::string>{sid});

  ASSERT_EQ(client().Patch("/sessions/" + sid, R"({"status": "closed"})").status, 200);
  auto before = StoreSnapshot();
  Response refused = PostJson("/sessions/" + sid + "/messages", json::object{{"content", "hello?"}});
  EXPECT_TRUE(IsError(refused, 409, "conflict")) << "a closed session takes no messages";
  EXPECT_EQ(StoreSnapshot(), before);
}

// ---- snapshots ----------------------------------------------------------------------------------

TEST_F(e2e_sessions, StepSnapshotsReadBackAsFullStates) {
  // Nine tool rounds with distinct arguments, then the answer: ten model calls, ten steps.
  json::array rules;
  for (int i = 0; i < 9; ++i) {
    rules.push_back(Rule(Match({{"tool_results", i}}), ToolCallsReply({{"echo", json::object{{"text", "round " + std::to_string(i)}}}})));
  }
  rules.push_back(Rule(Match({}), Text("all rounds done")));
  Script(std::move(rules));
  SessionAgent("rounds", json::object{{"max_iterations", 20}});
  std::string sid = NewSessionId("rounds", json::object{{"snapshot_policy", "steps"}});
  SessionStream stream(server(), sid);
  ASSERT_TRUE(stream.Open()) << stream.Describe();
  Posted p = Send(sid, "go round");
  auto end = stream.AwaitEnd(p.execution_id);
  ASSERT_TRUE(end);
  ASSERT_EQ(end->event_type, "execution.completed") << stream.Describe();
  EXPECT_EQ(IntAt(GetExecution(p.execution_id), "step_count"), 10);

  int pages = 0;
  auto snapshots = ListEvery("/executions/" + p.execution_id + "/snapshots", 3, &pages);
  ASSERT_GE(snapshots.size(), 10u) << "one per step";
  EXPECT_GE(pages, 4);
  std::set<std::string> ids;
  size_t finals = 0;
  for (const auto& s : snapshots) {
    ids.insert(StringAt(s, "id"));
    finals += IsTrueAt(s, "is_final") ? 1 : 0;
    EXPECT_FALSE(IsTrueAt(s, "debug_mode")) << JsonText(s);
  }
  EXPECT_EQ(ids.size(), snapshots.size()) << "no duplicates across pages";
  EXPECT_EQ(finals, 1u);
  EXPECT_TRUE(IsTrueAt(snapshots.front(), "is_final")) << "newest first";
  EXPECT_EQ(StringAt(snapshots.front(), "id"), StringAt(GetExecution(p.execution_id), "last_snapshot_id"));

  // Oldest first: every full state extends the previous one.
  std::reverse(snapshots.begin(), snapshots.end());
  json::array previous;
  int64_t previous_step = -1;
  for (size_t i = 0; i < snapshots.size(); ++i) {
    std::string id = StringAt(snapshots[i], "id");
    Response r = client().Get("/snapshots/" + id);
    ASSERT_EQ(r.status, 200) << r.Describe();
    json::object snapshot = ObjectOf(r);
    json::object state = StateOf(snapshot);
    ASSERT_TRUE(state.contains("messages") && state.at("messages").is_array()) << JsonText(snapshot);
    const json::array& messages = state.at("messages").as_array();
    ASSERT_GE(messages.size(), previous.size()) << "snapshot " << i;
    for (size_t m = 0; m < previous.size(); ++m) {
      EXPECT_EQ(JsonText(messages[m]), JsonText(previous[m])) << "snapshot " << i << " message " << m;
    }
    int64_t step = IntAt(snapshot, "step_number");
    EXPECT_GE(step, previous_step) << JsonText(snapshot);
    if (i > 0) {
      EXPECT_EQ(StringAt(snapshot, "parent_snapshot_id"), StringAt(snapshots[i - 1], "id")) << JsonText(snapshot);
    }
    previous = messages;
    previous_step = step;
  }
  std::string whole = JsonText(previous);
  for (int i = 0; i < 9; ++i) EXPECT_NE(whole.find("round " + std::to_string(i)), std::string::npos) << i;
  EXPECT_NE(whole.find("all rounds done"), std::string::npos);

  // debug: every snapshot says so.
  Script({Rule(Match({{"last_role", "user"}}), ToolCallsReply({{"echo", json::object{{"text", "dbg"}}}})),
          Rule(Match({{"last_role", "tool"}}), Text("debugged"))});
  std::string debug_sid = NewSessionId("rounds", json::object{{"snapshot_policy", "debug"}});
  SessionStream debug_stream(server(), debug_sid);
  ASSERT_TRUE(debug_stream.Open());
  Posted d = Send(debug_sid, "debug me");
  ASSERT_TRUE(debug_stream.AwaitEnd(d.execution_id));
  auto debug_snapshots = ListEvery("/executions/" + d.execution_id + "/snapshots");
  EXPECT_GE(debug_snapshots.size(), 2u);
  for (const auto& s : debug_snapshots) EXPECT_TRUE(IsTrueAt(s, "debug_mode")) << JsonText(s);
}

// ---- many sessions ------------------------------------------------------------------------------

TEST_F(e2e_sessions, AThousandSessionsListedWithFiltersAndCursorsNewestFirst) {
  constexpr int kCount = 1000;
  std::vector<std::string> ids;
  ids.reserve(kCount);
  for (int i = 0; i < kCount; ++i) {
    json::object body{{"title", "session " + std::to_string(i)}, {"user_id", i % 2 == 0 ? "u1" : "u2"},
                      {"agent_id", i % 10 == 0 ? "special" : "helper"}};
    if (i % 100 == 0) {
      body["related_type"] = "ticket";
      body["related_id"] = "T" + std::to_string(i);
    }
    Response r = client().Post("/sessions", json::serialize(body));
    ASSERT_EQ(r.status, 201) << i << ": " << r.Describe();
    ids.push_back(StringAt(ObjectOf(r), "id"));
  }
  std::set<std::string> unique(ids.begin(), ids.end());
  ASSERT_EQ(unique.size(), ids.size());
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(client().Patch("/sessions/" + ids[i * 7], R"({"status":"archived"})").status, 200);
  }

  auto newest_first = [&](const std::function<bool(int)>& keep) {
    std::vector<std::string> out;
    for (int i = kCount - 1; i >= 0; --i) {
      if (keep(i)) out.push_back(ids[i]);
    }
    return out;
  };
  int pages = 0;
  auto all = ListEvery("/sessions", 100, &pages);
  EXPECT_EQ(pages, 10);
  EXPECT_EQ(IdsOf(all), newest_first([](int) { return true; }));
  for (size_t i = 1; i < all.size(); ++i) {
    EXPECT_LE(MicrosAt(all[i], "created_at"), MicrosAt(all[i - 1], "created_at")) << i;
  }
  EXPECT_EQ(IdsOf(ListEvery("/sessions?user_id=u1", 37)), newest_first([](int i) { return i % 2 == 0; }));
  EXPECT_EQ(IdsOf(ListEvery("/sessions?user_id=u2", 1000)), newest_first([](int i) { return i % 2 == 1; }));
  EXPECT_EQ(IdsOf(ListEvery("/sessions?agent_id=special", 7)), newest_first([](int i) { return i % 10 == 0; }));
  EXPECT_EQ(IdsOf(ListEvery("/sessions?user_id=u1&agent_id=special", 9)), newest_first([](int i) { return i % 10 == 0; }));
  EXPECT_EQ(IdsOf(ListEvery("/sessions?related_type=ticket", 3)), newest_first([](int i) { return i % 100 == 0; }));
  EXPECT_EQ(IdsOf(ListEvery("/sessions?related_type=ticket&related_id=T300")), std::vector<std::string>{ids[300]});
  EXPECT_EQ(IdsOf(ListEvery("/sessions?status=archived", 4)),
            newest_first([](int i) { return i % 7 == 0 && i / 7 < 10; }));
  EXPECT_EQ(ListEvery("/sessions?status=active", 500).size(), static_cast<size_t>(kCount - 10));
  EXPECT_TRUE(ListEvery("/sessions?user_id=nobody").empty());
  // The default page is 50.
  Response first_page = client().Get("/sessions");
  ASSERT_EQ(first_page.status, 200);
  json::object first_body = ObjectOf(first_page);
  const json::value* first_items = first_body.if_contains("items");
  ASSERT_TRUE(first_items != nullptr && first_items->is_array()) << first_page.body.substr(0, 300);
  EXPECT_EQ(first_items->as_array().size(), 50u);
}

// ---- the default agent --------------------------------------------------------------------------

class e2e_sessions_default_agent : public SessionTest {
 protected:
  std::vector<std::string> ServerArgs() const override {
    auto args = SessionTest::ServerArgs();
    args.push_back("--default-agent=true");
    return args;
  }
};

TEST_F(e2e_sessions_default_agent, ASessionWithoutAnAgentTalksToTheDefaultAgent) {
  Script({Rule(Match({{"last_role", "user"}}), ToolCallsReply({{"echo", json::object{{"text", "hi"}}}})),
          Rule(Match({{"last_role", "tool"}}), Text("The default agent used echo"))});
  json::object session = NewSession(json::object{});
  std::string sid = StringAt(session, "id");
  ASSERT_FALSE(sid.empty());
  EXPECT_EQ(StringAt(session, "agent_id"), "default-chat-assistant");
  EXPECT_EQ(StringAt(session, "title"), "New session");
  SessionStream stream(server(), sid);
  ASSERT_TRUE(stream.Open()) << stream.Describe();
  Posted p = Send(sid, "say hi through a tool");
  auto end = stream.AwaitEnd(p.execution_id);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->event_type, "execution.completed") << stream.Describe();
  auto requests = LlmRequests();
  ASSERT_EQ(requests.size(), 2u) << "run once, by the session (not again by the user.message.v1 subscription)";
  auto offered = OfferedTools(requests[0]);
  for (const char* tool : {"echo", "sleep", "user_input"}) {
    EXPECT_NE(std::find(offered.begin(), offered.end(), tool), offered.end()) << tool << " offered";
  }
  EXPECT_TRUE(ListIds("schema_name=agent.response.v1").empty()) << "the answer is a session message";
  auto assistant = WithRole(Messages(sid), "assistant");
  ASSERT_EQ(assistant.size(), 1u);
  EXPECT_EQ(StringAt(assistant[0], "content"), "The default agent used echo");
}

}  // namespace
}  // namespace cairn::e2e
