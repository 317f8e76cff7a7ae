// cairn as an MCP client, end to end: real MCP servers from npm (tests/e2e/mcp-node, pinned by
// its package-lock.json) registered as mcp.server.v1 records; their tools appear as tool.v1
// records and answer tool.request.v1 through the normal tool pipeline. server-everything over
// stdio and Streamable HTTP, server-filesystem over stdio, and a scripted SDK server
// (scripted-server.mjs) for what those lack: cancellation, crashes, errors, list changes, images.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/subprocess.h"
#include "tool_support.h"

#ifndef CAIRN_E2E_MCP_NODE_DIR
#error "CAIRN_E2E_MCP_NODE_DIR must name tests/e2e/mcp-node"
#endif

namespace cairn::e2e {
namespace {

using namespace std::chrono_literals;
using test_support::FindOnPath;
using test_support::Subprocess;

const std::string kNodeDir = CAIRN_E2E_MCP_NODE_DIR;

std::string Module(const std::string& package_path) { return kNodeDir + "/node_modules/" + package_path; }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class e2e_mcp : public ToolTest {
 protected:
  void SetUp() override {
    node_ = FindOnPath("node");
    ASSERT_FALSE(node_.empty()) << "`node` is not on PATH: run scripts/install-deps test";
    ASSERT_TRUE(std::filesystem::exists(Module("@modelcontextprotocol/server-everything/package.json")))
        << "the MCP test servers are not installed: run scripts/install-deps test (npm ci in " << kNodeDir << ")";
    ToolTest::SetUp();
  }
  std::vector<std::string> ServerArgs() const override { return {"--allow-private-network", "127.0.0.0/8"}; }

  json::array NodeCommand(const std::vector<std::string>& args) {
    json::array command{json::string(node_)};
    for (const auto& arg : args) command.emplace_back(arg);
    return command;
  }

  json::object Register(const json::object& context) {
    return tools().Create(json::object{{"schema_name", "mcp.server.v1"}, {"title", "MCP server"}, {"context", context}});
  }

  // Waits until the tool.v1 named `name` has been created (or updated) by the MCP client.
  json::object AwaitTool(const std::string& name, std::chrono::milliseconds timeout = kToolWait) {
    return tools().AwaitEvent("tool.v1", [&](const json::object& e) {
      return StringAt(e, "path") == "tools/" + name && StringAt(e, "type") != "breadcrumb.deleted";
    }, timeout);
  }

  json::object Call(const std::string& tool, const json::value& input) {
    return tools().AwaitResponse(tools().Request(tool, input));
  }

  // Calls `tool`, which must succeed; the text of its output.
  std::string SuccessText(const std::string& tool, const json::value& input) {
    json::object answer = Call(tool, input);
    EXPECT_EQ(StatusOf(answer), "success") << JsonText(answer);
    return TextOf(answer);
  }

  std::string TextOf(const json::object& response) {
    json::value output = OutputOf(response);
    return output.is_object() ? StringAt(output.as_object(), "text") : "";
  }

  json::object Servers() { return ObjectOf(client().Get("/mcp/servers")); }

  json::object ServerState(const std::string& name) {
    json::object servers = Servers();
    if (const json::value* list = servers.if_contains("servers"); list && list->is_array()) {
      for (const json::value& s : list->as_array()) {
        if (s.is_object() && StringAt(s.as_object(), "name") == name) return s.as_object();
      }
    }
    return {};
  }

  // Polls /mcp/servers (a condition with a deadline: the state has no event of its own).
  bool WaitForState(const std::string& name, const std::function<bool(const json::object&)>& done,
                    std::chrono::milliseconds timeout = kToolWait) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (done(ServerState(name))) return true;
      std::this_thread::sleep_for(50ms);
    }
    return false;
  }

  json::object RegisterScripted(const std::string& log) {
    std::vector<std::string> args{kNodeDir + "/scripted-server.mjs"};
    if (!log.empty()) args.push_back(log);
    return Register({{"name", "scripted"}, {"transport", "stdio"}, {"command", NodeCommand(args)}, {"timeout_ms", 20000}});
  }

  std::string node_;
};

