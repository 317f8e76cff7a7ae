// ToolExecutor: the Executor of a tool.v1 definition (docs/executors.md, "Requests and
// responses").
//
// Input: for a tool.request.v1 trigger, context.input (default {}); for any other trigger (a
// tool with its own selectors), the trigger's whole context. request_id: context.request_id,
// else the trigger's id. The input is validated against input_schema first; a violation is
// answered with error code "invalid_input" naming the field, and the tool does not run.
//
// Response: a tool.response.v1 breadcrumb {request_id, tool, status: success|error,
// output | error {code, message}, duration_ms}, tagged tool:response, request:<request_id>,
// tool:<name>. An error answer marks the execution failed.
#pragma once

#include <memory>

#include "exec/executor.h"
#include "exec/tools/tool.h"
#include "model/tool_definition.h"

namespace cairn::exec {

class ToolExecutor final : public Executor {
 public:
  ToolExecutor(model::ToolDefinition definition, std::unique_ptr<Tool> tool);

  RunResult Run(const RunRequest& request) override;
  RunResult Refuse(const RunRequest& request, const std::string& code, const std::string& message) override;

 private:
  model::ToolDefinition definition_;
  std::unique_ptr<Tool> tool_;
};

// The tool.response.v1 for `request_id`: success with `outcome`'s value, or error with
// {code, message} from its status (`error_code` overrides the code when not empty).
RunResult ToolResponse(const std::string& tool, const std::string& request_id, const Result<boost::json::value>& outcome,
                       int64_t duration_ms, const std::string& error_code = "");

// The request_id a trigger is answered under: tool.request.v1's context.request_id, else its id.
std::string RequestIdOf(const model::Event& trigger);

}  // namespace cairn::exec
