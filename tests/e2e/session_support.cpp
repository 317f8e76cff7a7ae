#include "session_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <set>

namespace cairn::e2e {
namespace {

const json::object kNoObject;

std::string Str(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : "";
}

}  // namespace

std::string SessionEvent::Describe() const {
  std::string out = (seq >= 0 ? "#" + std::to_string(seq) + " " : "") + event_type + "(" + role + ")";
  if (!content.empty()) out += " \"" + (content.size() > 60 ? content.substr(0, 60) + "..." : content) + "\"";
  return out;
}

std::vector<SessionEvent> SessionEventsOf(const std::vector<SseFrame>& frames, bool tokens) {
  std::vector<SessionEvent> out;
  for (const SseFrame& f : frames) {
    json::value v = f.Json();
    if (!v.is_object()) continue;
    const json::object& o = v.as_object();
    if (!o.contains("event_type")) continue;  // pings, stream.dropped
    SessionEvent e;
    e.seq = f.Seq();
    e.session_id = Str(o, "session_id");
    e.message_id = Str(o, "message_id");
    e.execution_id = Str(o, "execution_id");
    e.event_type = Str(o, "event_type");
    e.role = Str(o, "role");
    e.content = Str(o, "content");
    e.metadata = ObjAt(o, "metadata");
    e.timestamp = MicrosAt(o, "timestamp");
    e.data = o;
    if (!e.stored() && !tokens) continue;
    out.push_back(std::move(e));
  }
  return out;
}

std::string DescribeEvents(const std::vector<SessionEvent>& events) {
  std::string out;
  for (const auto& e : events) out += "\n    " + e.Describe();
  return out;
}

std::vector<std::string> TypesOf(const std::vector<SessionEvent>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) out.push_back(e.event_type);
  return out;
}

std::vector<SessionEvent> OfExecution(const std::vector<SessionEvent>& events, const std::string& execution_id) {
  std::vector<SessionEvent> out;
  for (const auto& e : events) {
    if (e.execution_id == execution_id) out.push_back(e);
  }
  return out;
}

// ---- SessionStream ----

SessionStream::SessionStream(const ServerProcess& server, const std::string& session_id, Headers headers,
                             const std::string& query)
    : session_id_(session_id),
      client_(server.url() + "/sessions/" + session_id + "/events" + (query.empty() ? "" : "?" + query),
              std::move(headers)) {}

SessionStream::~SessionStream() { client_.Stop(); }

bool SessionStream::Open(std::chrono::milliseconds timeout) {
  client_.Start();
  return client_.WaitForOpen(timeout) && client_.status() == 200;
}

std::optional<SessionEvent> SessionStream::Await(const std::function<bool(const SessionEvent&)>& match,
                                                 std::chrono::milliseconds timeout, const std::string& what) {
  auto find = [&](const std::vector<SseFrame>& frames) -> std::optional<SessionEvent> {
    for (auto& e : SessionEventsOf(frames)) {
      if (match(e)) return e;
    }
    return std::nullopt;
  };
  if (!client_.WaitFor([&](const std::vector<SseFrame>& frames) { return find(frames).has_value(); }, timeout)) {
    ADD_FAILURE() << "session " << session_id_ << ": no " << (what.empty() ? "matching event" : what) << " within "
                  << timeout.count() << " ms; " << Describe();
    return std::nullopt;
  }
  return find(client_.Frames());
}

std::optional<SessionEvent> SessionStream::AwaitType(const std::string& event_type, const std::string& execution_id,
                                                     std::chrono::milliseconds timeout) {
  return Await(
      [&](const SessionEvent& e) {
        return e.event_type == event_type && (execution_id.empty() || e.execution_id == execution_id);
      },
      timeout, event_type + (execution_id.empty() ? "" : " of execution " + execution_id));
}

bool SessionStream::AwaitCount(const std::function<bool(const SessionEvent&)>& match, size_t count,
                               std::chrono::milliseconds timeout) {
  return client_.WaitFor(
      [&](const std::vector<SseFrame>& frames) {
        size_t n = 0;
        for (auto& e : SessionEventsOf(frames)) n += match(e) ? 1 : 0;
        return n >= count;
      },
      timeout);
}

std::optional<SessionEvent> SessionStream::AwaitEnd(const std::string& execution_id, std::chrono::milliseconds timeout) {
  return Await(
      [&](const SessionEvent& e) {
        return e.execution_id == execution_id &&
               (e.event_type == "execution.completed" || e.event_type == "execution.failed" ||
                e.event_type == "execution.cancelled");
      },
      timeout, "end of execution " + execution_id);
}

std::string SessionStream::Describe() const {
  return client_.Describe() + "\n  session events:" + DescribeEvents(Events());
}

// ---- values ----

int64_t MicrosOf(const json::value& v) {
  if (v.is_int64()) return v.as_int64();
  if (v.is_uint64()) return static_cast<int64_t>(v.as_uint64());
  if (v.is_double()) return static_cast<int64_t>(v.as_double());
  if (!v.is_string()) return -1;
  std::string s(v.as_string());
  std::tm tm{};
  int consumed = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
                  &tm.tm_sec, &consumed) != 6) {
    return -1;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  int64_t micros = static_cast<int64_t>(timegm(&tm)) * 1000000;
  size_t i = static_cast<size_t>(consumed);
  if (i < s.size() && s[i] == '.') {
    int64_t scale = 100000;
    for (++i; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
      micros += (s[i] - '0') * scale;
      scale /= 10;
    }
  }
  return micros;
}

int64_t MicrosAt(const json::object& obj, std::string_view key) {
  const json::value* v = obj.if_contains(key);
  return v != nullptr ? MicrosOf(*v) : -1;
}

