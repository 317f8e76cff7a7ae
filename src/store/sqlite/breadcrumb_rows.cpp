#include "store/sqlite/breadcrumb_rows.h"

#include <boost/json/serialize.hpp>

#include "base/json_util.h"

namespace cairn::store::sqlite {
namespace json = boost::json;
std::string TagsJson(const std::vector<std::string>& tags) {
  json::array array;
  for (const auto& tag : tags) array.emplace_back(tag);
  return json::serialize(array);
}

namespace {

std::optional<std::string> HintsText(const json::value& hints) {
  if (hints.is_null()) return std::nullopt;
  return json::serialize(hints);
}

}  // namespace

std::optional<std::string> AclText(const std::optional<model::RecordAcl>& acl) {
  if (!acl) return std::nullopt;
  return json::serialize(model::AclJson(acl));
}

std::optional<model::RecordAcl> DecodeStoredAcl(std::string_view text, std::string* damage) {
  json::value value = DecodeStoredJson(text, "acl", nullptr, damage);
  auto acl = model::ParseAcl(value);
  if (acl.ok()) return *acl;
  if (damage->empty()) *damage = "acl: " + acl.status().message();
  // Unreadable: nobody but the creator and admins (an empty acl.read) rather than everyone.
  return model::RecordAcl{std::vector<std::string>{}, std::vector<std::string>{}};
}

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

json::value DecodeStoredJson(std::string_view text, const char* column, json::value fallback, std::string* damage) {
  auto parsed = ParseJson(text, 1000);  // stored JSON was validated on the way in
  if (parsed.ok()) return std::move(parsed).value();
  if (damage->empty()) *damage = std::string(column) + ": " + parsed.status().message();
  return fallback;
}

Status UnreadableRecord(const std::string& id, const std::string& damage) {
  return Status::Internal("breadcrumb " + id + " is stored in a form that cannot be read (" + damage +
                          "); it can only be deleted");
}

const std::string& BreadcrumbColumns() {
  static const std::string kColumns =
      "b.rid, b.id, b.owner_id, b.schema_name, b.title, b.description, b.tags, b.context, b.path, b.llm_hints, "
      "b.version, b.checksum, b.visibility, b.sensitivity, b.expires_at, b.created_by, b.updated_by, b.trace_id, "
      "b.caused_by, b.depth, b.created_at, b.updated_at, b.size_bytes, b.acl";
  return kColumns;
}

Result<model::Breadcrumb> ReadBreadcrumb(const Statement& row, int64_t* rid, std::string* damage) {
  std::string local_damage;
  std::string& found = damage ? *damage : local_damage;
  found.clear();
  model::Breadcrumb crumb;
  if (rid) *rid = row.Int(0);
  crumb.id = std::string(row.Text(1));
  crumb.owner_id = std::string(row.Text(2));
  crumb.schema_name = row.OptText(3);
  crumb.title = std::string(row.Text(4));
  crumb.description = row.OptText(5);
  json::value tags = DecodeStoredJson(row.Text(6), "tags", json::array(), &found);
  if (tags.is_array()) {
    for (const auto& tag : tags.get_array()) {
      if (tag.is_string()) crumb.tags.emplace_back(tag.get_string());
    }
  }
  crumb.context = DecodeStoredJson(row.Text(7), "context", nullptr, &found);
  crumb.path = row.OptText(8);
  if (!row.IsNull(9)) crumb.llm_hints = DecodeStoredJson(row.Text(9), "llm_hints", nullptr, &found);
  crumb.version = row.Int(10);
  crumb.checksum = std::string(row.Text(11));
  crumb.visibility = std::string(row.Text(12));
  crumb.sensitivity = std::string(row.Text(13));
  if (!row.IsNull(14)) crumb.ttl_micros = row.Int(14);
  crumb.created_by = std::string(row.Text(15));
  crumb.updated_by = std::string(row.Text(16));
  crumb.trace.trace_id = std::string(row.Text(17));
  crumb.trace.caused_by = row.OptText(18).value_or("");
  crumb.trace.depth = row.Int(19);
  crumb.created_at = row.Int(20);
  crumb.updated_at = row.Int(21);
  crumb.size_bytes = row.Int(22);
  if (!row.IsNull(23)) crumb.acl = DecodeStoredAcl(row.Text(23), &found);
  if (!found.empty() && !damage) return UnreadableRecord(crumb.id, found);
  return crumb;
}

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
