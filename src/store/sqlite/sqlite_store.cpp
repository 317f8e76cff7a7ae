#include "store/sqlite/sqlite_store.h"

#include <boost/json/serialize.hpp>
#include <algorithm>
#include <chrono>
#include <utility>

#include "base/json_util.h"
#include "base/log.h"
#include "store/sqlite/breadcrumb_rows.h"
#include "store/sqlite/event_rows.h"
#include "store/sqlite/migrations.h"
#include "store/sqlite/query_builder.h"
#include "store/write_rules.h"

namespace cairn::store::sqlite {
namespace json = boost::json;
namespace {

constexpr int64_t kSweepBatch = 500;

// Deletes `crumb` at `rid` and records the deletion as an event by `actor`.
Status RemoveWithEvent(Connection& conn, int64_t rid, const model::Breadcrumb& crumb, const std::string& actor,
                       int64_t now) {
  CAIRN_RETURN_IF_ERROR(DeleteBreadcrumb(conn, rid, crumb));
  return AppendEvent(conn, "breadcrumb.deleted", crumb, actor, now);
}

// If an expired record still holds `path` (the sweep has not run yet), removes it so the path can
// be reused. Returns whether one was removed.
Result<bool> ReclaimExpiredPath(Connection& conn, const std::string& owner_id, const std::string& path, int64_t now,
                                int64_t* record_delta) {
  CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare("SELECT " + BreadcrumbColumns() +
                                                 " FROM breadcrumbs b WHERE b.owner_id = ?1 AND b.path = ?2 AND "
                                                 "b.expires_at IS NOT NULL AND b.expires_at <= ?3"));
  stmt->Bind(1, std::string_view(owner_id)).Bind(2, std::string_view(path)).Bind(3, now);
  CAIRN_ASSIGN_OR_RETURN(bool found, stmt->Step());
  if (!found) return false;
  int64_t rid = 0;
  std::string damage;  // expired and unreadable: removed all the same
  CAIRN_ASSIGN_OR_RETURN(model::Breadcrumb expired, ReadBreadcrumb(*stmt, &rid, &damage));
  stmt.reset();
  CAIRN_RETURN_IF_ERROR(RemoveWithEvent(conn, rid, expired, kTtlActor, now));
  --*record_delta;
  return true;
}

// Runs `write`; on a path conflict caused by an expired holder, reclaims the path and retries once.
template <typename Fn>
auto WithPathReclaim(Connection& conn, const std::string& owner_id, const std::optional<std::string>& path,
                     int64_t now, int64_t* record_delta, Fn write) -> decltype(write()) {
  auto result = write();
  if (result.ok() || !path || result.status().code() != StatusCode::kConflict) return result;
  auto reclaimed = ReclaimExpiredPath(conn, owner_id, *path, now, record_delta);
  if (!reclaimed.ok()) return reclaimed.status();
  return *reclaimed ? write() : result;
}

}  // namespace

class SqliteStore::ReadLease {
 public:
  ReadLease(SqliteStore* store, std::unique_ptr<Connection> conn) : store_(store), conn_(std::move(conn)) {}
  ReadLease(ReadLease&&) = default;
  ~ReadLease() {
    if (conn_) store_->ReleaseReader(std::move(conn_));
  }
  Connection& operator*() { return *conn_; }

 private:
  SqliteStore* store_;
  std::unique_ptr<Connection> conn_;
};

SqliteStore::SqliteStore(SqliteStoreOptions options, const Clock& clock, MetricsRegistry* metrics)
    : options_(std::move(options)), clock_(clock), ids_(clock), unreadable_(metrics) {
  if (metrics) write_seconds_ = &metrics->GetHistogram("cairn_store_write_seconds", "Store write latency, queue to commit");
}