TEST_F(e2e_mcp, StdioServerToolsBecomeToolsAndAnswerThroughThePipeline) {
  Register({{"name", "everything"}, {"transport", "stdio"},
            {"command", NodeCommand({Module("@modelcontextprotocol/server-everything/dist/index.js"), "stdio"})}});
  json::object echo = AwaitTool("everything__echo");
  ASSERT_FALSE(echo.empty()) << tools().Describe("tool.v1");
  AwaitTool("everything__get-sum");

  json::object tool = ObjectOf(client().Get("/breadcrumbs/" + StringAt(echo, "breadcrumb_id") + "/full"));
  const json::object& def = ContextOf(tool);
  EXPECT_EQ(StringAt(def, "runtime"), "mcp");
  EXPECT_EQ(StringAt(def, "mcp_server"), "everything");
  EXPECT_EQ(StringAt(def, "mcp_tool"), "echo");
  EXPECT_TRUE(HasTag(tool, "mcp:everything"));

  EXPECT_EQ(SuccessText("everything__echo", json::object{{"message", "hello mcp"}}), "Echo: hello mcp");
  EXPECT_NE(SuccessText("everything__get-sum", json::object{{"a", 2}, {"b", 40}}).find("42"), std::string::npos);

  // The input schema came from the server: a wrong type is refused before the server is called.
  json::object answer = Call("everything__get-sum", json::object{{"a", "two"}, {"b", 40}});
  EXPECT_EQ(StatusOf(answer), "error");
  EXPECT_EQ(ErrorCodeOf(answer), "invalid_input") << JsonText(answer);

  json::object state = ServerState("everything");
  EXPECT_EQ(StringAt(state, "state"), "ready") << JsonText(state);
  EXPECT_EQ(StringAt(state, "protocol_version"), "2025-11-25");

  // `cairn mcp list` shows the server, its state and its tools.
  auto listed = test_support::RunProcess({CairnBinary(), "mcp", "list", "--server", server().url()});
  EXPECT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.out.find("everything (stdio): ready, protocol 2025-11-25"), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("  everything__get-sum\n"), std::string::npos) << listed.out;
}

TEST_F(e2e_mcp, StreamableHttpServer) {
  Subprocess http({node_, kNodeDir + "/everything-http.mjs"});
  ASSERT_TRUE(http.Start()) << http.error();
  ASSERT_TRUE(http.WaitForLines(1, 30s)) << http.err();
  auto port = IntAt(json::parse(http.OutLines().front()).as_object(), "port");
  Register({{"name", "remote"}, {"transport", "http"}, {"url", "http://127.0.0.1:" + std::to_string(port) + "/mcp"},
            {"headers", json::object{{"X-Test", "yes"}}}});
  ASSERT_FALSE(AwaitTool("remote__echo").empty()) << JsonText(Servers());
  EXPECT_EQ(SuccessText("remote__echo", json::object{{"message", "over http"}}), "Echo: over http");
  // A long-running operation streams progress in the answer's event stream before the result.
  // (Each tool's record is written on its own: wait for this one's too.)
  ASSERT_FALSE(AwaitTool("remote__trigger-long-running-operation").empty());
  EXPECT_NE(SuccessText("remote__trigger-long-running-operation", json::object{{"duration", 0.3}, {"steps", 3}})
                .find("completed"),
            std::string::npos);
}

TEST_F(e2e_mcp, FilesystemServer) {
  const std::string root = server().data_dir() + "/files";
  std::filesystem::create_directories(root);
  std::ofstream(root + "/note.txt") << "written by the test";
  Register({{"name", "files"}, {"transport", "stdio"},
            {"command", NodeCommand({Module("@modelcontextprotocol/server-filesystem/dist/index.js"), root})}});
  ASSERT_FALSE(AwaitTool("files__read_text_file").empty()) << JsonText(Servers());
  json::object answer = Call("files__read_text_file", json::object{{"path", root + "/note.txt"}});
  EXPECT_EQ(StatusOf(answer), "success") << JsonText(answer);
  EXPECT_NE(TextOf(answer).find("written by the test"), std::string::npos) << JsonText(answer);
  // Outside its root the server refuses: an error answer, not a hang.
  answer = Call("files__read_text_file", json::object{{"path", "/etc/hostname"}});
  EXPECT_EQ(StatusOf(answer), "error") << JsonText(answer);
}

TEST_F(e2e_mcp, ErrorsImagesAndStructuredContent) {
  RegisterScripted("");
  ASSERT_FALSE(AwaitTool("scripted__image").empty()) << JsonText(Servers());
  json::object answer = Call("scripted__fail", json::object{});
  EXPECT_EQ(StatusOf(answer), "error");
  EXPECT_NE(ErrorMessageOf(answer).find("it went wrong"), std::string::npos) << JsonText(answer);

  answer = Call("scripted__image", json::object{});
  ASSERT_EQ(StatusOf(answer), "success") << JsonText(answer);
  json::object output = OutputOf(answer).as_object();
  EXPECT_EQ(StringAt(output, "text"), "a dot");
  EXPECT_EQ(output.at("structured"), (json::value{{"width", 1}, {"height", 1}}));
  const json::array& content = output.at("content").as_array();
  ASSERT_EQ(content.size(), 2u);
  EXPECT_EQ(StringAt(content[1].as_object(), "type"), "image");
  EXPECT_EQ(StringAt(content[1].as_object(), "mimeType"), "image/png");
}

