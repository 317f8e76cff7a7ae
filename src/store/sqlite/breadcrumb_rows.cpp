#include "store/sqlite/breadcrumb_rows.h"

#include <boost/json/serialize.hpp>

#include "base/json_util.h"

namespace cairn::store::sqlite {
namespace json = boost::json;
namespace {

Status InsertTags(Connection& conn, int64_t rid, const std::vector<std::string>& tags) {
  if (tags.empty()) return Status::Ok();
  CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare("INSERT OR IGNORE INTO breadcrumb_tags(tag, rid) VALUES (?1, ?2)"));
  for (const auto& tag : tags) {
    CAIRN_RETURN_IF_ERROR(stmt->Bind(1, std::string_view(tag)).Bind(2, rid).Run());
    stmt->Reset();
  }
  return Status::Ok();
}

// Deletes by (tag, rid), the table's key, so no scan is needed.
Status DeleteTags(Connection& conn, int64_t rid, const std::vector<std::string>& tags) {
  if (tags.empty()) return Status::Ok();
  CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare("DELETE FROM breadcrumb_tags WHERE tag = ?1 AND rid = ?2"));
  for (const auto& tag : tags) {
    CAIRN_RETURN_IF_ERROR(stmt->Bind(1, std::string_view(tag)).Bind(2, rid).Run());
    stmt->Reset();
  }
  return Status::Ok();
}

}  // namespace

Result<model::Breadcrumb> LoadBreadcrumb(Connection& conn, const std::string& owner_id, const std::string& id,
                                         int64_t now_micros, int64_t* rid, std::string* damage) {
  CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare("SELECT " + BreadcrumbColumns() +
                                                 " FROM breadcrumbs b WHERE b.id = ?1 AND b.owner_id = ?2 AND "
                                                 "(b.expires_at IS NULL OR b.expires_at > ?3)"));
  stmt->Bind(1, std::string_view(id)).Bind(2, std::string_view(owner_id)).Bind(3, now_micros);
  CAIRN_ASSIGN_OR_RETURN(bool found, stmt->Step());
  if (!found) return Status::NotFound("breadcrumb " + id + " not found");
  return ReadBreadcrumb(*stmt, rid, damage);
}

Result<int64_t> InsertBreadcrumb(Connection& conn, const model::Breadcrumb& c, const std::string* context_json) {
  CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare(
      "INSERT INTO breadcrumbs(id, owner_id, schema_name, title, description, tags, context, path, llm_hints, "
      "version, checksum, visibility, sensitivity, expires_at, created_by, updated_by, trace_id, caused_by, depth, "
      "created_at, updated_at, size_bytes, acl) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,"
      "?19,?20,?21,?22,?23)"));
  std::string serialized = context_json ? std::string() : json::serialize(c.context);
  std::string_view context = context_json ? std::string_view(*context_json) : std::string_view(serialized);
  stmt->Bind(1, std::string_view(c.id)).Bind(2, std::string_view(c.owner_id)).Bind(3, c.schema_name)
      .Bind(4, std::string_view(c.title)).Bind(5, c.description).Bind(6, std::string_view(TagsJson(c.tags)))
      .Bind(7, std::string_view(context)).Bind(8, c.path).Bind(9, HintsText(c.llm_hints)).Bind(10, c.version)
      .Bind(11, std::string_view(c.checksum)).Bind(12, std::string_view(c.visibility))
      .Bind(13, std::string_view(c.sensitivity)).Bind(14, c.ttl_micros).Bind(15, std::string_view(c.created_by))
      .Bind(16, std::string_view(c.updated_by)).Bind(17, std::string_view(c.trace.trace_id))
      .Bind(18, c.trace.caused_by.empty() ? std::optional<std::string>() : std::optional<std::string>(c.trace.caused_by))
      .Bind(19, c.trace.depth).Bind(20, c.created_at).Bind(21, c.updated_at).Bind(22, c.size_bytes)
      .Bind(23, AclText(c.acl));
  Status status = stmt->Run();
  if (status.code() == StatusCode::kConflict) return Status::Conflict("path '" + c.path.value_or("") + "' is already used");
  CAIRN_RETURN_IF_ERROR(status);
  int64_t rid = conn.LastInsertRowId();
  stmt.reset();
  CAIRN_RETURN_IF_ERROR(InsertTags(conn, rid, c.tags));
  return rid;
}

Status UpdateBreadcrumb(Connection& conn, int64_t rid, const model::Breadcrumb& c,
                        const std::vector<std::string>* old_tags, const std::string* context_json) {
  CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare(
      "UPDATE breadcrumbs SET schema_name=?2, title=?3, description=?4, tags=?5, context=?6, path=?7, llm_hints=?8, "
      "version=?9, checksum=?10, visibility=?11, sensitivity=?12, expires_at=?13, updated_by=?14, updated_at=?15, "
      "size_bytes=?16, acl=?17 WHERE rid=?1"));
  std::string serialized = context_json ? std::string() : json::serialize(c.context);
  std::string_view context = context_json ? std::string_view(*context_json) : std::string_view(serialized);
  std::string tags = TagsJson(c.tags);
  stmt->Bind(1, rid).Bind(2, c.schema_name).Bind(3, std::string_view(c.title)).Bind(4, c.description)
      .Bind(5, std::string_view(tags)).Bind(6, std::string_view(context)).Bind(7, c.path)
      .Bind(8, HintsText(c.llm_hints)).Bind(9, c.version).Bind(10, std::string_view(c.checksum))
      .Bind(11, std::string_view(c.visibility)).Bind(12, std::string_view(c.sensitivity)).Bind(13, c.ttl_micros)
      .Bind(14, std::string_view(c.updated_by)).Bind(15, c.updated_at).Bind(16, c.size_bytes)
      .Bind(17, AclText(c.acl));
  Status status = stmt->Run();
  if (status.code() == StatusCode::kConflict) return Status::Conflict("path '" + c.path.value_or("") + "' is already used");
  CAIRN_RETURN_IF_ERROR(status);
  stmt.reset();
  if (!old_tags) return Status::Ok();
  CAIRN_RETURN_IF_ERROR(DeleteTags(conn, rid, *old_tags));
  return InsertTags(conn, rid, c.tags);
}

Status ArchiveVersion(Connection& conn, int64_t rid, const model::Breadcrumb& c) {
  CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare(
      "INSERT INTO breadcrumb_versions(rid, version, title, tags, context, checksum, updated_by, updated_at) "
      "VALUES (?1,?2,?3,?4,?5,?6,?7,?8)"));
  std::string context = json::serialize(c.context);
  std::string tags = TagsJson(c.tags);
  return stmt->Bind(1, rid).Bind(2, c.version).Bind(3, std::string_view(c.title)).Bind(4, std::string_view(tags))
      .Bind(5, std::string_view(context)).Bind(6, std::string_view(c.checksum)).Bind(7, std::string_view(c.updated_by))
      .Bind(8, c.updated_at).Run();
}

Status DeleteBreadcrumb(Connection& conn, int64_t rid, const model::Breadcrumb& crumb) {
  for (const char* sql : {"DELETE FROM breadcrumbs WHERE rid = ?1", "DELETE FROM breadcrumb_versions WHERE rid = ?1"}) {
    CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare(sql));
    CAIRN_RETURN_IF_ERROR(stmt->Bind(1, rid).Run());
  }
  return DeleteTags(conn, rid, crumb.tags);
}

}  // namespace cairn::store::sqlite