Result<std::unique_ptr<SqliteStore>> SqliteStore::Open(SqliteStoreOptions options, const Clock& clock,
                                                       MetricsRegistry* metrics) {
  CAIRN_ASSIGN_OR_RETURN(auto conn, Connection::Open(options.path, options.synchronous));
  CAIRN_RETURN_IF_ERROR(RunMigrations(*conn));
  CAIRN_ASSIGN_OR_RETURN(auto count, conn->Prepare("SELECT COUNT(*) FROM breadcrumbs"));
  CAIRN_ASSIGN_OR_RETURN(bool counted, count->Step());
  int64_t records = counted ? count->Int(0) : 0;
  count.reset();
  std::unique_ptr<SqliteStore> store(new SqliteStore(options, clock, metrics));
  store->records_ = records;
  if (options.background_checkpoint) {
    CAIRN_ASSIGN_OR_RETURN(store->checkpointer_,
                           WalCheckpointer::Start(options.path, options.synchronous, options.checkpoint, metrics));
    store->checkpointer_->Attach(*conn);
  }
  GroupCommitWriter::Options writer = options.writer;
  writer.before_commit_when = FullTextDueQuery(options.full_text_batch_rows);
  writer.before_commit = FullTextPendingStatements();
  store->writer_ = std::make_unique<GroupCommitWriter>(std::move(conn), std::move(writer), metrics);
  return store;
}

SqliteStore::~SqliteStore() { Close(); }

void SqliteStore::Close() {
  // A restart then finds the index complete. Best effort: a failing store keeps the noted text,
  // and the next search indexes it.
  if (writer_) (void)IndexPendingText();
  if (writer_) writer_->Close();
  if (checkpointer_) checkpointer_->Stop();  // no commit asks for one any more
}

void SqliteStore::ReportUnreadable(UnreadableRow row) {
  if (!unreadable_.Note(row)) return;
  auto draft = std::make_shared<model::BreadcrumbDraft>(UnreadableRowReport(row));
  auto prepared = PreparedWrite::ForCreate(*draft, "");
  if (!prepared.ok()) return;
  auto shared_prepared = std::make_shared<Prepared>(std::move(prepared).value());
  auto created = std::make_shared<int64_t>(0);
  model::WriteContext ctx{row.owner_id, kStoreActor, true};
  writer_->Post(
      [this, ctx, draft, shared_prepared, created](Connection& conn) -> Status {
        *created = 0;
        auto done = CreateIn(conn, ctx, *draft, "", *shared_prepared, clock_.NowMicros(), created.get());
        // Filed by an earlier run (its path is taken): nothing to do.
        if (!done.ok() && done.status().code() == StatusCode::kConflict) return Status::Ok();
        return done.status();
      },
      [this, created, key = row.kind + "/" + row.key](const Status& status) {
        if (status.ok()) records_ += *created;
        if (!status.ok()) CAIRN_LOG_WARN("store: could not file the report on unreadable {}: {}", key, status.message());
      });
}

Result<SqliteStore::ReadLease> SqliteStore::AcquireReader() {
  {
    std::lock_guard lock(readers_mu_);
    if (!idle_readers_.empty()) {
      auto conn = std::move(idle_readers_.back());
      idle_readers_.pop_back();
      return ReadLease(this, std::move(conn));
    }
  }
  CAIRN_ASSIGN_OR_RETURN(auto conn, Connection::Open(options_.path, options_.synchronous));
  CAIRN_RETURN_IF_ERROR(conn->Exec("PRAGMA query_only=1"));
  // Readers are many (one per thread that reads); SQLite's default 2 MiB page cache each would
  // dominate the process's memory while the OS page cache already holds the hot pages.
  CAIRN_RETURN_IF_ERROR(conn->Exec("PRAGMA cache_size=-512"));
  return ReadLease(this, std::move(conn));
}

void SqliteStore::ReleaseReader(std::unique_ptr<Connection> conn) {
  std::lock_guard lock(readers_mu_);
  idle_readers_.push_back(std::move(conn));
}

Status SqliteStore::WithReader(const std::function<Status(Connection&)>& fn) {
  CAIRN_ASSIGN_OR_RETURN(auto reader, AcquireReader());
  return fn(*reader);
}

Status SqliteStore::Write(const std::function<Status(Connection&, int64_t* record_delta)>& fn) {
  auto started = std::chrono::steady_clock::now();
  int64_t delta = 0;
  Status status = writer_->Submit([&](Connection& conn) {
    delta = 0;
    return fn(conn, &delta);
  });
  if (status.ok()) records_ += delta;
  ObserveWrite(started);
  return status;
}

void SqliteStore::ObserveWrite(std::chrono::steady_clock::time_point started) {
  if (write_seconds_) {
    write_seconds_->Observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  }
}

