#include "exec/tools/tool_factory.h"

#include <boost/json/serialize.hpp>

#include "base/json_util.h"
#include "base/log.h"
#include "base/secret_redactor.h"
#include "model/secret_ref.h"
#include "exec/tools/process_runner.h"
#include "net/http_fetch.h"
#include "exec/tools/process_sandbox.h"

namespace cairn::exec {
namespace json = boost::json;
namespace {

constexpr size_t kMaxResultDepth = 64;
constexpr size_t kErrorTailBytes = 2000;

std::string Tail(const std::string& text, size_t bytes) {
  return text.size() <= bytes ? text : "..." + text.substr(text.size() - bytes);
}

// The outcome of a run that held secret values, with every form of them redacted
// (base/secret_redactor.h): the result and the error message become what is stored and shown.
Result<json::value> Redacted(const SecretRedactor& redact, Result<json::value> outcome) {
  if (redact.empty()) return outcome;
  if (!outcome.ok()) return redact.RedactStatus(outcome.status());
  return redact.RedactJson(*outcome, kMaxResultDepth);
}

class ProcessTool final : public Tool {
 public:
  ProcessTool(model::ToolDefinition def, const BuiltinToolOptions& options)
      : def_(std::move(def)), sandbox_(options.process), env_policy_(options.limits.tool_env),
        resolve_secret_(options.resolve_secret) {}

  Result<json::value> Invoke(const ToolCall& call) override {
    SecretRedactor redact;
    std::vector<std::pair<std::string, std::string>> secret_env;
    for (const auto& [var, name] : def_.secret_env) {
      auto value = model::ResolveSecretOrValue(model::SecretOrValue{"", name}, call.trigger.owner_id, resolve_secret_,
                                               def_.name + ": variable " + var, &redact);
      if (!value.ok()) return value.status();
      secret_env.emplace_back(var, std::move(value).value());
    }
    return Redacted(redact, Run(call, secret_env, redact));
  }

 private:
  Result<json::value> Run(const ToolCall& call, const std::vector<std::pair<std::string, std::string>>& secret_env,
                          const SecretRedactor& redact) {
    CAIRN_ASSIGN_OR_RETURN(RunDirectory dir, RunDirectory::Create(sandbox_));
    ProcessSpec spec;
    spec.argv = def_.command;
    spec.cwd = def_.cwd.empty() ? dir.path() : def_.cwd;
    spec.env = ToolEnvironment(def_.env, env_policy_, dir.path());
    for (const auto& entry : secret_env) spec.env.push_back(entry);
    spec.stdin_data = json::serialize(json::object{{"input", call.input}, {"context", call.context}});
    spec.wall_timeout = call.timeout;
    const model::ProcessLimits& limits = def_.process_limits;
    spec.cpu_seconds = limits.cpu_seconds;
    spec.memory_bytes = limits.memory_mb * 1024 * 1024;
    // RLIMIT_NPROC counts every process of a user: only under a tool user of its own is it a
    // bound on tools (as cairn's user it would count cairn's threads and that user's other
    // processes; root is exempt). Without one, the keeper still kills whatever is left.
    spec.max_processes = sandbox_.user ? limits.processes : 0;
    spec.max_result_bytes = static_cast<size_t>(limits.output_bytes);
    spec.run_as = sandbox_.user;
    CAIRN_ASSIGN_OR_RETURN(ProcessResult result, RunProcess(spec, &call.cancelled));
    if (!result.stdout_tail.empty()) CAIRN_LOG_DEBUG("tool {} stdout: {}", def_.name, redact(result.stdout_tail));
    if (!result.stderr_tail.empty()) CAIRN_LOG_DEBUG("tool {} stderr: {}", def_.name, redact(result.stderr_tail));
    if (result.leftovers > 0) CAIRN_LOG_DEBUG("tool {}: killed {} processes it left behind", def_.name, result.leftovers);
    std::string failure = DescribeFailure(result, spec);
    if (!failure.empty()) {
      std::string stderr_tail = Tail(result.stderr_tail, kErrorTailBytes);
      return Status::Internal(def_.name + " " + failure + (stderr_tail.empty() ? "" : "; stderr: " + stderr_tail));
    }
    if (result.result.empty()) return Status::Internal(def_.name + " wrote no result on file descriptor 3");
    auto parsed = ParseJson(result.result, kMaxResultDepth);
    if (!parsed.ok()) return Status::Internal(def_.name + " wrote a result that is not JSON: " + parsed.status().message());
    return std::move(parsed).value();
  }

