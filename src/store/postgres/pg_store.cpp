#include "store/postgres/pg_store.h"

#include <boost/json/serialize.hpp>
#include <utility>

#include "base/log.h"
#include "store/postgres/pg_query.h"
#include "store/postgres/pg_rows.h"
#include "store/record_rows.h"

namespace cairn::store::postgres {
namespace json = boost::json;
namespace {

constexpr int64_t kSweepBatch = 500;

// Deletes `crumb` at `rid` and records the deletion as an event by `actor`.
Status RemoveWithEvent(PgConnection& conn, int64_t rid, const model::Breadcrumb& crumb, const std::string& actor,
                       int64_t now) {
  CAIRN_RETURN_IF_ERROR(DeleteRecord(conn, rid));
  return AppendRecordEvent(conn, "breadcrumb.deleted", crumb, actor, now);
}

// Removes the expired records matching `where` (at most `limit`), each with its deletion event by
// the TTL sweep. Returns how many.
Result<int64_t> RemoveExpired(PgConnection& conn, const std::string& where, PgParams& params, int64_t limit,
                              int64_t now) {
  // No ORDER BY: with one, the planner walked the primary key filtering every row (a path
  // reclaim at each create with a path, 4 ms at 30,000 records); without, it takes the
  // (owner_id, path) or the expiry index.
  std::string sql = "SELECT " + BreadcrumbColumns() + " FROM breadcrumbs b WHERE b.expires_at IS NOT NULL AND " +
                    where + " LIMIT " + std::to_string(limit) + " FOR UPDATE";
  CAIRN_ASSIGN_OR_RETURN(PgResult expired, conn.Query(sql, params));
  for (int i = 0; i < expired.rows(); ++i) {
    int64_t rid = 0;
    std::string damage;  // expired and unreadable: removed all the same
    CAIRN_ASSIGN_OR_RETURN(model::Breadcrumb crumb, ReadBreadcrumb(expired.Row(i), &rid, &damage));
    crumb.updated_by = kTtlActor;
    CAIRN_RETURN_IF_ERROR(RemoveWithEvent(conn, rid, crumb, kTtlActor, now));
  }
  return static_cast<int64_t>(expired.rows());
}

// If an expired record still holds `path` (the sweep has not run yet), removes it so the path can
// be taken.
Status ReclaimExpiredPath(PgConnection& conn, const std::string& owner_id, const std::optional<std::string>& path,
                          int64_t now) {
  if (!path) return Status::Ok();
  PgParams params;
  std::string where = "b.owner_id = " + params.Add(owner_id) + " AND b.path = " + params.Add(*path) +
                      " AND b.expires_at <= " + params.Add(now) + "::bigint";
  return RemoveExpired(conn, where, params, 1, now).status();
}

// Holds a read-only snapshot transaction on a reader for its lifetime.
class Snapshot {
 public:
  explicit Snapshot(PgConnection& conn) : conn_(conn) {
    began_ = conn_.Exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY").ok();
  }
  ~Snapshot() {
    if (began_) (void)conn_.Exec("COMMIT");
  }
  Snapshot(const Snapshot&) = delete;
  Snapshot& operator=(const Snapshot&) = delete;