Result<CreateResult> SqliteStore::CreateIn(Connection& conn, const model::WriteContext& ctx,
                                           const model::BreadcrumbDraft& draft, const std::string& idempotency_key,
                                           const Prepared& prepared, int64_t now, int64_t* record_delta) {
  CreateResult result;
  const std::string& fingerprint = prepared.fingerprint;
  if (!idempotency_key.empty()) {
    CAIRN_ASSIGN_OR_RETURN(auto seen, conn.Prepare("SELECT fingerprint, breadcrumb_id FROM idempotency_keys "
                                                   "WHERE owner_id = ?1 AND key = ?2"));
    seen->Bind(1, std::string_view(ctx.owner_id)).Bind(2, std::string_view(idempotency_key));
    CAIRN_ASSIGN_OR_RETURN(bool found, seen->Step());
    if (found) {
      std::string stored(seen->Text(0));
      std::string id(seen->Text(1));
      seen.reset();
      return ReplayedCreate(stored, prepared, id, [&] { return LoadBreadcrumb(conn, ctx.owner_id, id, now, nullptr); });
    }
  }
  result.breadcrumb = NewRecord(ctx, draft, prepared, ids_.Next(), now);
  model::Breadcrumb& c = result.breadcrumb;
  const std::string& context_json = *prepared.context_json;
  CAIRN_ASSIGN_OR_RETURN(int64_t rid, WithPathReclaim(conn, ctx.owner_id, c.path, now, record_delta,
                                                      [&] { return InsertBreadcrumb(conn, c, &context_json); }));
  (void)rid;
  ++*record_delta;
  std::optional<json::value> event_context = std::exchange(prepared.event_context, std::nullopt);
  CAIRN_RETURN_IF_ERROR(AppendEvent(conn, "breadcrumb.created", c, ctx.actor, now, &context_json, nullptr,
                                    event_context ? &*event_context : nullptr));
  if (!idempotency_key.empty()) {
    CAIRN_ASSIGN_OR_RETURN(auto remember, conn.Prepare("INSERT INTO idempotency_keys(owner_id, key, fingerprint, "
                                                       "breadcrumb_id, created_at) VALUES (?1, ?2, ?3, ?4, ?5)"));
    CAIRN_RETURN_IF_ERROR(remember->Bind(1, std::string_view(ctx.owner_id)).Bind(2, std::string_view(idempotency_key))
                              .Bind(3, std::string_view(fingerprint)).Bind(4, std::string_view(c.id)).Bind(5, now)
                              .Run());
  }
  return result;
}

Result<model::Breadcrumb> SqliteStore::UpdateIn(Connection& conn, const model::WriteContext& ctx, const std::string& id,
                                                const model::BreadcrumbPatch& patch,
                                                std::optional<int64_t> expected_version, const Prepared& prepared,
                                                int64_t now, int64_t* record_delta) {
  int64_t rid = 0;
  CAIRN_ASSIGN_OR_RETURN(model::Breadcrumb current, LoadBreadcrumb(conn, ctx.owner_id, id, now, &rid));
  CAIRN_RETURN_IF_ERROR(CheckWriteAccess(ctx, current, patch.changes_access()));
  CAIRN_RETURN_IF_ERROR(CheckExpectedVersion(current.version, expected_version));
  CAIRN_RETURN_IF_ERROR(ArchiveVersion(conn, rid, current));
  model::Breadcrumb updated = PatchedRecord(current, patch, prepared, ctx, now);
  std::string unchanged_json = prepared.context_json ? std::string() : json::serialize(updated.context);
  const std::string& context_json = prepared.context_json ? *prepared.context_json : unchanged_json;
  const std::vector<std::string>* old_tags = patch.tags.set ? &current.tags : nullptr;
  std::optional<std::string> new_path = patch.path.set && updated.path != current.path ? updated.path : std::nullopt;
  CAIRN_RETURN_IF_ERROR(WithPathReclaim(conn, ctx.owner_id, new_path, now, record_delta, [&] {
    return UpdateBreadcrumb(conn, rid, updated, old_tags, &context_json);
  }));
  CAIRN_RETURN_IF_ERROR(AppendEvent(conn, "breadcrumb.updated", updated, ctx.actor, now, &context_json, &current));
  return updated;
}

Result<model::Breadcrumb> SqliteStore::DeleteIn(Connection& conn, const model::WriteContext& ctx, const std::string& id,
                                                std::optional<int64_t> expected_version, int64_t now,
                                                int64_t* record_delta) {
  int64_t rid = 0;
  std::string damage;  // an unreadable record can still be deleted (its event has a null context)
  CAIRN_ASSIGN_OR_RETURN(model::Breadcrumb current, LoadBreadcrumb(conn, ctx.owner_id, id, now, &rid, &damage));
  CAIRN_RETURN_IF_ERROR(CheckWriteAccess(ctx, current, false));
  CAIRN_RETURN_IF_ERROR(CheckExpectedVersion(current.version, expected_version));
  current.updated_by = ctx.actor;
  --*record_delta;
  CAIRN_RETURN_IF_ERROR(RemoveWithEvent(conn, rid, current, ctx.actor, now));
  return current;
}

