#include "llm_servers.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "http_client.h"
#include "support/loopback_http_server.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

#ifndef CAIRN_E2E_LLM_NODE_DIR
#error "CAIRN_E2E_LLM_NODE_DIR must name tests/e2e/llm-node"
#endif

namespace cairn::e2e {
namespace json = boost::json;
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
using test_support::ProcessOptions;
using test_support::Subprocess;

constexpr auto kControlTimeout = std::chrono::milliseconds(10000);

bool Exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

std::string MockLlmMain() { return LlmNodeDir() + "/node_modules/@dwmkerr/mock-llm/dist/main.js"; }

// Makes `dir` once; false (with `error`) when it cannot.
bool MakeDir(std::unique_ptr<test_support::TempDir>& dir, const char* prefix, std::string& error) {
  if (!dir) dir = std::make_unique<test_support::TempDir>(prefix);
  if (!dir->ok()) error = dir->error();
  return dir->ok();
}

bool WriteFile(const std::string& path, const std::string& text, std::string& error) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) {
    error = "cannot write " + path;
    return false;
  }
  return true;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// True if the child `pid` has exited (without reaping it: Subprocess::Wait does that).
bool Exited(pid_t pid) {
  if (pid <= 0) return true;
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) return true;
  return info.si_pid != 0;
}

}  // namespace

std::string LlmNodeDir() {
  if (const char* env = std::getenv("CAIRN_E2E_LLM_NODE_DIR"); env != nullptr && *env != '\0') return env;
  return CAIRN_E2E_LLM_NODE_DIR;
}

std::string NodeBinary() { return test_support::FindOnPath("node"); }

std::string LlmNodeProblem(bool need_mock_llm) {
  const std::string dir = LlmNodeDir();
  if (NodeBinary().empty()) {
    return "`node` is not on PATH: run scripts/install-deps (it installs Debian's nodejs and npm, then runs "
           "`npm ci` in " +
           dir + ")";
  }
  if (!Exists(dir + "/fixture-server.mjs")) return dir + "/fixture-server.mjs is missing (CAIRN_E2E_LLM_NODE_DIR?)";
  if (need_mock_llm && !Exists(MockLlmMain())) {
    return "the npm package @dwmkerr/mock-llm is not installed in " + dir +
           "/node_modules: run scripts/install-deps (or `npm ci --prefix " + dir + "`)";
  }
  return "";
}

// ---- FixtureLlm ---------------------------------------------------------------------------------

FixtureLlm::FixtureLlm(json::value script, std::vector<std::string> extra_args)
    : script_(std::move(script)), extra_args_(std::move(extra_args)) {}

FixtureLlm::~FixtureLlm() {
  Stop();
}

std::string FixtureLlm::url() const { return "http://127.0.0.1:" + std::to_string(port_); }
std::string FixtureLlm::base_url() const { return url() + "/v1"; }

bool FixtureLlm::Start(std::chrono::milliseconds timeout) {
  error_.clear();
  if (proc_) {
    error_ = "already started";
    return false;
  }
  if (std::string problem = LlmNodeProblem(false); !problem.empty()) {
    error_ = problem;
    return false;
  }
  if (!MakeDir(dir_, "cairn-llm-fixture", error_)) return false;
  const std::string script_file = dir_->Join("script.json");
  if (!WriteFile(script_file, json::serialize(script_), error_)) return false;

  std::vector<std::string> argv = {
      NodeBinary(), LlmNodeDir() + "/fixture-server.mjs", "--script", script_file, "--host", "127.0.0.1", "--port",
      "0"};
  argv.insert(argv.end(), extra_args_.begin(), extra_args_.end());
  proc_ = std::make_unique<Subprocess>(argv);
  if (!proc_->Start()) {
    error_ = "cannot start node: " + proc_->error();
    proc_.reset();
    return false;
  }
  // It prints "<port>\n" once it listens; stdout and stderr reach EOF if it exits instead.
  bool printed = proc_->ReadUntil([](const Subprocess& p) { return p.out().find('\n') != std::string::npos; }, timeout);
  const std::string out = proc_->out();
  if (printed) {
    try {
      port_ = std::stoi(out.substr(0, out.find('\n')));
    } catch (...) {
      port_ = 0;
    }
  }
  if (port_ <= 0 || port_ > 65535) {
    std::string err = proc_->err();
    Stop();
    error_ = std::string(printed ? "fixture-server printed no port" : "fixture-server did not start") + " (script " +
             script_file + "); stdout: " + out + " stderr: " + err;
    port_ = 0;
    return false;
  }
  return true;
}

