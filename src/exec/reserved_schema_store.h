// ReservedSchemaStore: a Store decorator that refuses invalid records of the reserved schemas
// before they are written (kValidation -> 422 naming the field), so a definition that could not
// run never reaches an executor:
//   tool.v1          ParseToolDefinition + a known built-in; its path is tools/<name> (set when
//                    absent, so tool names are unique per tenant; any other path is refused); an
//                    http tool whose url has a literal host the outbound policy refuses (an IP in
//                    a refused range, localhost) is kInvalidArgument (400) naming
//                    --allow-private-network. Names are judged when the tool connects.
//                    An `env` naming a variable never passed to tools (CAIRN_*, provider keys)
//                    is kInvalidArgument (400), per limits.tool_env.
//   agent.def.v1     ParseAgentDefinition; its path is agents/<agent_id> (set when absent)
//   workflow.def.v1  ParseWorkflowDefinition; its path is workflows/<name> (set when absent)
//   workflow.request.v1  ValidateWorkflowRequest
// tool.v1, agent.def.v1 and workflow.def.v1 records are never written (created, changed or
// deleted) by an executor (actor agent:*, tool:* or workflow:*): a model's output must not be
// able to define a process tool.
// agent.execution.v1, agent.snapshot.v1, agent.session.v1, agent.session.message.v1 and
// workflow.step.v1 records are written only by cairn's own writers (WriteContext::system): a
// client cannot forge a run's record or snapshot, or a session's state (they go through the
// sessions API).
// The lineage fields of tool.request.v1, workflow.request.v1 and user.message.v1 (which make the
// run they cause a child of the writer's) are written only by executors.
//   tool.request.v1  ValidateToolRequest; and a request (tool or workflow) that no executor would
//                    ever answer is refused (kInvalidArgument -> 400): one written by the tool or
//                    workflow it asks for (whose executor ignores its own writes), or one whose
//                    trace is deeper than the executors' depth limit allows to answer
//   tool.response.v1 {request_id: string, status: success|error, ...}
// Updates are checked on the record they would produce. Everything else passes through.
//
// Answers (tool.response.v1, agent.response.v1, workflow.result.v1) are written only by cairn's executors, which hold
// the claim on the request they answer (WriteContext::system): anyone else's answer would be
// taken for the tool's, so it is refused with kConflict, reason "answer_not_claimed", and the
// request stays as it was. Built-in definitions (tool.v1 and agent.def.v1 records that cairn
// installed, created_by "system") are read-only: a change or delete is kConflict, reason
// "builtin_definition"; a copy under another name is how one customises one.
#pragma once

#include <memory>

#include "model/limits.h"
#include "net/outbound_policy.h"
#include "store/store.h"

namespace cairn::exec {

struct ReservedSchemaOptions {
  model::Limits limits;
  // The executors' trace depth limit: a request deeper than it is never answered, so it is refused.
  int64_t executor_max_depth = 16;
  // Judges http tool URLs at write; null is the default policy (net/outbound_policy.h).
  std::shared_ptr<const net::OutboundPolicy> outbound_policy;
};

class ReservedSchemaStore final : public store::Store {
 public:
  explicit ReservedSchemaStore(std::unique_ptr<store::Store> inner, ReservedSchemaOptions options = {});

  Result<store::CreateResult> Create(const model::WriteContext& ctx, const model::BreadcrumbDraft& draft,
                                     const std::string& idempotency_key) override;
  void CreateAsync(const model::WriteContext& ctx, model::BreadcrumbDraft draft, std::string idempotency_key,
                   CreateDone done) override;
  Result<model::Breadcrumb> Get(const std::string& owner_id, const std::string& id) override;
  Result<std::shared_ptr<const model::Breadcrumb>> GetShared(const std::string& owner_id, const std::string& id) override;
  Result<model::Breadcrumb> Update(const model::WriteContext& ctx, const std::string& id,
                                   const model::BreadcrumbPatch& patch, std::optional<int64_t> expected_version) override;
  Status Delete(const model::WriteContext& ctx, const std::string& id, std::optional<int64_t> expected_version) override;
  Result<std::vector<store::WriteOutcome>> Apply(const model::WriteContext& ctx,
                                                 const std::vector<store::WriteOp>& ops) override;
  Result<store::Page> List(const std::string& owner_id, const model::BreadcrumbQuery& query) override;
  Result<std::vector<model::BreadcrumbVersion>> History(const std::string& owner_id, const std::string& id) override;
  Result<int64_t> SweepExpired() override;
  Result<store::StoreStats> Stats() override;
  void Close() override;

 private:
  // Executors (actors agent:* and tool:*) may not change tool.v1 or agent.def.v1 records, and
  // only system writes change the records of runs and sessions.
  // `deleting`: the write deletes `id` (an unreadable record may still be deleted).
  Status CheckExecutorPatch(const model::WriteContext& ctx, const std::string& id, const model::BreadcrumbPatch& patch,
                            bool deleting = false);
  // Checks (and for tool.v1 completes) a draft written by `ctx`.
  Status CheckDraft(const model::WriteContext& ctx, model::BreadcrumbDraft& draft);
  // Checks the record `patch` would make of `id`; may add the tool path to the patch.
  Status CheckPatch(const std::string& owner_id, const std::string& id, model::BreadcrumbPatch& patch);

  std::unique_ptr<store::Store> inner_;
  model::Limits limits_;
  ReservedSchemaOptions options_;  // outbound_policy never null
};

// Validation of one reserved schema's context; Ok for schemas that are not reserved. For
// tool.v1, `path` is checked/filled and the url checked against `outbound_policy` as described above.
Status ValidateReservedRecord(const std::optional<std::string>& schema_name, const boost::json::value& context,
                              std::optional<std::string>& path, const model::Limits& limits,
                              const net::OutboundPolicy& outbound_policy);

}  // namespace cairn::exec
