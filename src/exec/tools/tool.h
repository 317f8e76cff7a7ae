// Tool: the execute step of a tool.v1 definition — built-in C++ code, a subprocess or an HTTP
// endpoint (docs/executors.md). The ToolExecutor around it validates the input, builds the
// tool.response.v1 and is run by the ExecutorHost like every executor.
#pragma once

#include <atomic>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <string>

#include "base/status.h"
#include "exec/executor.h"
#include "model/event.h"

namespace cairn::exec {

struct ToolCall {
  const boost::json::value& input;      // validated against the definition's input_schema
  const boost::json::object& context;   // the assembled context {trigger, <key>: ...}
  const model::Event& trigger;          // the triggering event (seq, owner, trace)
  const std::string& caller;            // who asked: requested_by, else the trigger's writer
  const std::atomic<bool>& cancelled;   // timeout or shutdown: return soon
  std::chrono::milliseconds timeout;    // the run's whole budget
  // The run's agent.execution.v1 id and lineage (empty when a tool is called outside a run), so
  // a tool reporting progress can name the run; `steps` (may be null) counts the steps it
  // reports (MCP progress), which the run records as its step_count.
  std::string execution_id = {};
  Lineage lineage = {};
  std::atomic<int64_t>* steps = nullptr;
};

class Tool {
 public:
  virtual ~Tool() = default;
  // The output (any JSON), or an error; a failed Status becomes the response's
  // error {code: StatusCodeName, message}.
  virtual Result<boost::json::value> Invoke(const ToolCall& call) = 0;
};

// The MCP client (exec/mcp) as the tools see it: a tool.v1 of runtime "mcp" calls tool `tool` of
// the connected server `server` through it. Thread-safe.
class McpToolCaller {
 public:
  virtual ~McpToolCaller() = default;
  // The output (content mapped to JSON, docs/mcp.md), or an error: kUnavailable when the server is
  // not connected or the call timed out, kInternal for a result with isError.
  virtual Result<boost::json::value> CallTool(const std::string& server, const std::string& tool, const ToolCall& call) = 0;
};

}  // namespace cairn::exec