 private:
  PgConnection& conn_;
  bool began_ = false;
};

}  // namespace

PgStore::PgStore(std::shared_ptr<PgDatabase> db, PgStoreOptions options, const Clock& clock)
    : db_(std::move(db)), options_(options), clock_(clock), ids_(clock) {}

PgStore::~PgStore() { Close(); }

void PgStore::Close() {
  if (notifier_) notifier_->Stop();
  db_->Close();
}

Result<CreateResult> PgStore::CreateIn(PgConnection& conn, const model::WriteContext& ctx,
                                       const model::BreadcrumbDraft& draft, const std::string& idempotency_key,
                                       const PreparedWrite& prepared, int64_t now) {
  CreateResult result;
  if (!idempotency_key.empty()) {
    PgParams params;
    CAIRN_ASSIGN_OR_RETURN(PgResult seen, conn.Query("SELECT fingerprint, breadcrumb_id FROM idempotency_keys WHERE "
                                                     "owner_id = " + params.Add(ctx.owner_id) + " AND key = " +
                                                     params.Add(idempotency_key), params));
    if (seen.rows() > 0) {
      std::string id(seen.Row(0).Text(1));
      return ReplayedCreate(seen.Row(0).Text(0), prepared, id,
                            [&] { return LoadRecord(conn, ctx.owner_id, id, now, nullptr); });
    }
  }
  result.breadcrumb = NewRecord(ctx, draft, prepared, ids_.Next(), now);
  model::Breadcrumb& c = result.breadcrumb;
  const std::string& context_json = *prepared.context_json;
  CAIRN_RETURN_IF_ERROR(ReclaimExpiredPath(conn, ctx.owner_id, c.path, now));
  CAIRN_RETURN_IF_ERROR(InsertRecord(conn, c, context_json).status());
  std::optional<json::value> event_context = std::exchange(prepared.event_context, std::nullopt);
  CAIRN_RETURN_IF_ERROR(AppendRecordEvent(conn, "breadcrumb.created", c, ctx.actor, now, &context_json, nullptr,
                                          event_context ? &*event_context : nullptr));
  if (!idempotency_key.empty()) {
    PgParams p;
    CAIRN_RETURN_IF_ERROR(conn.Run("INSERT INTO idempotency_keys(owner_id, key, fingerprint, breadcrumb_id, created_at) "
                                   "VALUES (" + p.Add(ctx.owner_id) + "," + p.Add(idempotency_key) + "," +
                                   p.Add(prepared.fingerprint) + "," + p.Add(c.id) + "," + p.Add(now) + "::bigint)", p));
  }
  return result;
}

Result<model::Breadcrumb> PgStore::UpdateIn(PgConnection& conn, const model::WriteContext& ctx, const std::string& id,
                                            const model::BreadcrumbPatch& patch,
                                            std::optional<int64_t> expected_version, const PreparedWrite& prepared,
                                            int64_t now) {
  int64_t rid = 0;
  CAIRN_ASSIGN_OR_RETURN(model::Breadcrumb current, LoadRecord(conn, ctx.owner_id, id, now, &rid, true));
  CAIRN_RETURN_IF_ERROR(CheckWriteAccess(ctx, current, patch.changes_access()));
  CAIRN_RETURN_IF_ERROR(CheckExpectedVersion(current.version, expected_version));
  CAIRN_RETURN_IF_ERROR(ArchiveRecordVersion(conn, rid, current));
  model::Breadcrumb updated = PatchedRecord(current, patch, prepared, ctx, now);
  std::string unchanged_json = prepared.context_json ? std::string() : json::serialize(updated.context);
  const std::string& context_json = prepared.context_json ? *prepared.context_json : unchanged_json;
  const std::vector<std::string>* old_tags = patch.tags.set ? &current.tags : nullptr;
  if (patch.path.set && updated.path != current.path) {
    CAIRN_RETURN_IF_ERROR(ReclaimExpiredPath(conn, ctx.owner_id, updated.path, now));
  }
  CAIRN_RETURN_IF_ERROR(UpdateRecord(conn, rid, updated, old_tags, context_json));
  CAIRN_RETURN_IF_ERROR(AppendRecordEvent(conn, "breadcrumb.updated", updated, ctx.actor, now, &context_json, &current));
  return updated;
}

Result<model::Breadcrumb> PgStore::DeleteIn(PgConnection& conn, const model::WriteContext& ctx, const std::string& id,
                                            std::optional<int64_t> expected_version, int64_t now) {
  int64_t rid = 0;
  CAIRN_ASSIGN_OR_RETURN(model::Breadcrumb current, LoadRecord(conn, ctx.owner_id, id, now, &rid, true));
  CAIRN_RETURN_IF_ERROR(CheckWriteAccess(ctx, current, false));
  CAIRN_RETURN_IF_ERROR(CheckExpectedVersion(current.version, expected_version));
  current.updated_by = ctx.actor;
  CAIRN_RETURN_IF_ERROR(RemoveWithEvent(conn, rid, current, ctx.actor, now));
  return current;
}

Result<CreateResult> PgStore::Create(const model::WriteContext& ctx, const model::BreadcrumbDraft& draft,
                                     const std::string& idempotency_key) {
  CreateResult result;
  CAIRN_ASSIGN_OR_RETURN(const PreparedWrite prepared, PreparedWrite::ForCreate(draft, idempotency_key));
  CAIRN_RETURN_IF_ERROR(db_->Write([&](PgConnection& conn) -> Status {
    CAIRN_ASSIGN_OR_RETURN(result, CreateIn(conn, ctx, draft, idempotency_key, prepared, clock_.NowMicros()));
    return Status::Ok();
  }));
  return result;
}

void PgStore::CreateAsync(const model::WriteContext& ctx, model::BreadcrumbDraft draft, std::string idempotency_key,
                          CreateDone done) {
  auto queued = QueuedCreate::Make(ctx, std::move(draft), std::move(idempotency_key));
  if (!queued.ok()) return done(queued.status());
  db_->Post(
      [this, create = *queued](PgConnection& conn) -> Status {
        CAIRN_ASSIGN_OR_RETURN(create->result, CreateIn(conn, create->ctx, create->draft, create->idempotency_key,
                                                        create->prepared, clock_.NowMicros()));
        return Status::Ok();
      },
      [create = *queued, done = std::move(done)](Status status) {
        if (!status.ok()) return done(std::move(status));
        done(std::move(create->result));
      });
}

Result<model::Breadcrumb> PgStore::Get(const std::string& owner_id, const std::string& id) {
  model::Breadcrumb crumb;
  CAIRN_RETURN_IF_ERROR(db_->WithReader([&](PgConnection& conn) -> Status {
    CAIRN_ASSIGN_OR_RETURN(crumb, LoadRecord(conn, owner_id, id, clock_.NowMicros(), nullptr));
    return Status::Ok();
  }));
  return crumb;
}

Result<model::Breadcrumb> PgStore::Update(const model::WriteContext& ctx, const std::string& id,
                                          const model::BreadcrumbPatch& patch, std::optional<int64_t> expected_version) {
  model::Breadcrumb updated;
  CAIRN_ASSIGN_OR_RETURN(const PreparedWrite prepared, PreparedWrite::ForUpdate(patch));
  CAIRN_RETURN_IF_ERROR(db_->Write([&](PgConnection& conn) -> Status {
    CAIRN_ASSIGN_OR_RETURN(updated, UpdateIn(conn, ctx, id, patch, expected_version, prepared, clock_.NowMicros()));
    return Status::Ok();
  }));
  return updated;
}

Status PgStore::Delete(const model::WriteContext& ctx, const std::string& id, std::optional<int64_t> expected_version) {
  return db_->Write([&](PgConnection& conn) -> Status {
    return DeleteIn(conn, ctx, id, expected_version, clock_.NowMicros()).status();
  });
}

Result<std::vector<WriteOutcome>> PgStore::Apply(const model::WriteContext& ctx, const std::vector<WriteOp>& ops) {
  CAIRN_ASSIGN_OR_RETURN(std::vector<PreparedWrite> prepared, PrepareBatch(ops));
  std::vector<WriteOutcome> outcomes;
  CAIRN_RETURN_IF_ERROR(db_->Write([&](PgConnection& conn) -> Status {
    int64_t now = clock_.NowMicros();
    WriteOpSteps steps;
    steps.create = [&](const WriteOp& op, const PreparedWrite& p) {
      return CreateIn(conn, ctx, op.draft, op.idempotency_key, p, now);
    };
    steps.update = [&](const WriteOp& op, const PreparedWrite& p) {
      return UpdateIn(conn, ctx, op.id, op.patch, op.expected_version, p, now);
    };
    steps.remove = [&](const WriteOp& op) { return DeleteIn(conn, ctx, op.id, op.expected_version, now); };
    return RunBatch(ops, prepared, steps, &outcomes);
  }));
  return outcomes;
}

Result<Page> PgStore::List(const std::string& owner_id, const model::BreadcrumbQuery& query) {
  CAIRN_ASSIGN_OR_RETURN(PgQuery built, BuildPgListQuery(BreadcrumbColumns(), owner_id, query, clock_.NowMicros()));
  Page page;
  CAIRN_RETURN_IF_ERROR(db_->WithReader([&](PgConnection& conn) -> Status {
    CAIRN_ASSIGN_OR_RETURN(PgResult rows, conn.QueryOnce(built.sql, built.params));
    int64_t last_rid = 0;
    for (int i = 0; i < rows.rows(); ++i) {
      if (page.items.size() == query.limit) {
        page.next_cursor = EncodeCursor(last_rid);
        break;
      }
      CAIRN_ASSIGN_OR_RETURN(model::Breadcrumb crumb, ReadBreadcrumb(rows.Row(i), &last_rid));
      page.items.push_back(std::move(crumb));
    }
    return Status::Ok();
  }));
  return page;
}

Result<std::vector<model::BreadcrumbVersion>> PgStore::History(const std::string& owner_id, const std::string& id) {
  std::vector<model::BreadcrumbVersion> versions;
  CAIRN_RETURN_IF_ERROR(db_->WithReader([&](PgConnection& conn) -> Status {
    Snapshot snapshot(conn);  // the current row and the archived ones from one moment
    int64_t rid = 0;
    CAIRN_ASSIGN_OR_RETURN(model::Breadcrumb current, LoadRecord(conn, owner_id, id, clock_.NowMicros(), &rid));
    PgParams params;
    CAIRN_ASSIGN_OR_RETURN(PgResult rows, conn.Query("SELECT version, title, tags, context, checksum, updated_by, "
                                                     "updated_at FROM breadcrumb_versions WHERE rid = " +
                                                     params.Add(rid) + "::bigint ORDER BY version", params));
    for (int i = 0; i < rows.rows(); ++i) {
      PgRow row = rows.Row(i);
      model::BreadcrumbVersion v;
      v.version = row.Int(0);
      v.title = std::string(row.Text(1));
      std::string damage;
      json::value tags = DecodeStoredJson(row.Text(2), "tags", json::array(), &damage);
      v.context = DecodeStoredJson(row.Text(3), "context", nullptr, &damage);
      if (!damage.empty()) return UnreadableRecord(id + "@" + std::to_string(v.version), damage);
      for (const auto& tag : tags.as_array()) v.tags.emplace_back(tag.as_string());
      v.checksum = std::string(row.Text(4));
      v.updated_by = std::string(row.Text(5));
      v.updated_at = row.Int(6);
      versions.push_back(std::move(v));
    }
    versions.push_back(model::BreadcrumbVersion{current.version, current.title, current.tags, current.context,
                                                current.checksum, current.updated_by, current.updated_at});
    return Status::Ok();
  }));
  return versions;
}

Result<int64_t> PgStore::SweepExpired() {
  int64_t removed_total = 0;
  while (true) {
    int64_t removed = 0;
    CAIRN_RETURN_IF_ERROR(db_->Write([&](PgConnection& conn) -> Status {
      int64_t now = clock_.NowMicros();
      PgParams params;
      std::string where = "b.expires_at <= " + params.Add(now) + "::bigint";
      CAIRN_ASSIGN_OR_RETURN(removed, RemoveExpired(conn, where, params, kSweepBatch, now));
      if (removed < kSweepBatch) {
        PgParams keys;
        CAIRN_RETURN_IF_ERROR(conn.Run("DELETE FROM idempotency_keys WHERE created_at < " +
                                       keys.Add(now - options_.idempotency_retention_micros) + "::bigint", keys));
      }
      return Status::Ok();
    }));
    removed_total += removed;
    if (removed < kSweepBatch) break;
  }
  if (removed_total > 0) CAIRN_LOG_INFO("store: swept {} expired breadcrumbs", removed_total);
  return removed_total;
}

Result<StoreStats> PgStore::Stats() {
  StoreStats stats;
  CAIRN_RETURN_IF_ERROR(db_->WithReader([&](PgConnection& conn) -> Status {
    CAIRN_ASSIGN_OR_RETURN(PgResult row, conn.Query("SELECT (SELECT count(*) FROM breadcrumbs), "
                                                    "(SELECT last_seq FROM event_counter)"));
    stats.records = row.Row(0).Int(0);
    stats.last_event_seq = row.Row(0).Int(1);
    return Status::Ok();
  }));
  return stats;
}

Result<std::vector<model::Event>> PgStore::ReadEvents(int64_t after_seq, size_t limit) {
  std::vector<model::Event> events;
  CAIRN_RETURN_IF_ERROR(db_->WithReader([&](PgConnection& conn) -> Status {
    std::vector<std::pair<int64_t, std::string>> damaged;
    CAIRN_ASSIGN_OR_RETURN(events, ReadEventLog(conn, after_seq, limit, &damaged));
    for (const auto& [seq, why] : damaged) CAIRN_LOG_WARN("store: event {} cannot be read: {}", seq, why);
    return Status::Ok();
  }));
  return events;
}

Result<EventLogBounds> PgStore::Bounds() {
  EventLogBounds bounds;
  CAIRN_RETURN_IF_ERROR(db_->WithReader([&](PgConnection& conn) -> Status {
    CAIRN_ASSIGN_OR_RETURN(PgResult row, conn.Query("SELECT MIN(seq), MAX(seq) FROM events"));
    if (!row.Row(0).IsNull(1)) {
      bounds.first_seq = row.Row(0).Int(0);
      bounds.last_seq = row.Row(0).Int(1);
    }
    return Status::Ok();
  }));
  return bounds;
}

void PgStore::SetCommitListener(std::function<void()> listener) {
  if (!listener) return SetCommittedEventsListener(nullptr);
  SetCommittedEventsListener([listener = std::move(listener)](std::vector<model::Event>, bool) { listener(); });
}

void PgStore::SetCommittedEventsListener(CommittedEventsListener listener) {
  {
    std::lock_guard lock(listener_mu_);
    listener_ = listener;
  }
  if (!listener) return db_->writer().SetCommitListener(nullptr);
  db_->writer().SetCommitListener(
      [listener = std::move(listener)](std::vector<model::Event> events) { listener(std::move(events), true); });
  if (notifier_) return;
  notifier_ = std::make_unique<PgCommitNotifier>(
      db_->uri(), [this] { return db_->writer().backend_pid(); },
      [this] {
        std::lock_guard lock(listener_mu_);
        if (listener_) listener_({}, false);
      });
  notifier_->Start();
}

Result<int64_t> PgStore::PruneEvents(int64_t before_micros) {
  int64_t pruned = 0;
  CAIRN_RETURN_IF_ERROR(db_->Write([&](PgConnection& conn) -> Status {
    PgParams params;
    CAIRN_ASSIGN_OR_RETURN(PgResult done, conn.Query("DELETE FROM events WHERE at < " + params.Add(before_micros) +
                                                     "::bigint AND seq < (SELECT MAX(seq) FROM events)", params));
    pruned = done.affected();
    return Status::Ok();
  }));
  if (pruned > 0) CAIRN_LOG_INFO("store: pruned {} events past retention", pruned);
  return pruned;
}

}  // namespace cairn::store::postgres
