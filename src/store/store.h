// Store: the durable home of breadcrumbs, their history and the event log.
//
// Contract shared by every backend (src/store/store_contract_test.cpp runs against each):
// - Every successful write commits the record change, its history row and exactly one event row
//   (`seq` strictly increasing, gap-free) in one transaction; a failed write changes nothing.
// - Reads never see expired records (ttl <= clock now), even before the sweep removes them.
// - All calls are scoped to `owner_id`; records of other owners are invisible (kNotFound).
// - Calls are thread-safe and blocking; writes from many threads are group-committed.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "model/breadcrumb.h"
#include "model/query.h"

namespace cairn::store {

struct CreateResult {
  model::Breadcrumb breadcrumb;
  bool replayed = false;  // true when an earlier create with the same idempotency key answered
};

struct Page {
  std::vector<model::Breadcrumb> items;
  std::optional<std::string> next_cursor;  // absent on the last page
};

// One write of a batch (Store::Apply). Build it with the factories.
struct WriteOp {
  enum class Kind { kCreate, kUpdate, kDelete };
  Kind kind = Kind::kCreate;
  model::BreadcrumbDraft draft;             // kCreate
  std::string idempotency_key;              // kCreate; empty: none
  std::string id;                           // kUpdate, kDelete
  model::BreadcrumbPatch patch;             // kUpdate
  std::optional<int64_t> expected_version;  // kUpdate, kDelete: If-Match

  static WriteOp Create(model::BreadcrumbDraft draft, std::string idempotency_key = "") {
    WriteOp op;
    op.draft = std::move(draft);
    op.idempotency_key = std::move(idempotency_key);
    return op;
  }
  static WriteOp Update(std::string id, model::BreadcrumbPatch patch, std::optional<int64_t> expected_version = {}) {
    WriteOp op;
    op.kind = Kind::kUpdate;
    op.id = std::move(id);
    op.patch = std::move(patch);
    op.expected_version = expected_version;
    return op;
  }
  static WriteOp Delete(std::string id, std::optional<int64_t> expected_version = {}) {
    WriteOp op;
    op.kind = Kind::kDelete;
    op.id = std::move(id);
    op.expected_version = expected_version;
    return op;
  }
};

// What one op of a batch wrote: the created or updated record, or the record as it was deleted.
struct WriteOutcome {
  model::Breadcrumb breadcrumb;
  bool replayed = false;  // a create answered by an earlier use of its idempotency key
};

struct StoreStats {
  int64_t records = 0;
  int64_t last_event_seq = 0;
};

class Store {
 public:
  virtual ~Store() = default;

  // Creates a breadcrumb. With a non-empty `idempotency_key`, a repeat of the same key and the
  // same draft returns the first result (replayed = true) and writes nothing; the same key with
  // a different draft is kConflict. A taken `path` is kConflict. Returns the stored record.
  virtual Result<CreateResult> Create(const model::WriteContext& ctx, const model::BreadcrumbDraft& draft,
                                      const std::string& idempotency_key) = 0;

  // Create() without waiting for the commit: `done` is called exactly once with what Create()
  // would have returned. A store with a writer thread calls it on that thread after the commit
  // (so `done` must only hand the result off: every other write waits meanwhile), or at once on
  // the caller's thread when the write is refused before it is queued. The default calls
  // Create(), so it blocks the caller.
  using CreateDone = std::function<void(Result<CreateResult>)>;
  virtual void CreateAsync(const model::WriteContext& ctx, model::BreadcrumbDraft draft, std::string idempotency_key,
                           CreateDone done) {
    done(Create(ctx, draft, idempotency_key));
  }

  virtual Result<model::Breadcrumb> Get(const std::string& owner_id, const std::string& id) = 0;

  // Get() for callers that only read the record: a cache can hand out the record it holds instead
  // of a copy. The default wraps Get().
  virtual Result<std::shared_ptr<const model::Breadcrumb>> GetShared(const std::string& owner_id,
                                                                     const std::string& id) {
    CAIRN_ASSIGN_OR_RETURN(model::Breadcrumb crumb, Get(owner_id, id));
    return std::make_shared<const model::Breadcrumb>(std::move(crumb));
  }

  // Applies `patch` and increments the version. With `expected_version`, a different current
  // version is kFailedPrecondition and nothing changes (the check and the write are atomic).
  virtual Result<model::Breadcrumb> Update(const model::WriteContext& ctx, const std::string& id,
                                           const model::BreadcrumbPatch& patch,
                                           std::optional<int64_t> expected_version) = 0;

  // Deletes the record and its history, appending a `breadcrumb.deleted` event.
  virtual Status Delete(const model::WriteContext& ctx, const std::string& id,
                        std::optional<int64_t> expected_version) = 0;

  // Applies `ops` in order as one transaction: either every op commits, each with its own event
  // (in op order, consecutive seqs), or none does and the first failing op's Status is returned
  // with its index in the message. Each op behaves as the single call of the same kind would.
  // Returns one outcome per op, in order.
  virtual Result<std::vector<WriteOutcome>> Apply(const model::WriteContext& ctx, const std::vector<WriteOp>& ops) = 0;

  // Runs a query. A malformed cursor is kInvalidArgument with field "cursor".
  virtual Result<Page> List(const std::string& owner_id, const model::BreadcrumbQuery& query) = 0;

  // Every version, oldest first.
  virtual Result<std::vector<model::BreadcrumbVersion>> History(const std::string& owner_id,
                                                                const std::string& id) = 0;

  // Removes records whose ttl has passed (each with a `breadcrumb.deleted` event by
  // "system:ttl") and idempotency keys older than their retention. Returns records removed.
  virtual Result<int64_t> SweepExpired() = 0;

  virtual Result<StoreStats> Stats() = 0;

  // Waits for queued writes to commit, then refuses new writes (kUnavailable). Idempotent.
  virtual void Close() = 0;
};

}  // namespace cairn::store
