// LLM servers for end-to-end tests: OpenAI-compatible `POST <base_url>/chat/completions` endpoints
// that cairn's agents are pointed at, run as `node` subprocesses from tests/e2e/llm-node/.
//
//   FixtureLlm llm(json::parse(R"({"rules": [
//       {"match": {"last_role": "user"}, "reply": {"tool_calls": [{"name": "echo", "arguments": {"x": 1}}]}},
//       {"match": {"last_role": "tool"}, "reply": {"content": "done: {{last_tool_content}}"}}]})"));
//   ASSERT_TRUE(llm.Start()) << llm.error();
//   ... point the agent at llm.base_url() ("http://127.0.0.1:<port>/v1") ...
//   EXPECT_EQ(llm.Requests().size(), 2u);           // the request bodies, in order
//
//   MockLlm mock(MockLlm::Config({MockLlm::AnswerRule("contains(body.messages[-1].content, 'hi')", "hello")}));
//   ASSERT_TRUE(mock.Start()) << mock.error();
//   ... mock.base_url() ...; mock.ChatRequestCount();
//
// FixtureLlm is our scripted server (llm-node/fixture-server.mjs: rules, streaming with tool-call
// deltas and usage, request recording); MockLlm is the independent npm package @dwmkerr/mock-llm
// (rules are JMESPath matches with templated JSON responses; it does not record request bodies,
// and its streaming mode sends only the content, dropping tool calls and usage). See README.md.
//
// Both children get SIGKILL when the instance is destroyed or the test process dies. Each instance
// owns a temporary directory (script/config, logs), removed unless CAIRN_E2E_KEEP is set.
// The llm-node directory is the compile definition CAIRN_E2E_LLM_NODE_DIR, overridable with the
// environment variable CAIRN_E2E_LLM_NODE_DIR.
#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace cairn::test_support {
class Subprocess;
class TempDir;
}  // namespace cairn::test_support

namespace cairn::e2e {

// tests/e2e/llm-node.
std::string LlmNodeDir();
// The first executable `node` on PATH ("" if none).
std::string NodeBinary();
// "" if `node` is on PATH, fixture-server.mjs is there and (with `need_mock_llm`) llm-node/node_modules
// holds @dwmkerr/mock-llm; otherwise what is missing and how to fix it (run scripts/install-deps).
// Start() fails with the same message.
std::string LlmNodeProblem(bool need_mock_llm = true);

class FixtureLlm {
 public:
  // `script` is fixture-server.mjs's script, {"rules": [...]}; `extra_args` are appended to the
  // command line (e.g. {"--no-record"}).
  explicit FixtureLlm(boost::json::value script, std::vector<std::string> extra_args = {});
  ~FixtureLlm();
  FixtureLlm(const FixtureLlm&) = delete;
  FixtureLlm& operator=(const FixtureLlm&) = delete;

  // Writes the script, starts the server on 127.0.0.1:0 and waits until it prints its port.
  // False (with error()) if node or the script is missing or bad, or the server does not start.
  bool Start(std::chrono::milliseconds timeout = std::chrono::seconds(30));
  void Stop();  // SIGKILL and reap (also done by the destructor)

  int port() const { return port_; }
  std::string url() const;       // "http://127.0.0.1:<port>"
  std::string base_url() const;  // "http://127.0.0.1:<port>/v1": the OpenAI base URL
  const std::string& error() const { return error_; }
  // What the server wrote on stderr so far (errors only; it logs nothing per request).
  std::string log();

  // The recorded chat-completion requests (GET /_requests): their JSON bodies, oldest first
  // (at most the last 10,000). ADD_FAILURE and an empty vector if the server does not answer.
  std::vector<boost::json::value> Requests();
  // The full records: [{"n", "at_ms", "body", "authorization" (the header as received, or null)}].
  boost::json::array RequestRecords();
  // DELETE /_requests.
  bool ClearRequests();
  // POST /_script: replaces the rules (and their `times` counters). False (with error()) if the
  // server rejects the script.
  bool SetScript(const boost::json::value& script);

 private:
  boost::json::value script_;
  std::vector<std::string> extra_args_;
  std::unique_ptr<test_support::TempDir> dir_;
  std::unique_ptr<test_support::Subprocess> proc_;
  int port_ = 0;
  std::string error_;
};

class MockLlm {
 public:
  // `config` is mock-llm's configuration, {"streaming": {...}?, "rules": [...]}, written as JSON to
  // its config file (mock-llm reads it with a YAML loader; JSON is YAML). It replaces mock-llm's
  // default rules (its echo rule and GET /v1/models).
  explicit MockLlm(boost::json::value config);
  ~MockLlm();
  MockLlm(const MockLlm&) = delete;
  MockLlm& operator=(const MockLlm&) = delete;

  // Picks a free loopback port (bind port 0, close; mock-llm cannot report a port-0 binding),
  // starts `node .../@dwmkerr/mock-llm/dist/main.js --config FILE` with HOST=127.0.0.1 PORT=<port>
  // and waits until it says it listens and answers GET /health; on a port collision it retries
  // with another port. False (with error()) on failure.
  bool Start(std::chrono::milliseconds timeout = std::chrono::seconds(30));
  void Stop();

  int port() const { return port_; }
  std::string url() const;       // "http://127.0.0.1:<port>"
  std::string base_url() const;  // "http://127.0.0.1:<port>/v1"
  const std::string& error() const { return error_; }
  // mock-llm's stdout and stderr so far (it logs "<METHOD> <path>" for every request).
  std::string log() const;
  // How many `POST /v1/chat/completions` requests mock-llm has logged (its only request record:
  // method and path, no bodies).
  int ChatRequestCount() const;
  // POST /config: replaces the configuration at runtime (and resets nothing else; DELETE /config
  // would restore the start-up file and reset `sequence` counters).
  bool SetConfig(const boost::json::value& config);

  // Helpers for mock-llm's native rule format. A rule is
  //   {"path": "/v1/chat/completions", "method": "POST", "match": "<JMESPath over
  //    {body, headers, method, path, query}>", "response": {"status": N, "content": "<JSON text>"}}
  // and the LAST matching rule wins. `content` is a template ({{jmes request <expr>}},
  // {{timestamp}}); these helpers serialize `response` into it.
  static boost::json::object Rule(const std::string& match, const boost::json::value& response, int status = 200);
  // A chat.completion whose message has `content`, finish_reason "stop", fixed usage (3/2/5).
  static boost::json::object AnswerRule(const std::string& match, const std::string& content);
  // A chat.completion whose message has one tool call (id `id`, arguments serialized from
  // `arguments`), finish_reason "tool_calls".
  static boost::json::object ToolCallRule(const std::string& match, const std::string& name,
                                          const boost::json::value& arguments, const std::string& id = "call_mock_1");
  // {"streaming": {"chunkSize": chunk_size, "chunkIntervalMs": interval_ms}, "rules": rules}.
  static boost::json::value Config(boost::json::array rules, int chunk_size = 8, int interval_ms = 1);

 private:
  bool StartOnce(int port, std::chrono::steady_clock::time_point deadline, bool& collided);

  boost::json::value config_;
  std::unique_ptr<test_support::TempDir> dir_;
  std::string config_file_;
  std::string log_file_;
  std::unique_ptr<test_support::Subprocess> proc_;
  int port_ = 0;
  std::string error_;
};

}  // namespace cairn::e2e
