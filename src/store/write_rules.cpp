#include "store/write_rules.h"

#include <boost/json/serialize.hpp>
#include <utility>

#include "base/json_util.h"
#include "store/record_rows.h"

namespace cairn::store {
namespace json = boost::json;
namespace {

// A stable digest of everything a create request asked for, to tell a retry of the same request
// from a different request reusing an Idempotency-Key.
std::string DraftFingerprint(const model::BreadcrumbDraft& d) {
  json::object o;
  o["schema_name"] = d.schema_name ? json::value(*d.schema_name) : json::value(nullptr);
  o["title"] = d.title;
  o["description"] = d.description ? json::value(*d.description) : json::value(nullptr);
  json::array tags;
  for (const auto& tag : d.tags) tags.emplace_back(tag);
  o["tags"] = std::move(tags);
  o["context"] = d.context;
  o["path"] = d.path ? json::value(*d.path) : json::value(nullptr);
  o["llm_hints"] = d.llm_hints;
  o["visibility"] = d.visibility;
  o["sensitivity"] = d.sensitivity;
  o["acl"] = model::AclJson(d.acl);
  o["ttl"] = d.ttl_micros ? json::value(*d.ttl_micros) : json::value(nullptr);
  if (d.trace) o["trace"] = json::object{{"t", d.trace->trace_id}, {"c", d.trace->caused_by}, {"d", d.trace->depth}};
  return Sha256Checksum(CanonicalJson(o));
}

}  // namespace

Result<PreparedWrite> PreparedWrite::ForCreate(const model::BreadcrumbDraft& draft, const std::string& idempotency_key) {
  CAIRN_RETURN_IF_ERROR(CheckFiniteNumbers(draft.context, "context"));
  CAIRN_RETURN_IF_ERROR(CheckFiniteNumbers(draft.llm_hints, "llm_hints"));
  PreparedWrite p;
  if (!idempotency_key.empty()) p.fingerprint = DraftFingerprint(draft);
  p.context_json = json::serialize(draft.context);
  p.checksum = Sha256Checksum(CanonicalJson(draft.context));
  p.record_context = draft.context;
  p.event_context = ReadBackContext(draft.context);
  return p;
}

Result<PreparedWrite> PreparedWrite::ForUpdate(const model::BreadcrumbPatch& patch) {
  if (patch.context.set) CAIRN_RETURN_IF_ERROR(CheckFiniteNumbers(patch.context.value, "context"));
  if (patch.llm_hints.set) CAIRN_RETURN_IF_ERROR(CheckFiniteNumbers(patch.llm_hints.value, "llm_hints"));
  PreparedWrite p;
  if (patch.context.set) {
    p.context_json = json::serialize(patch.context.value);
    p.checksum = Sha256Checksum(CanonicalJson(patch.context.value));
  }
  return p;
}

Result<std::shared_ptr<QueuedCreate>> QueuedCreate::Make(const model::WriteContext& ctx, model::BreadcrumbDraft draft,
                                                         std::string idempotency_key) {
  CAIRN_ASSIGN_OR_RETURN(PreparedWrite prepared, PreparedWrite::ForCreate(draft, idempotency_key));
  auto queued = std::make_shared<QueuedCreate>();
  queued->ctx = ctx;
  queued->draft = std::move(draft);
  queued->idempotency_key = std::move(idempotency_key);
  queued->prepared = std::move(prepared);
  return queued;
}

model::Breadcrumb NewRecord(const model::WriteContext& ctx, const model::BreadcrumbDraft& draft,
                            const PreparedWrite& prepared, std::string id, int64_t now) {
  model::Breadcrumb c;
  c.id = std::move(id);
  c.owner_id = ctx.owner_id;
  c.schema_name = draft.schema_name;
  c.title = draft.title;
  c.description = draft.description;
  c.tags = draft.tags;
  if (prepared.record_context) {
    c.context = std::move(*prepared.record_context);
    prepared.record_context.reset();
  } else {
    c.context = draft.context;
  }
  c.path = draft.path;
  c.llm_hints = draft.llm_hints;
  c.version = 1;
  c.visibility = draft.visibility;
  c.sensitivity = draft.sensitivity;
  c.acl = draft.acl;
  c.ttl_micros = draft.ttl_micros;
  c.created_by = c.updated_by = ctx.actor;
  c.trace = draft.trace.value_or(model::Trace{});
  if (c.trace.trace_id.empty()) c.trace.trace_id = c.id;
  c.created_at = c.updated_at = now;
  c.checksum = prepared.checksum;
  c.size_bytes = static_cast<int64_t>(prepared.context_json ? prepared.context_json->size() : 0);
  return c;
}

model::Breadcrumb PatchedRecord(const model::Breadcrumb& current, const model::BreadcrumbPatch& patch,
                                const PreparedWrite& prepared, const model::WriteContext& ctx, int64_t now) {
  model::Breadcrumb updated = current;
  if (patch.schema_name.set) updated.schema_name = patch.schema_name.value;
  if (patch.title.set) updated.title = patch.title.value;
  if (patch.description.set) updated.description = patch.description.value;
  if (patch.tags.set) updated.tags = patch.tags.value;
  if (patch.context.set) updated.context = patch.context.value;
  if (patch.path.set) updated.path = patch.path.value;
  if (patch.llm_hints.set) updated.llm_hints = patch.llm_hints.value;
  if (patch.visibility.set) updated.visibility = patch.visibility.value;
  if (patch.sensitivity.set) updated.sensitivity = patch.sensitivity.value;
  if (patch.acl.set) updated.acl = patch.acl.value;
  if (patch.ttl_micros.set) updated.ttl_micros = patch.ttl_micros.value;
  updated.version = current.version + 1;
  updated.updated_by = ctx.actor;
  updated.updated_at = now;
  // An unchanged context keeps its checksum and size; a new one was sealed before the write.
  if (prepared.context_json) {
    updated.checksum = prepared.checksum;
    updated.size_bytes = static_cast<int64_t>(prepared.context_json->size());
  }
  return updated;
}

Status CheckWriteAccess(const model::WriteContext& ctx, const model::Breadcrumb& current, bool changes_access) {
  if (!ctx.access) return Status::Ok();
  return model::CheckWrite(*ctx.access, {current.id, current.visibility, current.created_by, current.acl}, changes_access);
}

Status CheckExpectedVersion(int64_t current, std::optional<int64_t> expected) {
  if (!expected || *expected == current) return Status::Ok();
  return Status::FailedPrecondition("version is " + std::to_string(current) + ", If-Match expected " +
                                    std::to_string(*expected));
}

Result<CreateResult> ReplayedCreate(std::string_view stored_fingerprint, const PreparedWrite& prepared,
                                    const std::string& earlier_id,
                                    const std::function<Result<model::Breadcrumb>()>& load_earlier) {
  if (stored_fingerprint != prepared.fingerprint) {
    return Status::Conflict("Idempotency-Key was already used with a different request");
  }
  auto earlier = load_earlier();
  if (!earlier.ok()) {
    return Status::Conflict("Idempotency-Key was used for breadcrumb " + earlier_id + ", which no longer exists");
  }
  return CreateResult{std::move(earlier).value(), true};
}

namespace {
std::string BatchPrefix(size_t index) { return "write " + std::to_string(index) + " of the batch: "; }
}  // namespace

Result<std::vector<PreparedWrite>> PrepareBatch(const std::vector<WriteOp>& ops) {
  if (ops.empty()) return Status::InvalidArgument("a batch needs at least one write");
  std::vector<PreparedWrite> prepared;
  prepared.reserve(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    const WriteOp& op = ops[i];
    Result<PreparedWrite> one = op.kind == WriteOp::Kind::kCreate   ? PreparedWrite::ForCreate(op.draft, op.idempotency_key)
                                : op.kind == WriteOp::Kind::kUpdate ? PreparedWrite::ForUpdate(op.patch)
                                                                    : Result<PreparedWrite>(PreparedWrite{});
    if (!one.ok()) return one.status().Prefixed(BatchPrefix(i));
    prepared.push_back(std::move(one).value());
  }
  return prepared;
}

Status RunBatch(const std::vector<WriteOp>& ops, const std::vector<PreparedWrite>& prepared, const WriteOpSteps& steps,
                std::vector<WriteOutcome>* outcomes) {
  outcomes->clear();
  for (size_t i = 0; i < ops.size(); ++i) {
    const WriteOp& op = ops[i];
    Result<WriteOutcome> done = [&]() -> Result<WriteOutcome> {
      switch (op.kind) {
        case WriteOp::Kind::kCreate: {
          CAIRN_ASSIGN_OR_RETURN(CreateResult created, steps.create(op, prepared[i]));
          return WriteOutcome{std::move(created.breadcrumb), created.replayed};
        }
        case WriteOp::Kind::kUpdate: {
          CAIRN_ASSIGN_OR_RETURN(model::Breadcrumb updated, steps.update(op, prepared[i]));
          return WriteOutcome{std::move(updated), false};
        }
        case WriteOp::Kind::kDelete: {
          CAIRN_ASSIGN_OR_RETURN(model::Breadcrumb deleted, steps.remove(op));
          return WriteOutcome{std::move(deleted), false};
        }
      }
      return Status::Internal("unknown write kind");
    }();
    if (!done.ok()) return done.status().Prefixed(BatchPrefix(i));
    outcomes->push_back(std::move(done).value());
  }
  return Status::Ok();
}

}  // namespace cairn::store
