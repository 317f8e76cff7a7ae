// AgentDefinition: the context of an `agent.def.v1` breadcrumb (docs/agents.md), parsed and checked.
//
// {
//   "agent_id": "support-bot",            // [A-Za-z0-9_-]{1,64}; the record lives at agents/<agent_id>
//   "description": "...",
//   "model": "openrouter/google/gemini-2.0-flash-exp:free",  // "provider/model", a bare model
//                                          // name on the default provider, or absent: its default
//   "api_key": {"secret": "OPENAI_KEY"},   // the key for the model's provider: a secret of the
//                                          // agent's tenant, read at each call (docs/secrets.md);
//                                          // absent: the provider's own (api_key_env / api_key_secret)
//   "temperature": 0.2,                    // 0..2, optional
//   "system_prompt": "You are ...",
//   "subscriptions": {"selectors": [...]}, // subscription.h; default: trigger on user.message.v1
//                                          // whose context.agent_id is this agent
//   "tools": ["echo", "http_request"],     // tool.v1 names it may call; default none
//   "max_iterations": 10,                  // model calls per execution, 1..100
//   "max_tokens": 1024,                    // per model call (sent as max_tokens), optional
//   "max_tokens_per_execution": 100000,    // total tokens budget, 1..100,000,000
//   "stream": true,                        // false sends non-streaming requests
//   "output": {"schema_name": "ticket.triage.v1", "tags": ["triage"], "schema": {...}},
//   "timeout_ms": 300000,                  // a whole execution, 1..3,600,000
//   "tool_timeout_ms": 120000,             // waiting for one tool response, 1..3,600,000
//   "concurrency": 8,                      // executions at once, 1..64
//   "agents": ["researcher", "writer"],    // agents it may hand tasks to with the built-in
//                                          // `delegate` tool (docs/agents.md "Sub-agents"); default none
//   "max_delegation_depth": 3,             // deepest execution depth a delegated task may run at, 1..10
//   "max_children": 16,                    // delegated tasks per execution, 1..256
//   "context_budget_tokens": 4000          // bounds the assembled context (exec/context_budget.h),
//                                          // 1..10,000,000; absent: no bound
// }
// Unknown fields are refused, so a typo never goes unnoticed.
#pragma once

#include <boost/json/value.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "model/limits.h"
#include "model/reserved.h"
#include "model/subscription.h"

namespace cairn::model {

struct AgentOutput {
  std::string schema_name;        // the schema of the response breadcrumb
  std::vector<std::string> tags;  // added to its tags
  boost::json::value schema;      // JSON Schema (json_schema.h) the model's JSON answer must satisfy
};

struct AgentDefinition {
  std::string agent_id;
  std::string description;
  std::string model;  // as written; empty: the default provider's default model
  std::string api_key_secret = {};  // the secret holding the provider key; empty: the provider's own
  std::optional<double> temperature;
  std::string system_prompt;
  std::vector<Subscription> subscriptions;  // never empty after parsing
  std::vector<std::string> tools;
  int64_t max_iterations = 10;
  std::optional<int64_t> max_tokens;
  int64_t max_tokens_per_execution = 100000;
  bool stream = true;
  std::optional<AgentOutput> output;
  int64_t timeout_ms = 300000;
  int64_t tool_timeout_ms = 120000;
  int64_t concurrency = 8;
  std::vector<std::string> agents;  // agent ids `delegate` may name
  int64_t max_delegation_depth = 3;
  int64_t max_children = 16;
  std::optional<int64_t> context_budget_tokens;  // absent: the context is not bounded
  // Whether records of sensitivity `secret` may enter its prompts (model/access.h); default no.
  bool allow_secret_context = false;
};

// Parses and checks an agent.def.v1 context; errors name the field as "context.<field>".
Result<AgentDefinition> ParseAgentDefinition(const boost::json::value& context, const Limits& limits);

// The path every agent.def.v1 record has: "agents/<agent_id>" (so ids are unique per tenant).
std::string AgentPath(const std::string& agent_id);

}  // namespace cairn::model
