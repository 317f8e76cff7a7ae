#include "tool_support.h"

#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

namespace cairn::e2e {
namespace {

const json::object kEmpty;

const json::object& ObjectAt(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_object() ? v->as_object() : kEmpty;
}

}  // namespace

const json::object& ContextOf(const json::object& record) { return ObjectAt(record, "context"); }

std::string StatusOf(const json::object& response) { return StringAt(ContextOf(response), "status"); }

json::value OutputOf(const json::object& response) {
  const json::value* v = ContextOf(response).if_contains("output");
  return v != nullptr ? *v : json::value();
}

std::string ErrorCodeOf(const json::object& response) {
  return StringAt(ObjectAt(ContextOf(response), "error"), "code");
}

std::string ErrorMessageOf(const json::object& response) {
  return StringAt(ObjectAt(ContextOf(response), "error"), "message");
}

bool HasTag(const json::object& record, const std::string& tag) {
  const json::value* tags = record.if_contains("tags");
  if (tags == nullptr || !tags->is_array()) return false;
  for (const auto& t : tags->as_array()) {
    if (t.is_string() && t.as_string() == tag) return true;
  }
  return false;
}

std::string TagValue(const json::object& record, const std::string& prefix) {
  const json::value* tags = record.if_contains("tags");
  if (tags == nullptr || !tags->is_array()) return "";
  for (const auto& t : tags->as_array()) {
    if (t.is_string() && t.as_string().starts_with(prefix)) return std::string(t.as_string().subview(prefix.size()));
  }
  return "";
}

ToolClient::ToolClient(const ServerProcess& server) : url_(server.url()), http_(server.port()) {}

ToolClient::~ToolClient() {
  for (auto& [schema, stream] : streams_) stream->Stop();
}

json::object ToolClient::Create(const json::value& body, const Headers& headers) {
  Response r = http_.Post("/breadcrumbs", json::serialize(body), headers);
  EXPECT_EQ(r.status, 201) << "POST /breadcrumbs " << json::serialize(body) << " -> " << r.Describe();
  if (r.status != 201) return {};
  json::value v = r.Json();
  return v.is_object() ? v.as_object() : json::object{};
}

std::string ToolClient::Request(const std::string& tool, const json::value& input, const json::object& extra,
                                const Headers& headers) {
  json::object context = extra;
  context["tool"] = tool;
  context["input"] = input;
  json::object record = Create(json::object{{"title", "call " + tool}, {"schema_name", "tool.request.v1"},
                                            {"context", context}},
                               headers);
  std::string id = StringAt(record, "id");
  std::string request_id = extra.contains("request_id") ? StringAt(extra, "request_id") : id;
  request_records_[request_id] = id;
  return request_id;
}

std::string ToolClient::RecordIdOf(const std::string& request_id) const {
  auto it = request_records_.find(request_id);
  return it == request_records_.end() ? "" : it->second;
}

json::object ToolClient::DefineTool(const json::object& context) {
  return Create(json::object{{"title", "tool " + StringAt(context, "name")}, {"schema_name", "tool.v1"},
                             {"context", context}});
}

SseClient& ToolClient::Stream(const std::string& schema) {
  auto it = streams_.find(schema);
  if (it != streams_.end()) return *it->second;
  auto stream = std::make_unique<SseClient>(url_ + "/events/stream?schema_name=" + UrlEncode(schema) + "&since=0");
  stream->Start();
  EXPECT_TRUE(stream->WaitForOpen(kToolWait)) << schema << ": " << stream->Describe();
  EXPECT_EQ(stream->status(), 200) << stream->Describe();
  return *streams_.emplace(schema, std::move(stream)).first->second;
}

namespace {

// The created-event data objects of `frames` that satisfy `match`, once per breadcrumb.
std::vector<json::object> CreatedMatching(const std::vector<SseFrame>& frames,
                                          const std::function<bool(const json::object&)>& match) {
  std::vector<json::object> out;
  std::set<std::string> ids;
  for (const SseFrame& f : frames) {
    if (!f.IsEvent()) continue;
    json::value v = f.Json();
    if (!v.is_object()) continue;
    const json::object& o = v.as_object();
    if (StringAt(o, "type") != "breadcrumb.created" || !match(o)) continue;
    if (ids.insert(StringAt(o, "breadcrumb_id")).second) out.push_back(o);
  }
  return out;
}

}  // namespace

json::object ToolClient::AwaitEvent(const std::string& schema, const std::function<bool(const json::object&)>& match,
                                    std::chrono::milliseconds timeout) {
  SseClient& stream = Stream(schema);
  auto any = [&](const std::vector<SseFrame>& frames) {
    for (const SseFrame& f : frames) {
      json::value v = f.Json();
      if (f.IsEvent() && v.is_object() && match(v.as_object())) return true;
    }
    return false;
  };
  if (!stream.WaitFor(any, timeout)) {
    ADD_FAILURE() << "no matching " << schema << " event within " << timeout.count() << " ms; " << stream.Describe();
    return {};
  }
  for (const SseFrame& f : stream.Frames()) {
    json::value v = f.Json();
    if (f.IsEvent() && v.is_object() && match(v.as_object())) return v.as_object();
  }
  return {};
}

json::object ToolClient::AwaitResponse(const std::string& request_id, std::chrono::milliseconds timeout) {
  return AwaitEvent(
      "tool.response.v1",
      [&](const json::object& e) { return StringAt(ContextOf(e), "request_id") == request_id; }, timeout);
}

json::object ToolClient::AwaitExecution(const std::string& trigger_id, std::chrono::milliseconds timeout) {
  return AwaitEvent(
      "agent.execution.v1",
      [&](const json::object& e) {
        const json::value* trigger = ContextOf(e).if_contains("trigger");
        return trigger && trigger->is_object() && StringAt(trigger->as_object(), "breadcrumb_id") == trigger_id;
      },
      timeout);
}

std::vector<json::object> ToolClient::Created(const std::string& schema,
                                              const std::function<bool(const json::object&)>& match) {
  return CreatedMatching(Stream(schema).Frames(), match);
}

std::vector<json::object> ToolClient::ResponsesTo(const std::string& request_id) {
  return Created("tool.response.v1",
                 [&](const json::object& e) { return StringAt(ContextOf(e), "request_id") == request_id; });
}

std::string ToolClient::Describe(const std::string& schema) { return Stream(schema).Describe(); }

void ToolTest::SetUp() {
  builtin_tools_ = true;
  ServerTest::SetUp();
  if (HasFatalFailure()) return;
  tools_ = std::make_unique<ToolClient>(server());
}

void ToolTest::TearDown() {
  tools_.reset();
  ServerTest::TearDown();
}

void ToolTest::ReconnectTools() {
  tools_.reset();
  Reconnect();
  tools_ = std::make_unique<ToolClient>(server());
}

std::string ToolTest::WriteScript(const std::string& name, const std::string& text) {
  std::string path = server().root_dir() + "/" + name;
  {
    std::ofstream out(path, std::ios::trunc);
    out << text;
  }
  EXPECT_EQ(chmod(path.c_str(), 0755), 0) << path;
  return path;
}

bool WaitForFile(const std::string& path, std::chrono::milliseconds timeout) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  int fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (fd < 0) return false;
  inotify_add_watch(fd, dir.c_str(), IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  bool found = false;
  while (true) {
    struct stat st {};
    if (stat(path.c_str(), &st) == 0) {  // checked after the watch exists: no creation is missed
      found = true;
      break;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) > 0) {
      char buf[4096];
      while (read(fd, buf, sizeof buf) > 0) {
      }
    }
  }
  close(fd);
  return found;
}

std::string FindPython3() {
  for (const char* candidate : {"/usr/bin/python3", "/usr/local/bin/python3"}) {
    if (access(candidate, X_OK) == 0) return candidate;
  }
  return "";
}

PathEchoServer::PathEchoServer()
    : LoopbackHttpServer(test_support::Answering([](const test_support::ReceivedRequest& req) -> std::optional<std::string> {
        std::string body = json::serialize(json::object{{"seen_path", req.target}, {"seen_method", req.method}});
        return test_support::HttpResponse(200, "OK", {"Content-Type: application/json"}, body);
      })) {}

}  // namespace cairn::e2e