const json::object& ObjAt(const json::object& obj, std::string_view key) {
  const json::value* v = obj.if_contains(key);
  return v != nullptr && v->is_object() ? v->as_object() : kNoObject;
}

json::object StateOf(const json::object& snapshot) {
  const json::value* v = snapshot.if_contains("state_json");
  if (v == nullptr) return {};
  if (v->is_object()) return v->as_object();
  if (v->is_string()) {
    boost::system::error_code ec;
    json::value parsed = json::parse(v->as_string(), ec);
    if (!ec && parsed.is_object()) return parsed.as_object();
  }
  return {};
}

bool Mentions(const json::value& v, const std::string& text) {
  if (v.is_string()) return std::string_view(v.as_string()).find(text) != std::string_view::npos;
  return json::serialize(v).find(text) != std::string::npos;
}

std::vector<std::string> TurnsOf(const json::object& request) {
  std::vector<std::string> out;
  for (const auto& m : MessagesOf(request)) {
    if (!m.is_object()) continue;
    std::string role = Str(m.as_object(), "role");
    if (role == "system") continue;
    out.push_back(role + ": " + Str(m.as_object(), "content"));
  }
  return out;
}

std::vector<std::string> OfferedTools(const json::object& request) {
  std::vector<std::string> out;
  const json::value* tools = request.if_contains("tools");
  if (tools == nullptr || !tools->is_array()) return out;
  for (const auto& t : tools->as_array()) {
    if (t.is_object()) out.push_back(Str(ObjAt(t.as_object(), "function"), "name"));
  }
  return out;
}

// ---- SessionTest ----

json::object SessionTest::SessionAgent(const std::string& agent_id, json::object more) {
  more["agent_id"] = agent_id;
  if (!more.contains("tools")) more["tools"] = json::array{"echo", "sleep", "user_input"};
  if (!more.contains("system_prompt")) more["system_prompt"] = "You are a session test agent.";
  return DefineAgent(more);
}

json::object SessionTest::NewSession(const json::object& body) {
  Response r = PostJson("/sessions", body);
  EXPECT_EQ(r.status, 201) << "POST /sessions " << JsonText(body) << " -> " << r.Describe();
  if (r.status != 201) return {};
  return ObjectOf(r);
}

std::string SessionTest::NewSessionId(const std::string& agent, json::object more) {
  more["agent_id"] = agent;
  std::string id = StringAt(NewSession(more), "id");
  EXPECT_FALSE(id.empty());
  return id;
}

Posted SessionTest::Send(const std::string& session_id, const std::string& content, json::object more) {
  more["content"] = content;
  std::string target = "/sessions/" + session_id + "/messages";
  Response r = PostJson(target, more);
  EXPECT_EQ(r.status, 202) << "POST " << target << " " << JsonText(more) << " -> " << r.Describe();
  if (r.status != 202) return {};
  json::object o = ObjectOf(r);
  Posted p{StringAt(o, "session_id"), StringAt(o, "message_id"), StringAt(o, "execution_id")};
  EXPECT_EQ(p.session_id, session_id) << r.body;
  EXPECT_FALSE(p.message_id.empty()) << r.body;
  return p;
}

json::object SessionTest::GetSession(const std::string& id) {
  Response r = client().Get("/sessions/" + id);
  EXPECT_EQ(r.status, 200) << "GET /sessions/" << id << " -> " << r.Describe();
  return r.status == 200 ? ObjectOf(r) : json::object{};
}

json::object SessionTest::GetExecution(const std::string& id) {
  Response r = client().Get("/executions/" + id);
  EXPECT_EQ(r.status, 200) << "GET /executions/" << id << " -> " << r.Describe();
  return r.status == 200 ? ObjectOf(r) : json::object{};
}

std::vector<json::object> SessionTest::Messages(const std::string& session_id, const std::string& query) {
  std::string target = "/sessions/" + session_id + "/messages";
  std::string q = query;
  if (q.find("limit=") == std::string::npos) q = "limit=1000" + (q.empty() ? "" : "&" + q);
  target += "?" + q;
  Response r = client().Get(target);
  EXPECT_EQ(r.status, 200) << "GET " << target << " -> " << r.Describe();
  std::vector<json::object> out;
  if (r.status != 200) return out;
  json::object page = ObjectOf(r);
  const json::value* items = page.if_contains("items");
  EXPECT_TRUE(items != nullptr && items->is_array()) << "GET " << target << ": " << r.body;
  if (items == nullptr || !items->is_array()) return out;
  for (const auto& m : items->as_array()) {
    if (m.is_object()) out.push_back(m.as_object());
  }
  return out;
}

std::vector<json::object> SessionTest::ListEvery(const std::string& path, int limit, int* pages) {
  return ListPages(path, limit, pages);
}

std::vector<json::object> SessionTest::LlmRequestsWith(const std::string& text) {
  std::vector<json::object> out;
  for (auto& request : LlmRequests()) {
    for (const auto& m : MessagesOf(request)) {
      if (m.is_object() && Mentions(m.as_object().contains("content") ? m.as_object().at("content") : json::value(),
                                    text)) {
        out.push_back(request);
        break;
      }
    }
  }
  return out;
}

namespace session_tests {

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

int64_t Elapsed(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - since).count();
}

// Index of the first event of `type` (of `execution`, when not empty) in `events`; -1 if none.
int IndexOf(const std::vector<SessionEvent>& events, const std::string& type, const std::string& execution,
            const std::string& role) {
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].event_type == type && (execution.empty() || events[i].execution_id == execution) &&
        (role.empty() || events[i].role == role)) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

size_t CountOf(const std::vector<SessionEvent>& events, const std::string& type, const std::string& execution,
               const std::string& role) {
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

}  // namespace session_tests

}  // namespace cairn::e2e