void FixtureLlm::Stop() {
  if (!proc_) return;
  proc_->Kill(SIGKILL);
  proc_->Wait(10s);
  proc_.reset();
}

std::string FixtureLlm::log() {
  if (!proc_) return "";
  proc_->ReadUntil([](const Subprocess&) { return false; }, 50ms);  // collect what is there
  return proc_->err();
}

json::array FixtureLlm::RequestRecords() {
  HttpClient client(port_);
  client.set_timeout(kControlTimeout);
  Response r = client.Get("/_requests");
  if (r.status != 200 || !r.Json().is_array()) {
    ADD_FAILURE() << "fixture-server GET /_requests: " << r.Describe();
    return {};
  }
  return r.Json().as_array();
}

std::vector<json::value> FixtureLlm::Requests() {
  std::vector<json::value> bodies;
  for (auto& rec : RequestRecords()) {
    const json::object* o = rec.if_object();
    const json::value* body = o ? o->if_contains("body") : nullptr;
    bodies.push_back(body ? *body : json::value());
  }
  return bodies;
}

bool FixtureLlm::ClearRequests() {
  HttpClient client(port_);
  client.set_timeout(kControlTimeout);
  Response r = client.Delete("/_requests");
  if (r.status != 200) error_ = "fixture-server DELETE /_requests: " + r.Describe();
  return r.status == 200;
}

bool FixtureLlm::SetScript(const json::value& script) {
  HttpClient client(port_);
  client.set_timeout(kControlTimeout);
  Response r = client.Post("/_script", json::serialize(script));
  if (r.status != 200) {
    error_ = "fixture-server POST /_script: " + r.Describe();
    return false;
  }
  script_ = script;
  return true;
}

// ---- MockLlm ------------------------------------------------------------------------------------

MockLlm::MockLlm(json::value config) : config_(std::move(config)) {}

MockLlm::~MockLlm() {
  Stop();
}

std::string MockLlm::url() const { return "http://127.0.0.1:" + std::to_string(port_); }
std::string MockLlm::base_url() const { return url() + "/v1"; }

bool MockLlm::Start(std::chrono::milliseconds timeout) {
  error_.clear();
  if (proc_) {
    error_ = "already started";
    return false;
  }
  if (std::string problem = LlmNodeProblem(true); !problem.empty()) {
    error_ = problem;
    return false;
  }
  if (!MakeDir(dir_, "cairn-llm-mock", error_)) return false;
  config_file_ = dir_->Join("mock-llm.yaml");  // JSON, which is YAML
  log_file_ = dir_->Join("mock-llm.log");
  if (!WriteFile(config_file_, json::serialize(config_), error_)) return false;

  const auto deadline = Clock::now() + timeout;
  for (int attempt = 0; attempt < 8; ++attempt) {
    int port = test_support::FreeLoopbackPort();
    if (port == 0) {
      error_ = std::string("cannot pick a free port: ") + std::strerror(errno);
      return false;
    }
    bool collided = false;
    if (StartOnce(port, deadline, collided)) return true;
    if (!collided) return false;  // error_ says why
  }
  error_ = "mock-llm: every port tried was taken; last: " + error_;
  return false;
}