Result<CreateResult> SqliteStore::Create(const model::WriteContext& ctx, const model::BreadcrumbDraft& draft,
                                         const std::string& idempotency_key) {
  CreateResult result;
  CAIRN_ASSIGN_OR_RETURN(const Prepared prepared, PreparedWrite::ForCreate(draft, idempotency_key));
  CAIRN_RETURN_IF_ERROR(Write([&](Connection& conn, int64_t* record_delta) -> Status {
    CAIRN_ASSIGN_OR_RETURN(result, CreateIn(conn, ctx, draft, idempotency_key, prepared, clock_.NowMicros(), record_delta));
    return Status::Ok();
  }));
  return result;
}

void SqliteStore::CreateAsync(const model::WriteContext& ctx, model::BreadcrumbDraft draft, std::string idempotency_key,
                              CreateDone done) {
  auto queued = QueuedCreate::Make(ctx, std::move(draft), std::move(idempotency_key));
  if (!queued.ok()) return done(queued.status());
  writer_->Post(
      [this, create = *queued](Connection& conn) -> Status {
        create->record_delta = 0;
        CAIRN_ASSIGN_OR_RETURN(create->result, CreateIn(conn, create->ctx, create->draft, create->idempotency_key,
                                                        create->prepared, clock_.NowMicros(), &create->record_delta));
        return Status::Ok();
      },
      [this, create = *queued, started = std::chrono::steady_clock::now(), done = std::move(done)](Status status) {
        ObserveWrite(started);
        if (!status.ok()) return done(std::move(status));
        records_ += create->record_delta;
        done(std::move(create->result));
      });
}

Result<model::Breadcrumb> SqliteStore::Get(const std::string& owner_id, const std::string& id) {
  CAIRN_ASSIGN_OR_RETURN(auto reader, AcquireReader());
  std::string damage;
  CAIRN_ASSIGN_OR_RETURN(model::Breadcrumb crumb, LoadBreadcrumb(*reader, owner_id, id, clock_.NowMicros(), nullptr, &damage));
  if (damage.empty()) return crumb;
  ReportUnreadable({"breadcrumb", id, owner_id, damage});
  return UnreadableRecord(id, damage);
}

Result<model::Breadcrumb> SqliteStore::Update(const model::WriteContext& ctx, const std::string& id,
                                              const model::BreadcrumbPatch& patch,
                                              std::optional<int64_t> expected_version) {
  model::Breadcrumb updated;
  CAIRN_ASSIGN_OR_RETURN(const Prepared prepared, PreparedWrite::ForUpdate(patch));
  CAIRN_RETURN_IF_ERROR(Write([&](Connection& conn, int64_t* record_delta) -> Status {
    CAIRN_ASSIGN_OR_RETURN(updated, UpdateIn(conn, ctx, id, patch, expected_version, prepared, clock_.NowMicros(),
                                             record_delta));
    return Status::Ok();
  }));
  return updated;
}

Status SqliteStore::Delete(const model::WriteContext& ctx, const std::string& id, std::optional<int64_t> expected_version) {
  return Write([&](Connection& conn, int64_t* record_delta) -> Status {
    return DeleteIn(conn, ctx, id, expected_version, clock_.NowMicros(), record_delta).status();
  });
}

Result<std::vector<WriteOutcome>> SqliteStore::Apply(const model::WriteContext& ctx, const std::vector<WriteOp>& ops) {
  CAIRN_ASSIGN_OR_RETURN(std::vector<Prepared> prepared, PrepareBatch(ops));
  std::vector<WriteOutcome> outcomes;
  CAIRN_RETURN_IF_ERROR(Write([&](Connection& conn, int64_t* record_delta) -> Status {
    int64_t now = clock_.NowMicros();
    WriteOpSteps steps;
    steps.create = [&](const WriteOp& op, const Prepared& p) {
      return CreateIn(conn, ctx, op.draft, op.idempotency_key, p, now, record_delta);
    };
    steps.update = [&](const WriteOp& op, const Prepared& p) {
      return UpdateIn(conn, ctx, op.id, op.patch, op.expected_version, p, now, record_delta);
    };
    steps.remove = [&](const WriteOp& op) { return DeleteIn(conn, ctx, op.id, op.expected_version, now, record_delta); };
    return RunBatch(ops, prepared, steps, &outcomes);
  }));
  return outcomes;
}

