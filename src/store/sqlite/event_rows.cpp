#include "store/sqlite/event_rows.h"

#include <boost/json/serialize.hpp>
#include <limits>

#include "base/json_util.h"
#include "store/sqlite/breadcrumb_rows.h"

namespace cairn::store::sqlite {
namespace json = boost::json;
namespace {

// Unsigned integers that fit a signed one become signed, as they do when the stored text is
// parsed again: an event reads the same whether it comes from memory or from the log.
void SignSmallUnsigned(json::value& v) {
  switch (v.kind()) {
    case json::kind::uint64:
      if (v.get_uint64() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        v = static_cast<int64_t>(v.get_uint64());
      }
      break;
    case json::kind::array:
      for (auto& item : v.get_array()) SignSmallUnsigned(item);
      break;
    case json::kind::object:
      for (auto& field : v.get_object()) SignSmallUnsigned(field.value());
      break;
    default:
      break;
  }
}

// An update's `before` (model::Event): the previous version's title, tags, version and context,
// with the id, schema name and path of the event (the same whether live or read back).
std::shared_ptr<const json::value> BeforeView(const model::Event& e, std::string title, json::value tags,
                                              json::value context) {
  SignSmallUnsigned(context);
  return std::make_shared<const json::value>(json::object{
      {"id", e.breadcrumb_id},
      {"schema_name", e.schema_name ? json::value(*e.schema_name) : json::value(nullptr)},
      {"title", std::move(title)},
      {"tags", std::move(tags)},
      {"path", e.path ? json::value(*e.path) : json::value(nullptr)},
      {"version", e.version - 1},
      {"context", std::move(context)}});
}

// The `access` column: who may read the record as the write left it (model::Event), null for the
// common case (team, low sensitivity, no acl), where the creator decides nothing.
std::optional<std::string> AccessText(const model::Breadcrumb& c) {
  if (c.visibility == "team" && c.sensitivity == "low" && !c.acl) return std::nullopt;
  json::object access{{"visibility", c.visibility}, {"sensitivity", c.sensitivity}, {"creator", c.created_by}};
  if (c.acl) access["acl"] = model::AclJson(c.acl);
  return json::serialize(access);
}

void SetAccess(model::Event& e, const model::Breadcrumb& c) {
  e.visibility = c.visibility;
  e.sensitivity = c.sensitivity;
  e.record_creator = c.created_by;
  e.acl = c.acl;
}

// Reads the `access` column back; damage is named like the other columns.
void ReadAccess(model::Event& e, std::string_view text, std::string* damage) {
  json::value access = DecodeStoredJson(text, "access", json::object(), damage);
  const json::object* object = access.if_object();
  if (object == nullptr) return;
  auto text_of = [&](const char* key, std::string& into) {
    if (const auto* v = object->if_contains(key); v && v->is_string()) into = std::string(v->get_string());
  };
  text_of("visibility", e.visibility);
  text_of("sensitivity", e.sensitivity);
  text_of("creator", e.record_creator);
  if (const auto* acl = object->if_contains("acl")) e.acl = DecodeStoredAcl(json::serialize(*acl), damage);
}

}  // namespace

json::value ReadBackContext(const json::value& context) {
  json::value copy = context;
  SignSmallUnsigned(copy);
  return copy;
}

Status AppendEvent(Connection& conn, std::string_view type, const model::Breadcrumb& c, const std::string& actor,
                   int64_t at, const std::string* context_json, model::Breadcrumb* previous,
                   json::value* read_back_context) {
  CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare(
      "INSERT INTO events(type, breadcrumb_id, version, schema_name, title, tags, path, owner_id, created_by, "
      "trace_id, caused_by, depth, at, context, access) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15)"));
  std::string serialized = context_json ? std::string() : json::serialize(c.context);
  std::string_view context = context_json ? std::string_view(*context_json) : std::string_view(serialized);
  CAIRN_RETURN_IF_ERROR(
      stmt->Bind(1, type).Bind(2, std::string_view(c.id)).Bind(3, c.version).Bind(4, c.schema_name)
          .Bind(5, std::string_view(c.title)).Bind(6, std::string_view(TagsJson(c.tags))).Bind(7, c.path)
          .Bind(8, std::string_view(c.owner_id)).Bind(9, std::string_view(actor))
          .Bind(10, std::string_view(c.trace.trace_id))
          .Bind(11, c.trace.caused_by.empty() ? std::optional<std::string>() : std::optional<std::string>(c.trace.caused_by))
          .Bind(12, c.trace.depth).Bind(13, at).Bind(14, std::string_view(context)).Bind(15, AccessText(c)).Run());
  // The event as ReadEventRows will read it back (seq is the row id: INTEGER PRIMARY KEY).
  model::Event e;
  e.seq = conn.LastInsertRowId();
  e.type = std::string(type);
  e.breadcrumb_id = c.id;
  e.version = c.version;
  e.schema_name = c.schema_name;
  e.title = c.title;
  e.tags = c.tags;
  e.path = c.path;
  e.owner_id = c.owner_id;
  e.created_by = actor;
  e.trace = c.trace;
  e.at = at;
  e.context = read_back_context ? std::move(*read_back_context) : ReadBackContext(c.context);
  SetAccess(e, c);
  if (previous && e.type == "breadcrumb.updated") {
    json::array tags;
    for (const auto& tag : previous->tags) tags.emplace_back(tag);
    e.before = BeforeView(e, previous->title, std::move(tags), std::move(previous->context));
  }
  conn.staged_events().push_back(std::move(e));
  return Status::Ok();
}