TEST_F(e2e_mcp, ProgressIsStreamedAndCancelReachesTheServer) {
  const std::string log = server().data_dir() + "/cancelled.log";
  RegisterScripted(log);
  ASSERT_FALSE(AwaitTool("scripted__wait").empty()) << JsonText(Servers());
  // Progress notifications reach event streams as ephemeral tool.progress events.
  SseClient progress(server().url() + "/events/stream?types=tool.progress&tag=request:wait-1");
  progress.Start();
  ASSERT_TRUE(progress.WaitForOpen(kToolWait)) << progress.Describe();
  std::string request_id = tools().Request("scripted__wait", json::object{}, {{"request_id", "wait-1"}});
  auto progress_frames = [](const std::vector<SseFrame>& frames) {
    return std::count_if(frames.begin(), frames.end(), [](const SseFrame& f) { return f.Type() == "tool.progress"; });
  };
  ASSERT_TRUE(progress.WaitFor([&](const std::vector<SseFrame>& frames) { return progress_frames(frames) >= 2; }, kToolWait))
      << progress.Describe();
  for (const SseFrame& frame : progress.Frames()) {
    if (frame.Type() != "tool.progress") continue;
    const json::object data = frame.Json().as_object();
    EXPECT_EQ(StringAt(data, "request_id"), "wait-1");
    EXPECT_EQ(StringAt(data, "tool"), "scripted__wait");
    EXPECT_EQ(StringAt(data, "message").rfind("step ", 0), 0u) << frame.Describe();
  }
  // A run in flight has no event of its own: poll the running view (with a deadline) until it shows.
  std::string execution_id;
  const auto shown_by = std::chrono::steady_clock::now() + kToolWait;
  while (execution_id.empty() && std::chrono::steady_clock::now() < shown_by) {
    for (const auto& run : ListPages("/executions?kind=tool&status=running")) {
      if (StringAt(run, "executor") == "scripted__wait") execution_id = StringAt(run, "id");
    }
    if (execution_id.empty()) std::this_thread::sleep_for(20ms);
  }
  ASSERT_FALSE(execution_id.empty()) << "the call never showed as running";
  Response cancelled = client().Post("/executions/" + execution_id + "/cancel", "{}");
  EXPECT_LT(cancelled.status, 300) << cancelled.body;
  json::object answer = tools().AwaitResponse(request_id);
  EXPECT_EQ(StatusOf(answer), "error") << JsonText(answer);
  const auto deadline = std::chrono::steady_clock::now() + kToolWait;
  while (ReadFile(log).find("cancelled") == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_NE(ReadFile(log).find("cancelled"), std::string::npos) << "the server never saw notifications/cancelled";
}

TEST_F(e2e_mcp, ADeadServerIsRestartedAndListChangesAreFollowed) {
  RegisterScripted("");
  ASSERT_FALSE(AwaitTool("scripted__crash").empty()) << JsonText(Servers());
  EXPECT_EQ(StatusOf(Call("scripted__crash", json::object{})), "success");
  ASSERT_TRUE(WaitForState("scripted", [](const json::object& s) { return IntAt(s, "restarts") >= 1; }))
      << JsonText(Servers());
  ASSERT_TRUE(WaitForState("scripted", [](const json::object& s) { return StringAt(s, "state") == "ready"; }))
      << JsonText(Servers());
  json::object answer = Call("scripted__image", json::object{});
  EXPECT_EQ(StatusOf(answer), "success") << JsonText(answer);

  EXPECT_EQ(StatusOf(Call("scripted__grow", json::object{})), "success");
  ASSERT_FALSE(AwaitTool("scripted__extra").empty());
  EXPECT_EQ(TextOf(Call("scripted__extra", json::object{})), "extra");
}

TEST_F(e2e_mcp, ListChangesOfAnHttpServerArriveOnItsGetStream) {
  // grow's tools/list_changed is sent outside any request: only the standalone GET stream,
  // which cairn opens after the handshake, carries it.
  Subprocess http({node_, kNodeDir + "/scripted-server.mjs", "--http"});
  ASSERT_TRUE(http.Start()) << http.error();
  ASSERT_TRUE(http.WaitForLines(1, 30s)) << http.err();
  auto port = IntAt(json::parse(http.OutLines().front()).as_object(), "port");
  Register({{"name", "scripted-http"}, {"transport", "http"}, {"url", "http://127.0.0.1:" + std::to_string(port) + "/mcp"}});
  ASSERT_FALSE(AwaitTool("scripted-http__grow").empty()) << JsonText(Servers());
  ASSERT_TRUE(http.WaitForLines(2, kToolWait)) << "cairn opened no GET stream: " << http.out();
  EXPECT_NE(http.OutLines()[1].find("get_stream"), std::string::npos) << http.out();
  EXPECT_EQ(StatusOf(Call("scripted-http__grow", json::object{})), "success");
  ASSERT_FALSE(AwaitTool("scripted-http__extra").empty()) << JsonText(Servers());
  EXPECT_EQ(TextOf(Call("scripted-http__extra", json::object{})), "extra");
}

TEST_F(e2e_mcp, RemovingTheServerRemovesItsTools) {
  json::object record = RegisterScripted("");
  ASSERT_FALSE(AwaitTool("scripted__fail").empty());
  ASSERT_EQ(client().Delete("/breadcrumbs/" + StringAt(record, "id")).status, 204);
  json::object gone = tools().AwaitEvent("tool.v1", [](const json::object& e) {
    return StringAt(e, "type") == "breadcrumb.deleted" && StringAt(e, "path") == "tools/scripted__fail";
  });
  EXPECT_FALSE(gone.empty()) << tools().Describe("tool.v1");
  EXPECT_TRUE(ServerState("scripted").empty());
}

TEST_F(e2e_mcp, BadServerRecordsAreRefused) {
  auto refused = [&](const json::object& context, const std::string& field) {
    Response r = client().Post("/breadcrumbs", JsonText(json::object{
        {"schema_name", "mcp.server.v1"}, {"title", "bad"}, {"context", context}}));
    EXPECT_TRUE(IsError(r, 422, "validation_failed", field)) << r.body;
  };
  refused({{"name", "x"}}, "context.transport");
  refused({{"name", "a_b"}, {"transport", "stdio"}, {"command", json::array{"node"}}}, "context.name");
  refused({{"name", "x"}, {"transport", "stdio"}}, "context.command");
  refused({{"name", "x"}, {"transport", "http"}, {"url", "ftp://x"}}, "context.url");
  refused({{"name", "x"}, {"transport", "http"}, {"url", "http://x/mcp"}, {"command", json::array{"a"}}}, "context.command");
  refused({{"name", "x"}, {"transport", "http"}, {"url", "http://x/mcp"},
           {"headers", json::object{{"Authorization", json::object{{"secret", "no spaces"}}}}}},
          "context.headers.Authorization.secret");
  refused({{"name", "x"}, {"transport", "http"}, {"url", "http://x/mcp"},
           {"headers", json::object{{"Authorization", json::object{{"name", "token"}}}}}}, "context.headers.Authorization.name");
  refused({{"name", "x"}, {"transport", "http"}, {"url", "http://x/mcp"}, {"headers", json::object{{"Content-Type", "text/plain"}}}},
          "context.headers.Content-Type");  // cairn sets it itself
  refused({{"name", "x"}, {"transport", "stdio"}, {"command", json::array{"a"}}, {"timeout_ms", 0}}, "context.timeout_ms");
  EXPECT_TRUE(ListAll("schema_name=mcp.server.v1").empty());
}

TEST_F(e2e_mcp, AServerThatCannotStartFailsWithAReasonAndHangsNothing) {
  Register({{"name", "broken"}, {"transport", "stdio"}, {"command", NodeCommand({"-e", "process.exit(7)"})},
            {"connect_timeout_ms", 5000}});
  ASSERT_TRUE(WaitForState("broken", [](const json::object& s) { return StringAt(s, "state") == "failed"; }))
      << JsonText(Servers());
  EXPECT_FALSE(StringAt(ServerState("broken"), "error").empty());
  // A silent server (never answers initialize) fails at the connect timeout.
  Register({{"name", "silent"}, {"transport", "stdio"}, {"command", NodeCommand({"-e", "setInterval(() => {}, 1000)"})},
            {"connect_timeout_ms", 300}});
  ASSERT_TRUE(WaitForState("silent", [](const json::object& s) {
    return StringAt(s, "state") == "failed" && StringAt(s, "error").find("timed out") != std::string::npos;
  })) << JsonText(Servers());
}

// cairn as an MCP server: the official SDK client over `cairn mcp serve` (stdio) and POST /mcp.
class e2e_mcp_serve : public e2e_mcp {
 protected:
  void SetUp() override {
    builtin_tools_ = true;  // call_tool calls the echo built-in
    e2e_mcp::SetUp();
  }

  json::object RunSdkClient(const std::vector<std::string>& args) {
    std::vector<std::string> argv{node_, kNodeDir + "/sdk-client.mjs"};
    argv.insert(argv.end(), args.begin(), args.end());
    Subprocess client(argv);
    EXPECT_TRUE(client.Start()) << client.error();
    auto result = client.Finish(60s);
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    auto lines = client.OutLines();
    if (lines.empty()) return {};
    auto parsed = json::parse(lines.back());
    return parsed.is_object() ? parsed.as_object() : json::object{};
  }

  void ExpectASession(const json::object& seen) {
    ASSERT_FALSE(seen.contains("error")) << JsonText(seen);
    EXPECT_EQ(StringAt(seen, "protocol"), "cairn");
    json::array expected_tools{"call_tool", "create_breadcrumb", "get_breadcrumb", "list_tools",
                               "query_breadcrumbs", "search_breadcrumbs", "send_message"};
    EXPECT_EQ(seen.at("tools"), json::value(expected_tools));
    const std::string id = StringAt(seen, "created_id");
    ASSERT_FALSE(id.empty()) << JsonText(seen);
    EXPECT_EQ(seen.at("got_context"), (json::value{{"text", "hello"}}));
    EXPECT_EQ(IntAt(seen, "listed_count"), 1);
    EXPECT_EQ(seen.at("echoed"), (json::value{{"said", "hi"}})) << JsonText(seen);
    EXPECT_EQ(seen.at("missing_is_error"), json::value(true));
    EXPECT_NE(StringAt(seen, "missing_text").find("id"), std::string::npos);
    EXPECT_NE(StringAt(seen, "unknown").find("no_such_tool"), std::string::npos) << JsonText(seen);
    // The breadcrumb really is in cairn.
    json::object record = FullOk(id);
    EXPECT_EQ(StringAt(record, "schema_name"), "note.v1");
  }
};

TEST_F(e2e_mcp_serve, SdkClientOverStdio) { ExpectASession(RunSdkClient({"stdio", CairnBinary(), server().url()})); }

TEST_F(e2e_mcp_serve, SdkClientOverStreamableHttp) { ExpectASession(RunSdkClient({"http", server().url() + "/mcp"})); }

TEST_F(e2e_mcp_serve, McpEndpointRefusesBadRequests) {
  const Headers json_type{{"Content-Type", "application/json"}};
  Response r = client().Post("/mcp", "{}", {{"Content-Type", "text/plain"}});
  EXPECT_EQ(r.status, 415) << r.body;
  r = client().Post("/mcp", "{not json", json_type);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(IntAt(ObjectOf(r).at("error").as_object(), "code"), -32700) << r.body;
  r = client().Post("/mcp", R"({"jsonrpc":"2.0","method":"notifications/initialized"})", json_type);
  EXPECT_EQ(r.status, 202) << r.body;
  r = client().Post("/mcp", R"({"jsonrpc":"2.0","id":1,"method":"resources/list"})", json_type);
  EXPECT_EQ(IntAt(ObjectOf(r).at("error").as_object(), "code"), -32601) << r.body;
  r = client().Post("/mcp", R"({"jsonrpc":"2.0","id":1,"method":"ping"})",
                    {{"Content-Type", "application/json"}, {"Origin", "http://evil.example"}});
  EXPECT_EQ(r.status, 400) << r.body;
  r = client().Post("/mcp", R"({"jsonrpc":"2.0","id":1,"method":"ping"})",
                    {{"Content-Type", "application/json"}, {"MCP-Protocol-Version", "1999-01-01"}});
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(client().Get("/mcp").status, 405);
  // A tool call with a bad argument is a tool error the model can read, and writes nothing.
  auto before = StoreSnapshot();
  r = client().Post("/mcp", R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"query_breadcrumbs","arguments":{"limit":1000}}})",
                    json_type);
  json::object result = ObjectOf(r).at("result").as_object();
  EXPECT_EQ(result.at("isError"), json::value(true)) << r.body;
  EXPECT_EQ(StoreSnapshot(), before);
}

}  // namespace
}  // namespace cairn::e2e
