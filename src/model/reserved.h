// Reserved names: the schema names of the breadcrumbs cairn itself defines, writes or reads, and
// the default tenant. Every module names them through these constants, never as literals.
//
// The schemas of runs and sessions (execution, session, session message, snapshot) are written by
// cairn alone (exec/reserved_schema_store.h refuses them from clients); the others are written by
// clients too (definitions, tool requests, user messages). Changing a value is a data migration.
#pragma once

#include <string_view>

namespace cairn::model {

// Definitions (DESIGN.md §5): a tool and an agent.
inline constexpr std::string_view kToolSchema = "tool.v1";
inline constexpr std::string_view kAgentSchema = "agent.def.v1";

// The tool protocol: a request a tool answers exactly once, and its answer.
inline constexpr std::string_view kToolRequestSchema = "tool.request.v1";
inline constexpr std::string_view kToolResponseSchema = "tool.response.v1";

// Workflows (docs/workflows.md): a definition, a request to run one (answered exactly once, like
// a tool request), its result, and the durable record of each step of a run.
inline constexpr std::string_view kWorkflowSchema = "workflow.def.v1";
inline constexpr std::string_view kWorkflowRequestSchema = "workflow.request.v1";
inline constexpr std::string_view kWorkflowResultSchema = "workflow.result.v1";
inline constexpr std::string_view kWorkflowStepSchema = "workflow.step.v1";

// Agents: what a user says to one, what it answers, and its snapshots after every step.
inline constexpr std::string_view kUserMessageSchema = "user.message.v1";
inline constexpr std::string_view kAgentResponseSchema = "agent.response.v1";
inline constexpr std::string_view kAgentSnapshotSchema = "agent.snapshot.v1";
// A task an agent handed to a sub-agent (docs/agents.md "Sub-agents"), at executions/<parent>/tasks/<id>.
inline constexpr std::string_view kAgentTaskSchema = "agent.task.v1";

// Runs and sessions (docs/sessions.md): the record of every run, a session and its messages.
inline constexpr std::string_view kExecutionSchema = "agent.execution.v1";
inline constexpr std::string_view kSessionSchema = "agent.session.v1";
inline constexpr std::string_view kSessionMessageSchema = "agent.session.message.v1";

// An MCP server cairn connects to (exec/mcp, docs/mcp.md), at mcp/<name>.
inline constexpr std::string_view kMcpServerSchema = "mcp.server.v1";

// The owner of cairn's own records (tenants, API keys, secrets): not a valid tenant id, so no
// client reads or writes them, and nothing of theirs is embedded or sent to an outside service.
inline constexpr std::string_view kSystemOwner = "_system";
// Auth (src/auth): a tenant, an API key (its hash) and a sealed secret, all owned by kSystemOwner.
inline constexpr std::string_view kAuthTenantSchema = "auth.tenant.v1";
inline constexpr std::string_view kAuthKeySchema = "auth.key.v1";
inline constexpr std::string_view kAuthSecretSchema = "auth.secret.v1";

// A stored event selector (POST /selectors).
inline constexpr std::string_view kStoredSelectorSchema = "subscription.selector.v1";

// The store's report of a row it could not decode.
inline constexpr std::string_view kSystemErrorSchema = "system.error.v1";

// Whether `schema` is one of the names above (the definitions, requests, answers and records of
// runs and sessions cairn itself writes or reads).
inline bool IsReservedSchema(std::string_view schema) {
  for (std::string_view name :
       {kToolSchema, kAgentSchema, kWorkflowSchema, kToolRequestSchema, kToolResponseSchema, kWorkflowRequestSchema,
        kWorkflowResultSchema, kWorkflowStepSchema, kUserMessageSchema, kAgentResponseSchema, kAgentSnapshotSchema, kAgentTaskSchema,
        kExecutionSchema, kSessionSchema, kSessionMessageSchema, kStoredSelectorSchema, kSystemErrorSchema,
        kMcpServerSchema, kAuthTenantSchema, kAuthKeySchema, kAuthSecretSchema}) {
    if (schema == name) return true;
  }
  return false;
}

// The tenant of every request today (there is no authentication yet), and of cairn's own writes.
// An array, not a string_view, so that it initialises and compares with std::string directly.
inline constexpr char kDefaultTenant[] = "default";

}  // namespace cairn::model
