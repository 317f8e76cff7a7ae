#include "store/postgres/pg_rows.h"

#include <boost/json/serialize.hpp>

#include "store/record_rows.h"

namespace cairn::store::postgres {
namespace json = boost::json;
namespace {

std::optional<std::string> CausedBy(const model::Breadcrumb& c) {
  if (c.trace.caused_by.empty()) return std::nullopt;
  return c.trace.caused_by;
}

Status InsertTags(PgConnection& conn, int64_t rid, const std::vector<std::string>& tags) {
  if (tags.empty()) return Status::Ok();
  // One statement for every tag: the tags travel as one JSON array.
  PgParams params;
  std::string sql = "INSERT INTO breadcrumb_tags(tag, rid) SELECT DISTINCT t, " + params.Add(rid) +
        "::bigint FROM jsonb_array_elements_text(" + params.Add(TagsJson(tags)) + "::jsonb) t ON CONFLICT DO NOTHING";
  return conn.Run(sql, params);
}

Status DeleteTags(PgConnection& conn, int64_t rid, const std::vector<std::string>& tags) {
  if (tags.empty()) return Status::Ok();
  PgParams params;
  return conn.Run("DELETE FROM breadcrumb_tags WHERE rid = " + params.Add(rid) +
                      "::bigint AND tag IN (SELECT jsonb_array_elements_text(" + params.Add(TagsJson(tags)) + "::jsonb))",
                  params);
}

Status PathTaken(const model::Breadcrumb& c) { return Status::Conflict("path '" + c.path.value_or("") + "' is already used"); }

}  // namespace

Result<model::Breadcrumb> LoadRecord(PgConnection& conn, const std::string& owner_id, const std::string& id,
                                     int64_t now_micros, int64_t* rid, bool for_update) {
  PgParams params;
  std::string sql = "SELECT " + BreadcrumbColumns() + " FROM breadcrumbs b WHERE b.id = " + params.Add(id) +
                    " AND b.owner_id = " + params.Add(owner_id) + " AND (b.expires_at IS NULL OR b.expires_at > " +
                    params.Add(now_micros) + "::bigint)" + (for_update ? " FOR UPDATE" : "");
  CAIRN_ASSIGN_OR_RETURN(PgResult result, conn.Query(sql, params));
  if (result.rows() == 0) return Status::NotFound("breadcrumb " + id + " not found");
  return ReadBreadcrumb(result.Row(0), rid);
}

Result<int64_t> InsertRecord(PgConnection& conn, const model::Breadcrumb& c, const std::string& context_json) {
  PgParams p;
  const std::string tags = p.Add(TagsJson(c.tags));
  // The record and its tags in one statement (one round trip on the writer's path).
  std::string sql =
      "WITH b AS (INSERT INTO breadcrumbs(id, owner_id, schema_name, title, description, tags, context, path, "
      "llm_hints, version, checksum, visibility, sensitivity, expires_at, created_by, updated_by, trace_id, caused_by, "
      "depth, created_at, updated_at, size_bytes, acl) VALUES (" +
      p.Add(c.id) + "," + p.Add(c.owner_id) + "," + p.Add(c.schema_name) + "," + p.Add(c.title) + "," +
      p.Add(c.description) + "," + tags + "::text," + p.Add(context_json) + "," + p.Add(c.path) + "," +
      p.Add(HintsText(c.llm_hints)) + "," + p.Add(c.version) + "::bigint," + p.Add(c.checksum) + "," +
      p.Add(c.visibility) + "," + p.Add(c.sensitivity) + "," + p.Add(c.ttl_micros) + "::bigint," +
      p.Add(c.created_by) + "," + p.Add(c.updated_by) + "," + p.Add(c.trace.trace_id) + "," + p.Add(CausedBy(c)) +
      "," + p.Add(c.trace.depth) + "::bigint," + p.Add(c.created_at) + "::bigint," + p.Add(c.updated_at) +
      "::bigint," + p.Add(c.size_bytes) + "::bigint," + p.Add(AclText(c.acl)) + ") RETURNING rid), "
      "t AS (INSERT INTO breadcrumb_tags(tag, rid) SELECT DISTINCT tag, b.rid FROM b, jsonb_array_elements_text(" +
      tags + "::text::jsonb) tag ON CONFLICT DO NOTHING) SELECT rid FROM b";
  auto inserted = conn.Query(sql, p);
  if (!inserted.ok() && inserted.status().code() == StatusCode::kConflict) return PathTaken(c);
  CAIRN_RETURN_IF_ERROR(inserted.status());
  return inserted->Row(0).Int(0);
}

Status UpdateRecord(PgConnection& conn, int64_t rid, const model::Breadcrumb& c,
                    const std::vector<std::string>* old_tags, const std::string& context_json) {
  PgParams p;
  std::string sql = "UPDATE breadcrumbs SET schema_name=" + p.Add(c.schema_name) + ", title=" + p.Add(c.title) +
                    ", description=" + p.Add(c.description) + ", tags=" + p.Add(TagsJson(c.tags)) +
                    ", context=" + p.Add(context_json) + ", path=" + p.Add(c.path) +
                    ", llm_hints=" + p.Add(HintsText(c.llm_hints)) + ", version=" + p.Add(c.version) +
                    "::bigint, checksum=" + p.Add(c.checksum) + ", visibility=" + p.Add(c.visibility) +
                    ", sensitivity=" + p.Add(c.sensitivity) + ", expires_at=" + p.Add(c.ttl_micros) +
                    "::bigint, updated_by=" + p.Add(c.updated_by) + ", updated_at=" + p.Add(c.updated_at) +
                    "::bigint, size_bytes=" + p.Add(c.size_bytes) + "::bigint, acl=" + p.Add(AclText(c.acl)) +
                    " WHERE rid=" + p.Add(rid) + "::bigint";
  Status status = conn.Run(sql, p);
  if (status.code() == StatusCode::kConflict) return PathTaken(c);
  CAIRN_RETURN_IF_ERROR(status);
  if (!old_tags) return Status::Ok();
  CAIRN_RETURN_IF_ERROR(DeleteTags(conn, rid, *old_tags));
  return InsertTags(conn, rid, c.tags);
}

Status ArchiveRecordVersion(PgConnection& conn, int64_t rid, const model::Breadcrumb& c) {
  PgParams p;
  std::string sql = "INSERT INTO breadcrumb_versions(rid, version, title, tags, context, checksum, updated_by, "
                    "updated_at) VALUES (" + p.Add(rid) + "::bigint," + p.Add(c.version) + "::bigint," +
                    p.Add(c.title) + "," + p.Add(TagsJson(c.tags)) + "," + p.Add(json::serialize(c.context)) + "," +
                    p.Add(c.checksum) + "," + p.Add(c.updated_by) + "," + p.Add(c.updated_at) + "::bigint)";
  return conn.Run(sql, p);
}

Status DeleteRecord(PgConnection& conn, int64_t rid) {
  for (const char* table : {"breadcrumbs", "breadcrumb_versions", "breadcrumb_tags"}) {
    PgParams p;
    CAIRN_RETURN_IF_ERROR(conn.Run("DELETE FROM " + std::string(table) + " WHERE rid = " + p.Add(rid) + "::bigint", p));
  }
  return Status::Ok();
}

Status AppendRecordEvent(PgConnection& conn, std::string_view type, const model::Breadcrumb& c, const std::string& actor,
                         int64_t at, const std::string* context_json, model::Breadcrumb* previous,
                         json::value* read_back_context) {
  const int64_t seq = conn.last_seq() + 1;
  std::string serialized = context_json ? std::string() : json::serialize(c.context);
  PgParams p;
  std::string sql =
      "INSERT INTO events(seq, type, breadcrumb_id, version, schema_name, title, tags, path, owner_id, created_by, "
      "trace_id, caused_by, depth, at, context, access) VALUES (" +
      p.Add(seq) + "::bigint," + p.Add(type) + "," + p.Add(c.id) + "," + p.Add(c.version) + "::bigint," +
      p.Add(c.schema_name) + "," + p.Add(c.title) + "," + p.Add(TagsJson(c.tags)) + "," + p.Add(c.path) + "," +
      p.Add(c.owner_id) + "," + p.Add(actor) + "," + p.Add(c.trace.trace_id) + "," + p.Add(CausedBy(c)) + "," +
      p.Add(c.trace.depth) + "::bigint," + p.Add(at) + "::bigint," +
      p.Add(context_json ? std::string_view(*context_json) : std::string_view(serialized)) + "," +
      p.Add(AccessText(c)) + ")";
  CAIRN_RETURN_IF_ERROR(conn.Run(sql, p));
  conn.last_seq() = seq;
  conn.staged_events().push_back(StagedEvent(seq, type, c, actor, at, previous, read_back_context));
  return Status::Ok();
}

Result<std::vector<model::Event>> ReadEventLog(PgConnection& conn, int64_t after_seq, size_t limit,
                                               std::vector<std::pair<int64_t, std::string>>* damaged) {
  PgParams p;
  std::string sql = "SELECT " + EventColumnsAndJoins() + " WHERE e.seq > " + p.Add(after_seq) +
                    "::bigint ORDER BY e.seq LIMIT " + p.Add(static_cast<int64_t>(limit)) + "::bigint";
  CAIRN_ASSIGN_OR_RETURN(PgResult result, conn.Query(sql, p));
  std::vector<model::Event> events;
  events.reserve(result.rows());
  for (int i = 0; i < result.rows(); ++i) {
    std::string damage;
    model::Event e = ReadEventRow(result.Row(i), &damage);
    if (!damage.empty()) damaged->emplace_back(e.seq, std::move(damage));
    events.push_back(std::move(e));
  }
  return events;
}

Status WriteCursor(PgConnection& conn, const std::string& consumer, int64_t seq, int64_t now) {
  PgParams p;
  return conn.Run("INSERT INTO consumer_cursors(consumer, seq, updated_at) VALUES (" + p.Add(consumer) + "," +
                      p.Add(seq) + "::bigint," + p.Add(now) + "::bigint) ON CONFLICT (consumer) DO "
                      "UPDATE SET seq = excluded.seq, updated_at = excluded.updated_at", p);
}

}  // namespace cairn::store::postgres
