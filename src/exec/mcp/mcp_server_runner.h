// McpServerRunner: the connection to one MCP server and its thread (mcp_manager.h describes the
// lifecycle: connect, list, sync tools, reconnect with backoff).
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "exec/mcp/mcp_client.h"
#include "exec/mcp/mcp_manager.h"

namespace cairn::exec::mcp {

class McpServerRunner {
 public:
  // The server of record `definition` of tenant `owner`.
  McpServerRunner(std::string owner, model::McpServerDefinition definition, store::Store& store,
                  const McpManagerOptions& options);
  ~McpServerRunner();  // Stop()s
  void Start();
  // Closes the connection (a stdio server is stopped) and joins the thread. Idempotent.
  void Stop();

  Result<boost::json::value> Call(const std::string& tool, const ToolCall& call);
  McpServerState State() const;
  const model::McpServerDefinition& definition() const { return definition_; }

 private:
  void Run();
  Result<std::unique_ptr<McpTransport>> MakeTransport();
  Status ConnectAndSync(std::shared_ptr<McpClient>& client);
  void SetState(const std::string& state, const std::string& error);
  bool WaitFor(std::chrono::milliseconds delay);  // false when stopping

  std::string owner_;
  model::McpServerDefinition definition_;
  store::Store& store_;
  const McpManagerOptions& options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool tools_changed_ = false;
  bool connection_ended_ = false;
  std::shared_ptr<McpClient> client_;  // the ready connection, or null
  McpServerState state_;
  std::unique_ptr<RunDirectory> home_;  // a stdio server's HOME, kept across restarts
  std::thread thread_;
};

}  // namespace cairn::exec::mcp
