// ReservedSchemaStore: a Store decorator that refuses invalid records of the reserved schemas
// before they are written (kValidation -> 422 naming the field), so a definition that could not
// run never reaches an executor:
//   tool.v1          ParseToolDefinition + a known built-in; its path is tools/<name> (set when
//                    absent, so tool names are unique per tenant; any other path is refused).
//                    An `env` naming a variable never passed to tools (CAIRN_*, provider keys)
//                    is kInvalidArgument (400), per limits.tool_env.
//   agent.def.v1     ParseAgentDefinition; its path is agents/<agent_id> (set when absent)
// tool.v1 and agent.def.v1 records are never written (created, changed or deleted) by an
// executor (actor agent:* or tool:*): a model's output must not be able to define a process tool.
// agent.execution.v1, agent.snapshot.v1, agent.session.v1 and agent.session.message.v1 records
// are written only by cairn's own writers (WriteContext::system): a client cannot forge a run's
// record or snapshot, or a session's state (they go through the sessions API).
//   tool.request.v1  ValidateToolRequest
//   tool.response.v1 {request_id: string, status: success|error, ...}
// Updates are checked on the record they would produce. Everything else passes through.
#pragma once

#include <memory>

#include "model/limits.h"
#include "store/store.h"

namespace cairn::exec {

class ReservedSchemaStore final : public store::Store {
 public:
  ReservedSchemaStore(std::unique_ptr<store::Store> inner, model::Limits limits);

  Result<store::CreateResult> Create(const model::WriteContext& ctx, const model::BreadcrumbDraft& draft,
                                     const std::string& idempotency_key) override;
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
  Status CheckExecutorPatch(const model::WriteContext& ctx, const std::string& id, const model::BreadcrumbPatch& patch);
  // Checks (and for tool.v1 completes) a draft.
  Status CheckDraft(model::BreadcrumbDraft& draft);
  // Checks the record `patch` would make of `id`; may add the tool path to the patch.
  Status CheckPatch(const std::string& owner_id, const std::string& id, model::BreadcrumbPatch& patch);

  std::unique_ptr<store::Store> inner_;
  model::Limits limits_;
};

// Validation of one reserved schema's context; Ok for schemas that are not reserved. For
// tool.v1, `path` is checked/filled as described above.
Status ValidateReservedRecord(const std::optional<std::string>& schema_name, const boost::json::value& context,
                              std::optional<std::string>& path, const model::Limits& limits);

}  // namespace cairn::exec
