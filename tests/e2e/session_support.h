// Helpers for the sessions end-to-end tests (sessions_*_test.cpp; docs/sessions.md, docs/api.md).
//
// SessionTest is an AgentTest (the real server with the built-in tools, pointed at the scripted
// fixture LLM) that talks to the sessions API: /sessions, /sessions/{id}/messages, /executions,
// /snapshots. SessionStream follows one session's event stream, GET /sessions/{id}/events, whose
// frames are
//
//   id: 42
//   data: {"session_id","message_id","execution_id","event_type","role","content","metadata","timestamp"}
//
// (agent.token frames have no id). Waiting is always on the stream (a condition variable with a
// deadline), never for a fixed time.
//
//   SessionStream stream(server(), sid);
//   ASSERT_TRUE(stream.Open()) << stream.Describe();
//   Posted p = Send(sid, "hello");
//   auto done = stream.AwaitType("execution.completed", p.execution_id);
#pragma once

#include <chrono>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent_support.h"

namespace cairn::e2e {

// Long enough for a loaded ASan machine; a passing test waits a fraction of it.
constexpr std::chrono::milliseconds kSessionWait{30000};

// One frame of a session stream.
struct SessionEvent {
  int64_t seq = -1;  // the frame's id; -1 for frames without one (agent.token)
  std::string session_id, message_id, execution_id, event_type, role, content;
  json::object metadata;
  int64_t timestamp = 0;  // microseconds since the epoch
  json::object data;      // the whole data object

  bool stored() const { return seq >= 0; }
  std::string Describe() const;
};

// The session events among `frames` (data objects with an event_type), in arrival order. Pings,
// comments and stream.dropped frames are left out; agent.token frames only with `tokens`.
std::vector<SessionEvent> SessionEventsOf(const std::vector<SseFrame>& frames, bool tokens = false);
// "type(role) type(role) ...": a compact picture of a list of events for failure messages.
std::string DescribeEvents(const std::vector<SessionEvent>& events);
// The event types of `events`, in order.
std::vector<std::string> TypesOf(const std::vector<SessionEvent>& events);
// Only the events whose execution_id is `execution_id`.
std::vector<SessionEvent> OfExecution(const std::vector<SessionEvent>& events, const std::string& execution_id);

// GET /sessions/{id}/events (with `query`, e.g. "since=12", and headers such as Last-Event-ID).
class SessionStream {
 public:
  SessionStream(const ServerProcess& server, const std::string& session_id, Headers headers = {},
                const std::string& query = "");
  ~SessionStream();

  // Starts the client and waits for the 200 and the ": stream open" comment.
  bool Open(std::chrono::milliseconds timeout = kSessionWait);
  void Stop() { client_.Stop(); }

  std::vector<SessionEvent> Events(bool tokens = false) const { return SessionEventsOf(client_.Frames(), tokens); }
  // Waits for a stored event satisfying `match`; returns the first one (a test failure naming
  // `what` on timeout).
  std::optional<SessionEvent> Await(const std::function<bool(const SessionEvent&)>& match,
                                    std::chrono::milliseconds timeout = kSessionWait, const std::string& what = "");
  // Waits for the first stored event of `event_type` (of `execution_id` when not empty).
  std::optional<SessionEvent> AwaitType(const std::string& event_type, const std::string& execution_id = "",
                                        std::chrono::milliseconds timeout = kSessionWait);
  // Waits until `count` stored events satisfy `match`.
  bool AwaitCount(const std::function<bool(const SessionEvent&)>& match, size_t count,
                  std::chrono::milliseconds timeout = kSessionWait);
  // Waits for the end of `execution_id`: execution.completed, .failed or .cancelled.
  std::optional<SessionEvent> AwaitEnd(const std::string& execution_id, std::chrono::milliseconds timeout = kSessionWait);

  SseClient& client() { return client_; }
  std::string Describe() const;

