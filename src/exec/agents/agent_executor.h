// AgentExecutor: the execute step of an agent.def.v1 definition — an LLM loop with tools
// (DESIGN.md §5, docs/agents.md). The ExecutorHost runs it like every executor (claim, guards,
// context, one final write of the response and the execution record).
//
// One run:
//   prompt (prompt.h) -> call the model -> for its tool calls, write tool.request.v1 records
//   (requested_by = the agent, request_id derived from execution, step and call) -> wait for their
//   tool.response.v1 answers (exec/response_waiter.h) -> tool messages -> call the model again,
//   until a final answer, max_iterations, the token budget, or the same call with the same
//   arguments asked 3 times (then the answer says why). Tool errors, unknown tools and arguments
//   that are not JSON go back to the model as tool messages; they do not fail the run.
//
// Durable: after each model reply (in the same transaction as the tool requests it causes) and
// after each tool answer it writes an agent.snapshot.v1 (AgentState) tagged execution:<id>. A run
// that starts again after a crash (same trigger, same execution path, so the same execution id)
// continues from its newest snapshot: a recorded reply is never requested again, a written
// request never written again (its answer is awaited or read from the store).
//
// Streaming: each content delta is published as an ephemeral `agent.token` event (not stored).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "bus/ephemeral_hub.h"
#include "bus/event_bus.h"
#include "exec/context_assembler.h"
#include "exec/executor.h"
#include "exec/llm/llm_provider.h"
#include "exec/run_registry.h"
#include "exec/token_quota.h"
#include "model/agent_definition.h"
#include "model/secret_ref.h"
#include "search/searcher.h"
#include "store/store.h"

namespace cairn::exec {

// Where a model name goes: the provider and the model as that endpoint knows it.
struct ModelTarget {
  llm::LlmProvider* provider = nullptr;
  std::string provider_name;
  std::string model;
  std::string api_key_secret = {};  // the provider takes its key from this secret of the caller's tenant
};
// Resolves an agent's `model` (docs/agents.md "Providers"); kFailedPrecondition with a message
// saying how to configure a provider when there is none. `own_key`: the agent brings its own key
// (its api_key), so the provider needs none configured.
using ModelResolver = std::function<Result<ModelTarget>(const std::string& model, bool own_key)>;

struct AgentDeps {
  store::Store& store;
  bus::EventBus& bus;
  bus::EphemeralHub* tokens;  // may be null: no token events
  ModelResolver resolve_model;
  const search::Searcher* searcher = nullptr;  // for fetch: search|vector subscriptions; may be null
  // The runs in flight (the runtime's registry): a delegating run cancels the sub-agents it gives
  // up on (a timed-out task, its own failure). May be null: then they are not cancelled.
  RunRegistry* runs = nullptr;
  // The session worker's runs read what the principal that posted the message may read (as the
  // host's runs, HostOptions::reader_for); null: everything.
  ReaderFor reader_for = nullptr;
  // Provider keys kept as secrets (an agent's api_key, a provider's api_key_secret), read in the
  // run's tenant before each model call; null: such an agent fails with secret_not_found.
  model::SecretResolver resolve_secret = {};
  // The tenants' daily token quotas (exec/token_quota.h); null: no quota.
  TokenQuota* quota = nullptr;
};

class AgentExecutor final : public Executor {
 public:
  AgentExecutor(model::AgentDefinition definition, AgentDeps deps);
  RunResult Run(const RunRequest& request) override;
  bool MayPause() const override { return true; }  // a sub-agent waiting for its user
  RunResult Refuse(const RunRequest& request, const std::string& code, const std::string& message) override;

  const model::AgentDefinition& definition() const { return definition_; }

 private:
  model::AgentDefinition definition_;
  AgentDeps deps_;
};

}  // namespace cairn::exec
