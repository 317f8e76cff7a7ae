// What every backend does the same way around a write: the work done before a write is queued
// (checks, serialisation, checksums), the new or patched record a write stores, and the checks
// a write makes against the record as it is in the write's transaction. The SQL stays with each
// backend.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <boost/json/value.hpp>

#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "model/breadcrumb.h"
#include "store/store.h"

namespace cairn::store {

// What a create or update can compute before it is queued, so the backend's writer does not:
// the new context serialised and checksummed, the idempotency fingerprint.
struct PreparedWrite {
  std::string fingerprint;                  // creates with an idempotency key
  std::optional<std::string> context_json;  // the new context, when the write sets one
  std::string checksum;                     // of the new context
  // A create's copies of its context for the record and for its event (as read back), made
  // before the write so that the writer moves them instead of copying; taken (reset) by the
  // write that uses them.
  mutable std::optional<boost::json::value> record_context;
  mutable std::optional<boost::json::value> event_context;

  // Refuse (kInvalidArgument) JSON the store could not read back: a non-finite number.
  static Result<PreparedWrite> ForCreate(const model::BreadcrumbDraft& draft, const std::string& idempotency_key);
  static Result<PreparedWrite> ForUpdate(const model::BreadcrumbPatch& patch);
};

// A create queued without waiting for it (Store::CreateAsync): what its write needs, shared by
// the write on the writer thread and its completion.
struct QueuedCreate {
  model::WriteContext ctx;
  model::BreadcrumbDraft draft;
  std::string idempotency_key;
  PreparedWrite prepared;
  CreateResult result;       // set by the write
  int64_t record_delta = 0;  // records the write added (a backend that counts them)

  // Prepares `draft` (PreparedWrite::ForCreate), or says why it is refused.
  static Result<std::shared_ptr<QueuedCreate>> Make(const model::WriteContext& ctx, model::BreadcrumbDraft draft,
                                                    std::string idempotency_key);
};

// The record a create stores (version 1) under `id`, by ctx.actor at `now`; takes the prepared
// context copy when there is one.
model::Breadcrumb NewRecord(const model::WriteContext& ctx, const model::BreadcrumbDraft& draft,
                            const PreparedWrite& prepared, std::string id, int64_t now);

// `current` with `patch` applied: the next version, by ctx.actor at `now`, with the prepared
// checksum and size of a new context.
model::Breadcrumb PatchedRecord(const model::Breadcrumb& current, const model::BreadcrumbPatch& patch,
                                const PreparedWrite& prepared, const model::WriteContext& ctx, int64_t now);

// The writer's access rules (model/access.h), checked against the record as it is in the write's
// transaction: kNotFound when it may not read it, kPermissionDenied naming the rule.
Status CheckWriteAccess(const model::WriteContext& ctx, const model::Breadcrumb& current, bool changes_access);

// kFailedPrecondition when If-Match named another version than `current`.
Status CheckExpectedVersion(int64_t current, std::optional<int64_t> expected);

// A create whose idempotency key was used before: the request's fingerprint must be the one stored
// with the key (else kConflict), and `load_earlier` must find the record that use made (else
// kConflict: it no longer exists). Returns that record, replayed.
Result<CreateResult> ReplayedCreate(std::string_view stored_fingerprint, const PreparedWrite& prepared,
                                    const std::string& earlier_id,
                                    const std::function<Result<model::Breadcrumb>()>& load_earlier);

// Store::Apply, around the backend's transaction: every op prepared before the write is queued
// (kInvalidArgument for an empty batch; an op's error prefixed "write <i> of the batch: ").
Result<std::vector<PreparedWrite>> PrepareBatch(const std::vector<WriteOp>& ops);

// The body of one op, run by the backend inside its write transaction.
struct WriteOpSteps {
  std::function<Result<CreateResult>(const WriteOp&, const PreparedWrite&)> create;
  std::function<Result<model::Breadcrumb>(const WriteOp&, const PreparedWrite&)> update;
  std::function<Result<model::Breadcrumb>(const WriteOp&)> remove;
};

// Runs `ops` in order through `steps`, one outcome each into `*outcomes` (cleared first): the first
// failure ends it, prefixed "write <i> of the batch: ".
Status RunBatch(const std::vector<WriteOp>& ops, const std::vector<PreparedWrite>& prepared, const WriteOpSteps& steps,
                std::vector<WriteOutcome>* outcomes);

// The actor of the TTL sweep's deletions.
inline constexpr const char* kTtlActor = "system:ttl";

}  // namespace cairn::store
