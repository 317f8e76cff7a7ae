// StdioTransport: an MCP server run as a child process, one JSON-RPC message per line on its stdin
// and stdout (MCP "stdio" transport). The child is a LiveProcess (exec/tools/live_process.h): the
// sandbox and limits of a process tool, and no process of it outlives the transport.
#pragma once

#include <memory>
#include <mutex>
#include <thread>

#include "exec/mcp/mcp_transport.h"
#include "exec/tools/live_process.h"

namespace cairn::exec::mcp {

class StdioTransport final : public McpTransport {
 public:
  // `spec` is the process to start; `max_message_bytes` bounds one line read from it (a longer one
  // is dropped and logged).
  StdioTransport(ProcessSpec spec, size_t max_message_bytes);
  ~StdioTransport() override;

  Status Open(OnMessage on_message, OnClosed on_closed) override;
  Status Send(const boost::json::value& message, std::chrono::milliseconds timeout,
              const std::atomic<bool>* cancel) override;
  void Close() override;
  std::string Diagnostics() const override;

 private:
  void ReadLoop(OnMessage on_message, OnClosed on_closed);

  ProcessSpec spec_;
  size_t max_message_bytes_;
  std::unique_ptr<LiveProcess> process_;
  std::thread reader_;
  std::atomic<bool> closing_{false};
};

}  // namespace cairn::exec::mcp
