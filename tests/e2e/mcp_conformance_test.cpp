// The official MCP conformance scenarios for clients (@modelcontextprotocol/conformance, pinned in
// tests/e2e/mcp-node) against cairn's MCP client: the conformance runner starts each scenario's
// test server and runs mcp-node/conformance-client.mjs with its URL, which registers the URL as an
// mcp.server.v1 record on the cairn server under test and calls the scenario's tool through
// cairn's tool pipeline. The runner checks what cairn sent and exits non-zero when a check fails
// or warns; so does the test.
#include <filesystem>

#include "support/subprocess.h"
#include "tool_support.h"

#ifndef CAIRN_E2E_LOCAL_NODE
#error "CAIRN_E2E_LOCAL_NODE must name build/node/bin/node (the Node.js scripts/install-deps may install)"
#endif

namespace cairn::e2e {
namespace {

using namespace std::chrono_literals;

const std::string kNodeDir = CAIRN_E2E_MCP_NODE_DIR;
const std::string kRunner = kNodeDir + "/node_modules/@modelcontextprotocol/conformance/dist/index.js";

int NodeMajor(const std::string& node) {
  test_support::ProcessOptions options;
  options.timeout = 30s;
  auto version = test_support::RunProcess({node, "-p", "process.versions.node.split('.')[0]"}, options);
  return version.exit_code == 0 ? std::atoi(version.out.c_str()) : 0;
}

// A Node.js of version 22 or later (the runner uses fs.globSync): build/node's, else PATH's.
std::string Node22() {
  for (const std::string& node : {std::string(CAIRN_E2E_LOCAL_NODE), test_support::FindOnPath("node")}) {
    if (!node.empty() && std::filesystem::exists(node) && NodeMajor(node) >= 22) return node;
  }
  return "";
}

class e2e_mcp_conformance : public ToolTest {
 protected:
  void SetUp() override {
    node_ = Node22();
    ASSERT_FALSE(node_.empty()) << "no Node.js 22 or later: run scripts/install-deps test (it installs one into build/node)";
    ASSERT_TRUE(std::filesystem::exists(kRunner))
        << "@modelcontextprotocol/conformance is not installed: run scripts/install-deps test (npm ci in " << kNodeDir << ")";
    ToolTest::SetUp();
  }
  // The scenario servers listen on "localhost", which may resolve to either loopback address.
  std::vector<std::string> ServerArgs() const override { return {"--allow-private-network", "127.0.0.0/8,::1/128"}; }

  // Runs the client scenario `scenario`; the runner's output when it did not pass.
  void ExpectPasses(const std::string& scenario) {
    // The runner splits --command at spaces and appends the scenario server's URL.
    const std::string command = node_ + " " + kNodeDir + "/conformance-client.mjs";
    test_support::ProcessOptions options;
    options.set_env = {"CAIRN_SERVER=" + server().url()};
    options.timeout = 90s;
    auto run = test_support::RunProcess({node_, kRunner, "client", "--command", command, "--scenario", scenario,
                                         "--timeout", "30000"},
                                        options);
    EXPECT_EQ(run.exit_code, 0) << run.out << run.err << "\nserver log:\n" << server().LogTail();
    EXPECT_NE(run.err.find("OVERALL: PASSED"), std::string::npos) << run.err;
  }

  std::string node_;
};

// initialize: the version offered, clientInfo; then tools/list.
TEST_F(e2e_mcp_conformance, Initialize) { ExpectPasses("initialize"); }

// tools_call: a tool of a stateless Streamable HTTP server called with its arguments.
TEST_F(e2e_mcp_conformance, ToolsCall) { ExpectPasses("tools_call"); }

// sse-retry: the server ends the tools/call event stream before the answer; cairn resumes it with a
// GET carrying Last-Event-ID after the `retry` the server gave, and the answer arrives there.
TEST_F(e2e_mcp_conformance, SseRetry) { ExpectPasses("sse-retry"); }

}  // namespace
}  // namespace cairn::e2e