  model::ToolDefinition def_;
  ProcessToolOptions sandbox_;
  model::ToolEnvPolicy env_policy_;
  model::SecretResolver resolve_secret_;
};

class HttpTool final : public Tool {
 public:
  HttpTool(model::ToolDefinition def, const BuiltinToolOptions& options)
      : def_(std::move(def)), policy_(options.outbound_policy), resolve_secret_(options.resolve_secret) {}

  Result<json::value> Invoke(const ToolCall& call) override {
    SecretRedactor redact;
    // Secret headers are read at each call: a rotation applies to the next one.
    CAIRN_ASSIGN_OR_RETURN(auto headers, model::ResolveHeaders(def_.headers, call.trigger.owner_id, resolve_secret_, &redact));
    return Redacted(redact, Call(call, std::move(headers)));
  }

 private:
  Result<json::value> Call(const ToolCall& call, std::vector<std::pair<std::string, std::string>> headers) {
    net::HttpFetchRequest request;
    request.method = "POST";
    request.url = def_.url;
    request.headers = std::move(headers);
    request.headers.emplace_back("Content-Type", "application/json");
    // As process tools get on stdin: the input and the context the tool subscribed to.
    request.body = json::serialize(json::object{{"input", call.input}, {"context", call.context}});
    request.timeout = call.timeout;
    request.policy = policy_;  // a refused address answers bad_request with the policy's message
    CAIRN_ASSIGN_OR_RETURN(net::HttpFetchResponse response, net::HttpFetch(request, &call.cancelled));
    if (response.status < 200 || response.status > 299) {
      return Status::Unavailable(def_.url + " answered " + std::to_string(response.status) + ": " +
                                 Tail(response.body, 500));
    }
    auto parsed = ParseJson(response.body, kMaxResultDepth);
    if (!parsed.ok()) return Status::Internal(def_.url + " did not answer with JSON: " + parsed.status().message());
    return std::move(parsed).value();
  }

  model::ToolDefinition def_;
  std::shared_ptr<const net::OutboundPolicy> policy_;
  model::SecretResolver resolve_secret_;
};

class McpTool final : public Tool {
 public:
  McpTool(model::ToolDefinition def, std::shared_ptr<McpToolCaller> caller)
      : def_(std::move(def)), caller_(std::move(caller)) {}

  Result<json::value> Invoke(const ToolCall& call) override {
    if (!caller_) return Status::Unavailable("MCP servers are not enabled in this process");
    return caller_->CallTool(def_.mcp_server, def_.mcp_tool, call);
  }

 private:
  model::ToolDefinition def_;
  std::shared_ptr<McpToolCaller> caller_;
};

}  // namespace

Result<std::unique_ptr<Tool>> MakeTool(const model::ToolDefinition& definition, const BuiltinToolDeps& deps) {
  switch (definition.runtime) {
    case model::ToolRuntime::kBuiltin: {
      auto tool = MakeBuiltinTool(definition.builtin, deps);
      if (!tool) return Status::Validation("context.builtin", "there is no built-in tool named '" + definition.builtin + "'");
      return tool;
    }
    case model::ToolRuntime::kProcess:
      return std::unique_ptr<Tool>(std::make_unique<ProcessTool>(definition, deps.options));
    case model::ToolRuntime::kHttp:
      return std::unique_ptr<Tool>(std::make_unique<HttpTool>(definition, deps.options));
    case model::ToolRuntime::kMcp:
      return std::unique_ptr<Tool>(std::make_unique<McpTool>(definition, deps.options.mcp));
  }
  return Status::Internal("unknown runtime");
}

}  // namespace cairn::exec