 private:
  std::string session_id_;
  SseClient client_;
};

// The 202 answer to a message.
struct Posted {
  std::string session_id, message_id, execution_id;
};

// Microseconds since the epoch from an integer or an RFC 3339 string ("2026-11-21T02:32:35.341323Z");
// -1 if it is neither.
int64_t MicrosOf(const json::value& v);
int64_t MicrosAt(const json::object& obj, std::string_view key);
// The value of `key` as an object (an empty one if absent or not an object).
const json::object& ObjAt(const json::object& obj, std::string_view key);
// A state_json that may be an object or a string holding one.
json::object StateOf(const json::object& snapshot);

class SessionTest : public AgentTest {
 protected:
  // Defines agent `agent_id` (agent.def.v1) with tools echo, sleep and user_input unless `more`
  // says otherwise.
  json::object SessionAgent(const std::string& agent_id, json::object more = {});

  // POST /sessions with `body`; must be 201. The session.
  json::object NewSession(const json::object& body);
  // NewSession with agent_id `agent` (plus `more`); its id.
  std::string NewSessionId(const std::string& agent, json::object more = {});
  // POST /sessions/{sid}/messages {content, ...more}; must be 202 with the three ids.
  Posted Send(const std::string& session_id, const std::string& content, json::object more = {});
  // POST `target` with a JSON body.
  Response PostJson(const std::string& target, const json::value& body) {
    return client().Post(target, json::serialize(body));
  }

  json::object GetSession(const std::string& id);
  json::object GetExecution(const std::string& id);
  // GET /sessions/{id}/messages?<query> (one page, limit 1000 unless the query sets one): items.
  std::vector<json::object> Messages(const std::string& session_id, const std::string& query = "");
  // Every item of a listing route (`path` with an optional "?query"), following next_cursor with
  // `limit` per page; fails on a non-200 page, an oversized page or a repeated cursor.
  std::vector<json::object> ListEvery(const std::string& path, int limit = 100, int* pages = nullptr);

  // The chat requests the fixture received so far whose messages include `text`.
  std::vector<json::object> LlmRequestsWith(const std::string& text);
};

// "role: content" of the non-system messages of a chat request.
std::vector<std::string> TurnsOf(const json::object& request);
// The names of the tools offered in a chat request.
std::vector<std::string> OfferedTools(const json::object& request);
// Whether `v` (serialized, if not a string) contains `text`.
bool Mentions(const json::value& v, const std::string& text);

// ---- shared by the sessions_*_test.cpp files ------------------------------------------------------
// In their own namespace: other suites that include this header define helpers of the same names.
namespace session_tests {

// Fixture replies (besides agent_support.h's Match and Text): a `sleep` tool call of `ms`, a
// user_input question.
json::object SleepCall(int64_t ms);
json::object AskUser(const std::string& question);

bool IsTrueAt(const json::object& o, std::string_view key);
// Absent, null or "".
bool IsNull(const json::object& o, std::string_view key);

// A 4xx JSON error with `status` whose error.field contains `field` (when not empty).
::testing::AssertionResult IsErrorNaming(const Response& r, long status, const std::string& code,
                                         const std::string& field);

// Milliseconds since `since`.
int64_t Elapsed(std::chrono::steady_clock::time_point since);

// Index of the first event of `type` (of `execution`, when not empty) in `events`; -1 if none.
int IndexOf(const std::vector<SessionEvent>& events, const std::string& type, const std::string& execution = "",
            const std::string& role = "");
size_t CountOf(const std::vector<SessionEvent>& events, const std::string& type, const std::string& execution = "",
               const std::string& role = "");

std::vector<json::object> WithRole(const std::vector<json::object>& messages, const std::string& role);
std::vector<std::string> IdsOf(const std::vector<json::object>& items);

// The types of a run with one tool call then an answer, as docs/sessions.md lists them (tokens
// left out).
::testing::AssertionResult IsToolThenAnswerOrder(const std::vector<std::string>& types);

// The suite of most sessions tests (one class: its tests are spread over several files).
class e2e_sessions : public SessionTest {};

}  // namespace session_tests

}  // namespace cairn::e2e
