// AgentSupervisor: keeps one AgentExecutor per agent.def.v1 definition running (the lifecycle
// is definition_supervisor.h's: create starts, update reloads, delete retires, each in the
// executor's own event order) and installs the default agent at the first start.
//
// The default agent, `default-chat-assistant` (docs/agents.md), triggers on user.message.v1
// addressed to it or to no agent in particular, keeps the last 20 messages of the same session
// as `history`, and may call the built-in tools that only read (echo, sleep, breadcrumb_get,
// breadcrumb_query, wait_for) and, in sessions, user_input. It is written once per tenant, at the first start with `default_agent` on (a
// marker of the tenant in the CursorStore) or when the tenant is created (InstallDefaultAgent); the
// user may change or delete it afterwards.
#pragma once

#include <memory>

#include "exec/agents/agent_executor.h"
#include "exec/definition_supervisor.h"
#include "model/limits.h"
#include "store/cursor_store.h"

namespace cairn::exec {

inline constexpr std::string_view kDefaultAgentId = "default-chat-assistant";

// The context of the default agent's agent.def.v1 record.
boost::json::object DefaultAgentDefinition();

class AgentSupervisor {
 public:
  // Everything passed in must outlive the supervisor.
  AgentSupervisor(store::CursorStore& cursors, ExecutorHost& host, AgentDeps deps, model::Limits limits);
  ~AgentSupervisor();  // Stop()s
  AgentSupervisor(const AgentSupervisor&) = delete;
  AgentSupervisor& operator=(const AgentSupervisor&) = delete;

  // Runs the agents of every tenant in `tenants` (and those written later, in any tenant).
  Status Start(bool run_executors, bool default_agent, const std::vector<std::string>& tenants);
  void Stop();
  // Writes the default agent into `tenant` unless it was written there before (its marker).
  Status InstallDefaultAgent(const std::string& tenant);

 private:

  store::CursorStore& cursors_;
  ExecutorHost& host_;
  AgentDeps deps_;
  model::Limits limits_;
  std::unique_ptr<DefinitionSupervisor> definitions_;
};

}  // namespace cairn::exec