Result<std::vector<model::Event>> ReadEventRows(Connection& conn, int64_t after_seq, size_t limit,
                                                std::vector<std::pair<int64_t, std::string>>* damaged) {
  CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare(
      "SELECT e.seq, e.type, e.breadcrumb_id, e.version, e.schema_name, e.title, e.tags, e.path, e.owner_id, "
      "e.created_by, e.trace_id, e.caused_by, e.depth, e.at, e.context, v.title, v.tags, v.context, e.access "
      "FROM events e "
      "LEFT JOIN breadcrumbs b ON e.type = 'breadcrumb.updated' AND b.id = e.breadcrumb_id "
      "LEFT JOIN breadcrumb_versions v ON v.rid = b.rid AND v.version = e.version - 1 "
      "WHERE e.seq > ?1 ORDER BY e.seq LIMIT ?2"));
  stmt->Bind(1, after_seq).Bind(2, static_cast<int64_t>(limit));
  std::vector<model::Event> events;
  while (true) {
    CAIRN_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) break;
    model::Event e;
    e.seq = stmt->Int(0);
    e.type = std::string(stmt->Text(1));
    e.breadcrumb_id = std::string(stmt->Text(2));
    e.version = stmt->Int(3);
    e.schema_name = stmt->OptText(4);
    e.title = std::string(stmt->Text(5));
    std::string damage;
    json::value tags = DecodeStoredJson(stmt->Text(6), "tags", json::array(), &damage);
    if (tags.is_array()) {
      for (const auto& tag : tags.get_array()) {
        if (tag.is_string()) e.tags.emplace_back(tag.get_string());
      }
    }
    e.path = stmt->OptText(7);
    e.owner_id = std::string(stmt->Text(8));
    e.created_by = std::string(stmt->Text(9));
    e.trace.trace_id = std::string(stmt->Text(10));
    e.trace.caused_by = stmt->OptText(11).value_or("");
    e.trace.depth = stmt->Int(12);
    e.at = stmt->Int(13);
    if (!stmt->IsNull(14)) e.context = DecodeStoredJson(stmt->Text(14), "context", nullptr, &damage);
    if (!stmt->IsNull(15)) {  // an update whose previous version is still in the history
      std::string before_damage;
      json::value before_tags = DecodeStoredJson(stmt->Text(16), "tags", json::array(), &before_damage);
      json::value before_context = DecodeStoredJson(stmt->Text(17), "context", nullptr, &before_damage);
      if (before_damage.empty()) {
        e.before = BeforeView(e, std::string(stmt->Text(15)), std::move(before_tags), std::move(before_context));
      }
    }
    if (!stmt->IsNull(18)) ReadAccess(e, stmt->Text(18), &damage);
    if (!damage.empty()) {
      e.context_unreadable = true;
      damaged->emplace_back(e.seq, std::move(damage));
    }
    events.push_back(std::move(e));
  }
  return events;
}

}  // namespace cairn::store::sqlite
