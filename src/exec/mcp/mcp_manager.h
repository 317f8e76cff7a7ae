// McpManager: cairn as an MCP client (docs/mcp.md). It keeps one connection per mcp.server.v1
// record, of every tenant, and offers the servers' tools as tool.v1 records of runtime "mcp" in
// the record's tenant, which the tool pipeline calls through it (McpToolCaller). A server is
// known by (tenant, name): two tenants may each have a server "files", and a tenant's tools call
// its own server only.
//
// - Start() connects to every stored server of the tenants it is given and follows the
//   mcp.server.v1 events of every tenant (also of tenants created later): a create or update
//   (re)connects that server, a delete disconnects it and deletes its tool.v1 records. Tool
//   records of servers that no longer exist are deleted at start.
// - Each server has a thread of its own (McpServerRunner): connect (initialize, within the
//   server's connect_timeout_ms), list the tools, sync the tool.v1 records; again on
//   notifications/tools/list_changed. A connection that ends (a stdio server that exits, an HTTP
//   session the server drops) is reopened with exponential backoff (0.5 s doubling to 30 s), as is
//   one that cannot be made; the tool records stay meanwhile and calls answer unavailable.
// - Header values {"secret": NAME} of HTTP servers are the tenant's secret NAME, resolved at each
//   connect (options.resolve_secret) into the request headers only: never stored or logged.
// - Stdio servers run in the process tools' sandbox (exec/tools/process_sandbox.h: the tool user,
//   a directory of their own as HOME, the environment of process tools, memory and process limits);
//   HTTP servers are reached through src/net under the outbound address policy.
// - A call's notifications/progress are published as ephemeral `tool.progress` events (never
//   stored; docs/mcp.md) with the request's tags plus request:<request_id>, so a stream that
//   names the type sees them: {request_id, tool, progress, total?, message?}.
#pragma once

#include <boost/json/object.hpp>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bus/ephemeral_hub.h"
#include "bus/event_bus.h"
#include "exec/tools/builtin_tools.h"
#include "exec/tools/tool.h"
#include "model/mcp_server_definition.h"
#include "model/secret_ref.h"
#include "store/store.h"

namespace cairn::exec::mcp {

class McpServerRunner;

struct McpManagerOptions {
  ProcessToolOptions process;  // the sandbox of stdio servers (as process tools have it)
  model::Limits limits;        // records are parsed with these; env names follow limits.tool_env
  std::shared_ptr<const net::OutboundPolicy> outbound_policy;  // where HTTP servers may be
  size_t max_message_bytes = 16 << 20;  // one message from a server
  size_t max_tools = 1000;              // per server
  // Where a call's notifications/progress go, as ephemeral `tool.progress` events (may be null).
  bus::EphemeralHub* progress = nullptr;
  // The value of a tenant's secret (auth::SecretStore::Resolve); null: secret headers fail to
  // connect, saying so.
  model::SecretResolver resolve_secret;
};

// What `cairn mcp list` (GET /mcp/servers) shows of a server.
struct McpServerState {
  std::string owner_id;          // the tenant of its record
  std::string name;
  std::string transport;         // stdio | http
  std::string state;             // connecting | ready | failed | stopped
  std::string error;             // why it is not ready, when it is not
  std::string protocol_version;  // once connected
  boost::json::object server_info;
  std::vector<std::string> tools;  // the tool.v1 names
  int64_t restarts = 0;            // connections reopened after one ended or failed
};

class McpManager final : public McpToolCaller {
 public:
  // `store` and `bus` must outlive the manager.
  McpManager(store::Store& store, bus::EventBus& bus, McpManagerOptions options);
  ~McpManager() override;  // Stop()s

  // Connects the stored servers of `tenants` (the default one when empty).
  Status Start(const std::vector<std::string>& tenants = {});
  // Disconnects every server (stdio servers are stopped) and stops following records. Idempotent.
  void Stop();
  // Whether the manager holds the connections: started and not stopped. A worker of a cluster that
  // does not do the executors part has a manager that never starts.
  bool started() const;

  Result<boost::json::value> CallTool(const std::string& server, const std::string& tool, const ToolCall& call) override;

  // Every server of tenant `owner`, by name.
  std::vector<McpServerState> Servers(const std::string& owner) const;

 private:
  using ServerKey = std::pair<std::string, std::string>;  // (tenant, server name)
  void Loop(int64_t after);
  void Apply(const model::Event& event);
  void Connect(const std::string& owner, const std::string& id, const boost::json::value& context);
  void Disconnect(const std::string& id, bool remove_tools);

  store::Store& store_;
  bus::EventBus& bus_;
  McpManagerOptions options_;
  mutable std::mutex mu_;
  std::map<ServerKey, std::shared_ptr<McpServerRunner>> by_name_;
  std::map<std::string, ServerKey> name_of_id_;  // record id -> its server
  std::condition_variable cv_;
  bool started_ = false;
  bool stop_ = false;
  bool woken_ = false;
  std::unique_ptr<bus::Subscription> subscription_;
  std::thread thread_;
};

}  // namespace cairn::exec::mcp