Result<Page> SqliteStore::List(const std::string& owner_id, const model::BreadcrumbQuery& query) {
  CAIRN_ASSIGN_OR_RETURN(BuiltQuery built, BuildListQuery(BreadcrumbColumns(), owner_id, query, clock_.NowMicros()));
  CAIRN_ASSIGN_OR_RETURN(auto reader, AcquireReader());
  CAIRN_ASSIGN_OR_RETURN(auto stmt, (*reader).Prepare(built.sql));
  for (size_t i = 0; i < built.binds.size(); ++i) stmt->BindValue(static_cast<int>(i + 1), built.binds[i]);
  Page page;
  int64_t last_rid = 0;
  while (true) {
    CAIRN_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) break;
    if (page.items.size() == query.limit) {
      page.next_cursor = EncodeCursor(last_rid);
      break;
    }
    std::string damage;
    CAIRN_ASSIGN_OR_RETURN(model::Breadcrumb crumb, ReadBreadcrumb(*stmt, &last_rid, &damage));
    if (!damage.empty()) {
      ReportUnreadable({"breadcrumb", crumb.id, owner_id, std::move(damage)});
      continue;
    }
    page.items.push_back(std::move(crumb));
  }
  return page;
}

Result<std::vector<model::BreadcrumbVersion>> SqliteStore::History(const std::string& owner_id, const std::string& id) {
  CAIRN_ASSIGN_OR_RETURN(auto reader, AcquireReader());
  ReadTransaction snapshot(*reader);  // the current row and the archived ones from one moment
  int64_t rid = 0;
  CAIRN_ASSIGN_OR_RETURN(model::Breadcrumb current, LoadBreadcrumb(*reader, owner_id, id, clock_.NowMicros(), &rid));
  CAIRN_ASSIGN_OR_RETURN(auto stmt, (*reader).Prepare("SELECT version, title, tags, context, checksum, updated_by, "
                                                      "updated_at FROM breadcrumb_versions WHERE rid = ?1 ORDER BY version"));
  stmt->Bind(1, rid);
  std::vector<model::BreadcrumbVersion> versions;
  while (true) {
    CAIRN_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) break;
    model::BreadcrumbVersion v;
    v.version = stmt->Int(0);
    v.title = std::string(stmt->Text(1));
    std::string damage;
    json::value tags = DecodeStoredJson(stmt->Text(2), "tags", json::array(), &damage);
    v.context = DecodeStoredJson(stmt->Text(3), "context", nullptr, &damage);
    if (!damage.empty()) {
      ReportUnreadable({"version", id + "@" + std::to_string(v.version), owner_id, std::move(damage)});
      continue;
    }
    for (const auto& tag : tags.as_array()) v.tags.emplace_back(tag.as_string());
    v.checksum = std::string(stmt->Text(4));
    v.updated_by = std::string(stmt->Text(5));
    v.updated_at = stmt->Int(6);
    versions.push_back(std::move(v));
  }
  versions.push_back(model::BreadcrumbVersion{current.version, current.title, current.tags, current.context,
                                              current.checksum, current.updated_by, current.updated_at});
  return versions;
}

