#include "exec/mcp/mcp_server_runner.h"

#include <algorithm>

#include "base/log.h"
#include "exec/mcp/http_transport.h"
#include "exec/mcp/stdio_transport.h"
#include "exec/mcp/tool_materializer.h"
#include "exec/tools/tool_executor.h"
#include "model/secret_ref.h"
#include "model/selector.h"
#include "exec/tools/process_sandbox.h"

namespace cairn::exec::mcp {
namespace json = boost::json;

namespace {
constexpr std::chrono::milliseconds kFirstBackoff{500};
constexpr std::chrono::milliseconds kMaxBackoff{30000};
}  // namespace

McpServerRunner::McpServerRunner(std::string owner, model::McpServerDefinition definition, store::Store& store,
                                 const McpManagerOptions& options)
    : owner_(std::move(owner)), definition_(std::move(definition)), store_(store), options_(options) {
  state_.owner_id = owner_;
  state_.name = definition_.name;
  state_.transport = definition_.transport == model::McpTransportKind::kStdio ? "stdio" : "http";
  state_.state = "connecting";
}

McpServerRunner::~McpServerRunner() { Stop(); }

void McpServerRunner::Start() { thread_ = std::thread([this] { Run(); }); }

void McpServerRunner::Stop() {
  std::shared_ptr<McpClient> client;
  {
    std::lock_guard lock(mu_);
    stop_ = true;
    client = client_;
    cv_.notify_all();
  }
  if (client) client->Close();  // ends calls in flight and a connect in progress
  if (thread_.joinable()) thread_.join();
}

void McpServerRunner::SetState(const std::string& state, const std::string& error) {
  std::lock_guard lock(mu_);
  state_.state = state;
  state_.error = error;
}

McpServerState McpServerRunner::State() const {
  std::lock_guard lock(mu_);
  return state_;
}

bool McpServerRunner::WaitFor(std::chrono::milliseconds delay) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, delay, [&] { return stop_; });
  return !stop_;
}

Result<std::unique_ptr<McpTransport>> McpServerRunner::MakeTransport() {
  if (definition_.transport == model::McpTransportKind::kHttp) {
    // The tenant's secrets, now: their values live in these requests' headers only.
    CAIRN_ASSIGN_OR_RETURN(auto headers, model::ResolveHeaders(definition_.headers, owner_, options_.resolve_secret, nullptr));
    return std::unique_ptr<McpTransport>(std::make_unique<HttpTransport>(definition_.url, std::move(headers),
                                                                         options_.outbound_policy,
                                                                         options_.max_message_bytes));
  }
  if (!home_) {
    CAIRN_ASSIGN_OR_RETURN(RunDirectory dir, RunDirectory::Create(options_.process));
    home_ = std::make_unique<RunDirectory>(std::move(dir));
  }
  ProcessSpec spec;
  spec.argv = definition_.command;
  spec.cwd = definition_.cwd.empty() ? home_->path() : definition_.cwd;
  spec.env = ToolEnvironment(definition_.env, options_.limits.tool_env, home_->path());
  spec.memory_bytes = definition_.limits.memory_mb * 1024 * 1024;
  // As for process tools: RLIMIT_NPROC bounds anything only under a tool user of its own.
  spec.max_processes = options_.process.user ? definition_.limits.processes : 0;
  spec.run_as = options_.process.user;
  return std::unique_ptr<McpTransport>(std::make_unique<StdioTransport>(std::move(spec), options_.max_message_bytes));
}

Status McpServerRunner::ConnectAndSync(std::shared_ptr<McpClient>& client) {
  CAIRN_ASSIGN_OR_RETURN(std::unique_ptr<McpTransport> transport, MakeTransport());
  client = std::make_shared<McpClient>(std::move(transport));
  client->OnToolsChanged([this] {
    std::lock_guard lock(mu_);
    tools_changed_ = true;
    cv_.notify_all();
  });
  client->OnClosed([this](const std::string&) {
    std::lock_guard lock(mu_);
    connection_ended_ = true;
    cv_.notify_all();
  });
  {
    std::lock_guard lock(mu_);
    if (stop_) return Status::Unavailable("stopping");
    client_ = client;  // so that Stop() can end the handshake
    connection_ended_ = false;
    tools_changed_ = false;
  }
  const std::chrono::milliseconds timeout(definition_.connect_timeout_ms);
  CAIRN_RETURN_IF_ERROR(client->Connect(timeout));
  CAIRN_ASSIGN_OR_RETURN(std::vector<McpTool> tools, client->ListTools(timeout, options_.max_tools));
  {
    // Ready before the tool records are written: a request for a new tool may come at once.
    std::lock_guard lock(mu_);
    state_.state = "ready";
    state_.error.clear();
    state_.protocol_version = client->protocol_version();
    state_.server_info = client->server_info();
    state_.tools.clear();
    for (const McpTool& tool : tools) state_.tools.push_back(model::McpToolName(definition_.name, tool.name));
  }
  return SyncTools(store_, owner_, definition_, tools);
}

