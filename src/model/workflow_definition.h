// WorkflowDefinition: the context of a `workflow.def.v1` breadcrumb (docs/workflows.md), parsed
// and checked. A workflow is the third kind of executor: its run executes steps — tools, agents,
// other workflows — as child executions, in the order their `needs` give, in parallel where they
// allow.
//
// {
//   "name": "triage",                       // [A-Za-z0-9_-]{1,64}; the record lives at workflows/<name>
//   "description": "...",
//   "input_schema": {...},                  // JSON Schema (json_schema.h) the run's input must satisfy
//   "steps": [{
//     "id": "fetch",                        // [A-Za-z_][A-Za-z0-9_]{0,63}: steps.<id> in expressions
//     "tool": "http_request" | "agent": "summariser" | "workflow": "other",   // exactly one
//     "input": {"url": "${{ input.url }}"}, // JSON; strings may hold ${{ CEL }} templates
//     "needs": ["earlier"],                 // step ids that must end first
//     "when": "steps.earlier.output.ok",    // CEL bool; false: the step is skipped
//     "for_each": "input.urls",             // CEL list; the step runs once per item (item, index)
//     "concurrency": 4,                     // items at once, 1..32
//     "retry": {"max_attempts": 3, "backoff_ms": 1000, "max_backoff_ms": 30000},
//     "timeout_ms": 300000,                 // one attempt, 1..3,600,000
//     "on_error": "fail" | "continue"
//   }],
//   "output": {"summary": "${{ steps.sum.output }}"},  // default: the outputs of the last steps
//   "subscriptions": {"selectors": [...]},  // triggers besides workflow.request.v1, and context
//   "concurrency": 4,                       // runs at once, 1..64
//   "timeout_ms": 3600000                   // a whole run, 1..86,400,000
// }
// Steps are kept in an order where each follows its needs; a cycle, an unknown or repeated id is
// refused. Unknown fields are refused, so a typo never goes unnoticed.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "model/limits.h"
#include "model/reserved.h"
#include "model/subscription.h"

namespace cairn::model {

enum class StepKind { kTool, kAgent, kWorkflow };
std::string_view StepKindName(StepKind kind);  // "tool", "agent", "workflow"

struct StepRetry {
  int64_t max_attempts = 1;
  int64_t backoff_ms = 1000;      // before the second attempt; doubled each time
  int64_t max_backoff_ms = 30000;
};

struct WorkflowStep {
  std::string id;
  size_t position = 0;               // its index in context.steps as written (for error fields)
  StepKind kind = StepKind::kTool;
  std::string target;                // the tool, agent or workflow name
  boost::json::value input;          // a template (null: the step gets an empty object)
  std::vector<std::string> needs;
  std::string when;                  // CEL; empty: always
  std::string for_each;              // CEL; empty: the step runs once
  int64_t concurrency = 4;
  StepRetry retry;
  int64_t timeout_ms = 300000;
  bool continue_on_error = false;    // on_error: continue
};

struct WorkflowDefinition {
  std::string name;
  std::string description;
  std::optional<boost::json::value> input_schema;
  std::vector<WorkflowStep> steps;   // each after the steps it needs
  boost::json::value output;         // a template; null: the outputs of the steps nothing needs
  std::vector<Subscription> subscriptions;  // never empty: the workflow.request.v1 trigger first
  int64_t concurrency = 4;
  int64_t timeout_ms = 3'600'000;
};

inline constexpr size_t kMaxWorkflowSteps = 100;
inline constexpr size_t kMaxExpressionBytes = 4096;

// "workflows/<name>".
std::string WorkflowPath(const std::string& name);

Result<WorkflowDefinition> ParseWorkflowDefinition(const boost::json::value& context, const Limits& limits);

// The trigger every workflow has: workflow.request.v1 records created for it ({"workflow": name}).
Subscription WorkflowRequestTrigger(const std::string& name);

// A template string split at its ${{ ... }} expressions, in order. A part is either literal text
// or an expression (trimmed). kValidation naming `field` for an unclosed or empty expression.
struct TemplatePart {
  bool expression = false;
  std::string text;
};
Result<std::vector<TemplatePart>> SplitTemplate(std::string_view text, const std::string& field);

// Checks a workflow.request.v1 context: {workflow, input?, request_id?, requested_by?, and the
// requester's lineage (exec/execution_record.h)}.
Status ValidateWorkflowRequest(const boost::json::value& context);

}  // namespace cairn::model
