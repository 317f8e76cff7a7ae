// mcp: cairn and the Model Context Protocol (docs/mcp.md).
//   cairn mcp list   the MCP servers the server is a client of (GET /mcp/servers): state, tools
//   cairn mcp serve  cairn as an MCP server over stdio: one JSON-RPC message per line on stdin,
//                    answers on stdout; its tools (mcp_server/mcp_server_protocol.h) are carried
//                    out against the server's HTTP API. Messages are handled one at a time.
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>
#include <iostream>

#include "base/json_util.h"
#include "base/random_id.h"
#include "cli/answer_stream.h"
#include "cli/commands.h"
#include "cli/json_output.h"
#include "cli/url_util.h"
#include "mcp_server/mcp_server_protocol.h"
#include "model/reserved.h"

namespace cairn::cli {
namespace json = boost::json;
namespace {

constexpr size_t kMaxLineBytes = 16 << 20;

// The MCP tools against the server's HTTP API, waiting for answers on its event stream.
class HttpBackend final : public mcp_server::CairnBackend {
 public:
  explicit HttpBackend(CommandRun& run) : run_(run) {}

  Result<json::value> Api(const std::string& method, const std::string& path, const json::value& body) override {
    std::optional<json::value> sent;
    if (!body.is_null()) sent = body;
    CAIRN_ASSIGN_OR_RETURN(ApiReply reply, run_.api().Call(method, path, sent));
    return reply.body;
  }

  Result<json::object> CallTool(const std::string& tool, const json::value& input, std::chrono::seconds timeout) override {
    const std::string request_id = RandomId("mcp-");
    CAIRN_ASSIGN_OR_RETURN(AnswerOutcome outcome, CallToolAndWait(run_, tool, input, request_id, timeout.count()));
    if (!outcome.answer) return Status::Unavailable("no response from " + tool + " within " + std::to_string(timeout.count()) + " s");
    return *outcome.answer;
  }

  Result<json::object> SendMessage(const std::string& session_id, const std::string& agent_id, const std::string& text,
                                   std::chrono::seconds timeout) override {
    const std::string& session = session_id;
    QueryString query;
    query.Add("schema_name", std::string(model::kAgentResponseSchema));
    query.Add("tag", "session:" + session);
    std::string message_id;
    AnswerWait wait;
    wait.stream_query = query.Build();
    wait.wait_seconds = timeout.count();
    wait.write = [&]() -> Status {
      json::object context{{"content", text}};
      if (!agent_id.empty()) context["agent_id"] = agent_id;
      json::object body{{"title", text.substr(0, 60)},
                        {"schema_name", model::kUserMessageSchema},
                        {"tags", json::array{json::value("session:" + session)}},
                        {"context", std::move(context)}};
      CAIRN_ASSIGN_OR_RETURN(ApiReply reply, run_.api().Call("POST", "/breadcrumbs", json::value(std::move(body))));
      if (reply.body.is_object()) message_id = StringMember(reply.body.as_object(), "id");
      return Status::Ok();
    };
    wait.match = [&](const json::object& context) { return StringMember(context, "request_id") == message_id; };
    CAIRN_ASSIGN_OR_RETURN(AnswerOutcome outcome, AwaitAnswer(run_, wait));
    if (!outcome.answer) return Status::Unavailable("no answer within " + std::to_string(timeout.count()) + " s");
    return json::object{{"session_id", session}, {"message_id", message_id}, {"answer", *outcome.answer}};
  }

 private:
  CommandRun& run_;
};

int RunMcpList(CommandRun& run) {
  auto reply = run.api().Call("GET", "/mcp/servers");
  if (!reply.ok()) return run.Failure(reply.status());
  if (run.args().Has("json")) return run.PrintJson(reply->body);
  std::ostream& out = run.context().out;
  const json::value* servers = reply->body.is_object() ? reply->body.as_object().if_contains("servers") : nullptr;
  if (!servers || !servers->is_array() || servers->as_array().empty()) {
    out << "no MCP servers (add one: a mcp.server.v1 breadcrumb, see docs/mcp.md)\n";
    return kExitOk;
  }
  for (const json::value& value : servers->as_array()) {
    if (!value.is_object()) continue;
    const json::object& s = value.as_object();
    out << StringMember(s, "name") << " (" << StringMember(s, "transport") << "): " << StringMember(s, "state");
    if (!StringMember(s, "protocol_version").empty()) out << ", protocol " << StringMember(s, "protocol_version");
    const json::value* restarts = s.if_contains("restarts");
    if (restarts && restarts->is_int64() && restarts->as_int64() > 0) out << ", " << restarts->as_int64() << " restarts";
    out << "\n";
    if (!StringMember(s, "error").empty()) out << "  error: " << StringMember(s, "error") << "\n";
    if (const json::value* tools = s.if_contains("tools"); tools && tools->is_array()) {
      for (const json::value& tool : tools->as_array()) {
        if (tool.is_string()) out << "  " << tool.as_string().c_str() << "\n";
      }
    }
  }
  return kExitOk;
}

int RunMcpServe(CommandRun& run) {
  HttpBackend backend(run);
  mcp_server::McpServerProtocol protocol(backend);
  std::string line;
  while (std::getline(run.context().in, line)) {
    if (line.size() > kMaxLineBytes) {
      run.context().out << json::serialize(json::object{
                               {"jsonrpc", "2.0"}, {"id", nullptr},
                               {"error", json::object{{"code", -32600}, {"message", "message too large"}}}})
                        << "\n" << std::flush;
      continue;
    }
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto response = protocol.HandleText(line);
    if (response) run.context().out << json::serialize(*response) << "\n" << std::flush;
  }
  return kExitOk;
}

}  // namespace

CommandSpec McpSpec() {
  return {"mcp",
          "MCP: `list` the MCP servers cairn uses and their tools; `serve` cairn as an MCP server on stdio",
          "list|serve [--json]",
          {{"json", "", "list: print the servers as JSON"}},
          "list|serve",
          1,
          1};
}

int RunMcp(CommandRun& run) {
  const std::string& action = run.args().positionals()[0];
  if (action == "list") return RunMcpList(run);
  if (action == "serve") return RunMcpServe(run);
  return run.UsageError("unknown action '" + action + "' (list or serve)");
}

}  // namespace cairn::cli