void McpServerRunner::Run() {
  auto backoff = kFirstBackoff;
  bool first = true;
  while (true) {
    if (!first) {
      {
        std::lock_guard lock(mu_);
        ++state_.restarts;
      }
      if (!WaitFor(backoff)) break;
      backoff = std::min(backoff * 2, kMaxBackoff);
    }
    first = false;
    SetState("connecting", "");
    std::shared_ptr<McpClient> client;
    Status connected = ConnectAndSync(client);
    if (!connected.ok()) {
      std::string error = connected.message();
      if (client) {
        std::string diagnostics = client->Diagnostics();
        if (!diagnostics.empty()) error += "; stderr: " + diagnostics.substr(diagnostics.size() > 500 ? diagnostics.size() - 500 : 0);
        client->Close();
      }
      {
        std::lock_guard lock(mu_);
        client_.reset();
        if (stop_) break;
      }
      CAIRN_LOG_WARN("MCP server {}: {}", definition_.name, error);
      SetState("failed", error);
      continue;
    }
    CAIRN_LOG_INFO("MCP server {} connected (protocol {}, {} tools)", definition_.name, client->protocol_version(),
                   State().tools.size());
    backoff = kFirstBackoff;
    // Serve until the connection ends or the server says its tools changed.
    while (true) {
      bool relist = false;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return stop_ || tools_changed_ || connection_ended_; });
        if (stop_ || connection_ended_) break;
        tools_changed_ = false;
        relist = true;
      }
      if (relist) {
        auto tools = client->ListTools(std::chrono::milliseconds(definition_.connect_timeout_ms), options_.max_tools);
        if (!tools.ok()) {
          CAIRN_LOG_WARN("MCP server {}: listing its changed tools failed: {}", definition_.name, tools.status().message());
          continue;
        }
        if (Status synced = SyncTools(store_, owner_, definition_, *tools); !synced.ok()) {
          CAIRN_LOG_WARN("MCP server {}: {}", definition_.name, synced.message());
        }
        std::lock_guard lock(mu_);
        state_.tools.clear();
        for (const McpTool& tool : *tools) state_.tools.push_back(model::McpToolName(definition_.name, tool.name));
      }
    }
    std::string why = client->close_reason();
    client->Close();
    {
      std::lock_guard lock(mu_);
      client_.reset();
      if (stop_) break;
    }
    CAIRN_LOG_WARN("MCP server {}: connection ended ({}); reconnecting", definition_.name, why);
    SetState("failed", "connection ended: " + why);
  }
  SetState("stopped", "");
}

Result<json::value> McpServerRunner::Call(const std::string& tool, const ToolCall& call) {
  std::shared_ptr<McpClient> client;
  {
    std::lock_guard lock(mu_);
    if (state_.state == "ready") client = client_;
    if (!client) {
      return Status::Unavailable("MCP server " + definition_.name + " is not connected (" + state_.state +
                                 (state_.error.empty() ? "" : ": " + state_.error) + ")");
    }
  }
  // Each notifications/progress is a step of the call's run: counted (its step_count) and
  // published as an ephemeral tool.progress event naming the run, which the session channel of
  // a session the run works for shows. Everything is copied: the callback never runs after
  // CallTool returns (mcp_client.h), but owes nothing to `call` either.
  std::vector<std::string> tags = call.trigger.tags;
  const std::string request_id = RequestIdOf(call.trigger);
  tags.push_back("request:" + request_id);
  if (const std::string& session = call.lineage.session_id; !session.empty()) {
    const bool tagged = std::any_of(tags.begin(), tags.end(), [&](const std::string& tag) {
      return tag == "session:" + session || tag == "session-activity:" + session;
    });
    if (!tagged) tags.push_back("session-activity:" + session);
  }
  ProgressCallback progress = [hub = options_.progress, tags = std::move(tags), request_id,
                               tool_name = model::McpToolName(definition_.name, tool), owner = call.trigger.owner_id,
                               after_seq = call.trigger.seq, execution_id = call.execution_id,
                               parent = call.lineage.parent_execution_id, steps = call.steps](const json::object& update) {
    const int64_t step = steps != nullptr ? ++*steps : 0;
    if (hub == nullptr) return;
    auto event = std::make_shared<bus::EphemeralEvent>();
    event->type = std::string(model::kToolProgressEventType);
    event->owner_id = owner;
    event->tags = tags;
    event->at = std::chrono::duration_cast<std::chrono::microseconds>(
                    std::chrono::system_clock::now().time_since_epoch()).count();
    json::object data{{"request_id", request_id}, {"tool", tool_name}, {"step", step},
                      {"execution_id", execution_id.empty() ? json::value(nullptr) : json::value(execution_id)},
                      {"parent_execution_id", parent.empty() ? json::value(nullptr) : json::value(parent)}};
    for (const char* field : {"progress", "total", "message"}) {
      if (const json::value* v = update.if_contains(field)) data[field] = *v;
    }
    event->data = std::move(data);
    event->after_seq = after_seq;  // never before the request on any stream
    hub->Publish(std::move(event));
  };
  CAIRN_ASSIGN_OR_RETURN(json::object result, client->CallTool(tool, call.input, call.timeout, &call.cancelled, progress));
  return MapCallResult(result);
}

}  // namespace cairn::exec::mcp
