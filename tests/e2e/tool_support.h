// Helpers for the tool end-to-end tests (tools_test.cpp, tools_recovery_test.cpp).
//
// ToolClient drives one running server like a client of the tool protocol would: it writes
// tool.request.v1 and tool.v1 breadcrumbs over HTTP and reads the answers from event streams
// (GET /events/stream?schema_name=<schema>&since=0, one SseClient per schema, opened on first
// use). Because every stream starts at seq 0, an answer written before the stream was opened is
// seen too, and events arrive in seq order: once an answer is seen, every event before it is in.
//
//   ToolClient tools(server);
//   std::string id = tools.Request("echo", json::object{{"x", 1}});
//   json::object answer = tools.AwaitResponse(id);      // the tool.response.v1 event
//   OutputOf(answer)                                   // context.output
//
// Waiting is always on a stream (condition variable with a deadline), never for a fixed time.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "e2e_support.h"
#include "sse_client.h"
#include "support/loopback_http_server.h"

namespace cairn::e2e {

// Long enough for a loaded ASan CI machine; a test that passes waits a fraction of it.
constexpr std::chrono::milliseconds kToolWait{20000};

// Accessors on a tool.response.v1 event (or record): context.status, context.output,
// context.error.code, context.error.message.
std::string StatusOf(const json::object& response);
json::value OutputOf(const json::object& response);
std::string ErrorCodeOf(const json::object& response);
std::string ErrorMessageOf(const json::object& response);
const json::object& ContextOf(const json::object& record);  // an empty object if absent
bool HasTag(const json::object& record, const std::string& tag);
// The value of the first tag "<prefix>..." without the prefix ("" if none).
std::string TagValue(const json::object& record, const std::string& prefix);

class ToolClient {
 public:
  explicit ToolClient(const ServerProcess& server);
  ~ToolClient();

  HttpClient& http() { return http_; }

  // POST /breadcrumbs that must answer 201; the record (empty, with a failure, otherwise).
  json::object Create(const json::value& body, const Headers& headers = {});
  // Writes a tool.request.v1 for `tool` with `input` (plus `extra` context fields such as
  // request_id or requested_by); returns the request_id its answer carries.
  std::string Request(const std::string& tool, const json::value& input, const json::object& extra = {},
                      const Headers& headers = {});
  // The id of the request record behind a request_id returned by Request().
  std::string RecordIdOf(const std::string& request_id) const;
  // Creates a tool.v1 definition with `context`; the record.
  json::object DefineTool(const json::object& context);

  // Waits for the first event of `schema` for which `match(event data)` holds.
  json::object AwaitEvent(const std::string& schema, const std::function<bool(const json::object&)>& match,
                          std::chrono::milliseconds timeout = kToolWait);
  // Waits for the tool.response.v1 answering `request_id`.
  json::object AwaitResponse(const std::string& request_id, std::chrono::milliseconds timeout = kToolWait);
  // Waits for the agent.execution.v1 record (written when a run ends) of the run triggered by
  // breadcrumb `trigger_id`; returns its event.
  json::object AwaitExecution(const std::string& trigger_id, std::chrono::milliseconds timeout = kToolWait);
  // The breadcrumb.created events of `schema` seen so far that satisfy `match`.
  std::vector<json::object> Created(const std::string& schema, const std::function<bool(const json::object&)>& match);
  // Every tool.response.v1 seen so far answering `request_id`.
  std::vector<json::object> ResponsesTo(const std::string& request_id);

  // Recent frames of a stream, for failure messages.
  std::string Describe(const std::string& schema);

 private:
  SseClient& Stream(const std::string& schema);

  std::string url_;
  HttpClient http_;
  std::map<std::string, std::unique_ptr<SseClient>> streams_;
  std::map<std::string, std::string> request_records_;  // request_id -> record id
};

// A fixture with a ToolClient on the fixture's server (recreated by Reconnect()).
class ToolTest : public ServerTest {
 protected:
  void SetUp() override;
  void TearDown() override;
  void ReconnectTools();  // after a restart: new port, new client and streams
  ToolClient& tools() { return *tools_; }

  // Writes an executable file (mode 0755) in the server's temporary directory; its path.
  std::string WriteScript(const std::string& name, const std::string& text);

 private:
  std::unique_ptr<ToolClient> tools_;
};

// Waits (inotify on the directory, with a deadline) until `path` exists.
bool WaitForFile(const std::string& path, std::chrono::milliseconds timeout);

// An absolute python3 that is not a shell shim (so rlimits apply to Python itself), or "".
std::string FindPython3();

// tests/support's loopback server on 127.0.0.1:0, answering every request 200 with the JSON
// {"seen_path": <target>, "seen_method": <method>}.
class PathEchoServer : public test_support::LoopbackHttpServer {
 public:
  using Seen = test_support::ReceivedRequest;
  PathEchoServer();
  std::string base_url() const { return Url(); }
};

}  // namespace cairn::e2e