Result<int64_t> SqliteStore::SweepExpired() {
  int64_t removed_total = 0;
  while (true) {
    int64_t removed = 0;
    CAIRN_RETURN_IF_ERROR(Write([&](Connection& conn, int64_t* record_delta) -> Status {
      int64_t now = clock_.NowMicros();
      CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare("SELECT " + BreadcrumbColumns() +
                                                     " FROM breadcrumbs b WHERE b.expires_at IS NOT NULL AND "
                                                     "b.expires_at <= ?1 LIMIT ?2"));
      stmt->Bind(1, now).Bind(2, kSweepBatch);
      std::vector<std::pair<int64_t, model::Breadcrumb>> expired;
      while (true) {
        CAIRN_ASSIGN_OR_RETURN(bool row, stmt->Step());
        if (!row) break;
        int64_t rid = 0;
        std::string damage;  // expired and unreadable: deleted all the same
        CAIRN_ASSIGN_OR_RETURN(model::Breadcrumb crumb, ReadBreadcrumb(*stmt, &rid, &damage));
        expired.emplace_back(rid, std::move(crumb));
      }
      stmt.reset();
      for (auto& [rid, crumb] : expired) {
        crumb.updated_by = kTtlActor;
        CAIRN_RETURN_IF_ERROR(RemoveWithEvent(conn, rid, crumb, kTtlActor, now));
      }
      removed = static_cast<int64_t>(expired.size());
      *record_delta -= removed;
      if (removed < kSweepBatch) {
        CAIRN_ASSIGN_OR_RETURN(auto keys, conn.Prepare("DELETE FROM idempotency_keys WHERE created_at < ?1"));
        CAIRN_RETURN_IF_ERROR(keys->Bind(1, now - options_.idempotency_retention_micros).Run());
      }
      return Status::Ok();
    }));
    removed_total += removed;
    if (removed < kSweepBatch) break;
  }
  if (removed_total > 0) CAIRN_LOG_INFO("store: swept {} expired breadcrumbs", removed_total);
  return removed_total;
}

Result<StoreStats> SqliteStore::Stats() {
  CAIRN_ASSIGN_OR_RETURN(auto reader, AcquireReader());
  CAIRN_ASSIGN_OR_RETURN(auto stmt, (*reader).Prepare("SELECT COALESCE(MAX(seq), 0) FROM events"));
  CAIRN_ASSIGN_OR_RETURN(bool row, stmt->Step());
  StoreStats stats;
  stats.records = records_.load();
  if (row) stats.last_event_seq = stmt->Int(0);
  return stats;
}

Result<std::vector<model::Event>> SqliteStore::ReadEvents(int64_t after_seq, size_t limit) {
  std::vector<std::pair<int64_t, std::string>> damaged;
  std::vector<model::Event> events;
  {
    CAIRN_ASSIGN_OR_RETURN(auto reader, AcquireReader());
    CAIRN_ASSIGN_OR_RETURN(events, ReadEventRows(*reader, after_seq, limit, &damaged));
  }
  for (auto& [seq, why] : damaged) {
    auto event = std::find_if(events.begin(), events.end(), [seq = seq](const model::Event& e) { return e.seq == seq; });
    ReportUnreadable({"event", std::to_string(seq), event->owner_id, std::move(why)});
  }
  return events;
}

Result<EventLogBounds> SqliteStore::Bounds() {
  CAIRN_ASSIGN_OR_RETURN(auto reader, AcquireReader());
  // Two subqueries: SQLite answers a lone MIN or MAX from the index end, but MIN and MAX in one
  // SELECT scan the whole table.
  CAIRN_ASSIGN_OR_RETURN(auto stmt,
                         (*reader).Prepare("SELECT (SELECT MIN(seq) FROM events), (SELECT MAX(seq) FROM events)"));
  CAIRN_ASSIGN_OR_RETURN(bool row, stmt->Step());
  EventLogBounds bounds;
  if (row && !stmt->IsNull(1)) {
    bounds.first_seq = stmt->Int(0);
    bounds.last_seq = stmt->Int(1);
  }
  return bounds;
}

void SqliteStore::SetCommitListener(std::function<void()> listener) {
  if (!listener) return writer_->SetCommitListener(nullptr);
  writer_->SetCommitListener([listener = std::move(listener)](std::vector<model::Event>) { listener(); });
}

void SqliteStore::SetCommittedEventsListener(CommittedEventsListener listener) {
  if (!listener) return writer_->SetCommitListener(nullptr);
  writer_->SetCommitListener(
      [listener = std::move(listener)](std::vector<model::Event> events) { listener(std::move(events), true); });
}

Result<int64_t> SqliteStore::PruneEvents(int64_t before_micros) {
  int64_t pruned = 0;
  CAIRN_RETURN_IF_ERROR(Write([&](Connection& conn, int64_t*) -> Status {
    CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare(
        "DELETE FROM events WHERE at < ?1 AND seq < (SELECT MAX(seq) FROM events)"));
    CAIRN_RETURN_IF_ERROR(stmt->Bind(1, before_micros).Run());
    pruned = sqlite3_changes(conn.raw());
    return Status::Ok();
  }));
  if (pruned > 0) CAIRN_LOG_INFO("store: pruned {} events past retention", pruned);
  return pruned;
}

}  // namespace cairn::store::sqlite