bool MockLlm::StartOnce(int port, Clock::time_point deadline, bool& collided) {
  collided = false;
  port_ = 0;
  // mock-llm logs every request on stdout: its output goes to a file rather than a pipe (which
  // nobody would drain while the test runs). `sh -c 'exec "$@" >"$0" 2>&1' LOG node main.js ...`.
  std::vector<std::string> argv = {
      "/bin/sh", "-c", "exec \"$@\" >\"$0\" 2>&1", log_file_, NodeBinary(), MockLlmMain(), "--config", config_file_};
  ProcessOptions options;
  options.set_env = {"HOST=127.0.0.1", "PORT=" + std::to_string(port)};
  proc_ = std::make_unique<Subprocess>(argv, options);
  if (!proc_->Start()) {
    error_ = "cannot start mock-llm: " + proc_->error();
    proc_.reset();
    return false;
  }
  // It prints "... server running on 127.0.0.1:<port>" once listen() succeeded (and exits with
  // EADDRINUSE if the port was taken meanwhile). Poll the log, then GET /health.
  const std::string ready = "server running on 127.0.0.1:" + std::to_string(port);
  auto fail = [&](const std::string& why) {
    Stop();
    error_ = "mock-llm (port " + std::to_string(port) + ", config " + config_file_ + "): " + why + "; log:\n" +
             ReadFile(log_file_);
    return false;
  };
  while (true) {
    std::string text = ReadFile(log_file_);
    if (text.find(ready) != std::string::npos) break;
    if (Exited(proc_->pid())) {
      collided = text.find("EADDRINUSE") != std::string::npos;
      return fail("exited before listening");
    }
    if (Clock::now() > deadline) return fail("did not start in time");
    std::this_thread::sleep_for(10ms);
  }
  HttpClient client(port);
  client.set_timeout(kControlTimeout);
  Response health = client.Get("/health");
  if (health.status != 200) return fail("GET /health: " + health.Describe());
  if (Exited(proc_->pid())) return fail("exited after listening");
  port_ = port;
  return true;
}

void MockLlm::Stop() {
  if (!proc_) return;
  proc_->Kill(SIGKILL);
  proc_->Wait(10s);
  proc_.reset();
}

std::string MockLlm::log() const { return log_file_.empty() ? "" : ReadFile(log_file_); }

int MockLlm::ChatRequestCount() const {
  std::istringstream in(log());
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    if (line == "POST /v1/chat/completions") ++n;
  }
  return n;
}

bool MockLlm::SetConfig(const json::value& config) {
  HttpClient client(port_);
  client.set_timeout(kControlTimeout);
  Response r = client.Post("/config", json::serialize(config));
  if (r.status != 200) {
    error_ = "mock-llm POST /config: " + r.Describe();
    return false;
  }
  config_ = config;
  return true;
}

json::object MockLlm::Rule(const std::string& match, const json::value& response, int status) {
  return json::object{{"path", "/v1/chat/completions"},
                      {"method", "POST"},
                      {"match", match},
                      {"response", json::object{{"status", status}, {"content", json::serialize(response)}}}};
}

json::object MockLlm::AnswerRule(const std::string& match, const std::string& content) {
  json::object completion{
      {"id", "chatcmpl-mock"},
      {"object", "chat.completion"},
      {"created", 0},
      {"model", "mock-llm"},
      {"choices", json::array{json::object{{"index", 0},
                                           {"message", json::object{{"role", "assistant"}, {"content", content}}},
                                           {"finish_reason", "stop"}}}},
      {"usage", json::object{{"prompt_tokens", 3}, {"completion_tokens", 2}, {"total_tokens", 5}}}};
  return Rule(match, completion);
}

json::object MockLlm::ToolCallRule(const std::string& match, const std::string& name, const json::value& arguments,
                                   const std::string& id) {
  json::object call{{"id", id},
                    {"type", "function"},
                    {"function", json::object{{"name", name}, {"arguments", json::serialize(arguments)}}}};
  json::object completion{
      {"id", "chatcmpl-mock"},
      {"object", "chat.completion"},
      {"created", 0},
      {"model", "mock-llm"},
      {"choices",
       json::array{json::object{
           {"index", 0},
           {"message", json::object{{"role", "assistant"}, {"content", nullptr}, {"tool_calls", json::array{call}}}},
           {"finish_reason", "tool_calls"}}}},
      {"usage", json::object{{"prompt_tokens", 3}, {"completion_tokens", 2}, {"total_tokens", 5}}}};
  return Rule(match, completion);
}

json::value MockLlm::Config(json::array rules, int chunk_size, int interval_ms) {
  return json::object{{"streaming", json::object{{"chunkSize", chunk_size}, {"chunkIntervalMs", interval_ms}}},
                      {"rules", std::move(rules)}};
}

}  // namespace cairn::e2e
