#include "store/record_rows.h"

#include <boost/json/serialize.hpp>
#include <charconv>
#include <limits>
#include <memory>

#include "base/json_util.h"

namespace cairn::store {
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

std::vector<std::string> DecodeTags(std::string_view text, std::string* damage) {
  std::vector<std::string> tags;
  json::value array = DecodeStoredJson(text, "tags", json::array(), damage);
  if (array.is_array()) {
    for (const auto& tag : array.get_array()) {
      if (tag.is_string()) tags.emplace_back(tag.get_string());
    }
  }
  return tags;
}

}  // namespace

std::string TagsJson(const std::vector<std::string>& tags) {
  json::array array;
  for (const auto& tag : tags) array.emplace_back(tag);
  return json::serialize(array);
}

std::optional<std::string> HintsText(const json::value& hints) {
  if (hints.is_null()) return std::nullopt;
  return json::serialize(hints);
}

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

Result<model::Breadcrumb> ReadBreadcrumb(const StoredRow& row, int64_t* rid, std::string* damage) {
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
  crumb.tags = DecodeTags(row.Text(6), &found);
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

const std::string& EventColumnsAndJoins() {
  static const std::string kSql =
      "e.seq, e.type, e.breadcrumb_id, e.version, e.schema_name, e.title, e.tags, e.path, e.owner_id, "
      "e.created_by, e.trace_id, e.caused_by, e.depth, e.at, e.context, v.title, v.tags, v.context, e.access "
      "FROM events e "
      "LEFT JOIN breadcrumbs b ON e.type = 'breadcrumb.updated' AND b.id = e.breadcrumb_id "
      "LEFT JOIN breadcrumb_versions v ON v.rid = b.rid AND v.version = e.version - 1";
  return kSql;
}

model::Event ReadEventRow(const StoredRow& row, std::string* damage) {
  model::Event e;
  e.seq = row.Int(0);
  e.type = std::string(row.Text(1));
  e.breadcrumb_id = std::string(row.Text(2));
  e.version = row.Int(3);
  e.schema_name = row.OptText(4);
  e.title = std::string(row.Text(5));
  e.tags = DecodeTags(row.Text(6), damage);
  e.path = row.OptText(7);
  e.owner_id = std::string(row.Text(8));
  e.created_by = std::string(row.Text(9));
  e.trace.trace_id = std::string(row.Text(10));
  e.trace.caused_by = row.OptText(11).value_or("");
  e.trace.depth = row.Int(12);
  e.at = row.Int(13);
  if (!row.IsNull(14)) e.context = DecodeStoredJson(row.Text(14), "context", nullptr, damage);
  if (!row.IsNull(15)) {  // an update whose previous version is still in the history
    std::string before_damage;
    json::value before_tags = DecodeStoredJson(row.Text(16), "tags", json::array(), &before_damage);
    json::value before_context = DecodeStoredJson(row.Text(17), "context", nullptr, &before_damage);
    if (before_damage.empty()) {
      e.before = BeforeView(e, std::string(row.Text(15)), std::move(before_tags), std::move(before_context));
    }
  }
  if (!row.IsNull(18)) ReadAccess(e, row.Text(18), damage);
  if (!damage->empty()) e.context_unreadable = true;
  return e;
}

json::value ReadBackContext(const json::value& context) {
  json::value copy = context;
  SignSmallUnsigned(copy);
  return copy;
}

std::optional<std::string> AccessText(const model::Breadcrumb& c) {
  if (c.visibility == "team" && c.sensitivity == "low" && !c.acl) return std::nullopt;
  json::object access{{"visibility", c.visibility}, {"sensitivity", c.sensitivity}, {"creator", c.created_by}};
  if (c.acl) access["acl"] = model::AclJson(c.acl);
  return json::serialize(access);
}

model::Event StagedEvent(int64_t seq, std::string_view type, const model::Breadcrumb& c, const std::string& actor,
                         int64_t at, model::Breadcrumb* previous, json::value* read_back_context) {
  model::Event e;
  e.seq = seq;
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
  return e;
}

std::string EncodeCursor(int64_t rid) {
  // Opaque to clients; versioned so the encoding can change.
  std::string text = "c1." + std::to_string(rid);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : text) {
    out.push_back(kHex[(c ^ 0x5A) >> 4]);
    out.push_back(kHex[(c ^ 0x5A) & 0x0F]);
  }
  return out;
}

std::optional<int64_t> DecodeCursor(const std::string& cursor) {
  if (cursor.empty() || cursor.size() % 2 != 0 || cursor.size() > 64) return std::nullopt;
  std::string text;
  for (size_t i = 0; i < cursor.size(); i += 2) {
    int value = 0;
    auto [ptr, ec] = std::from_chars(cursor.data() + i, cursor.data() + i + 2, value, 16);
    if (ec != std::errc() || ptr != cursor.data() + i + 2) return std::nullopt;
    text.push_back(static_cast<char>(value ^ 0x5A));
  }
  if (text.rfind("c1.", 0) != 0) return std::nullopt;
  int64_t rid = 0;
  auto [ptr, ec] = std::from_chars(text.data() + 3, text.data() + text.size(), rid);
  if (ec != std::errc() || ptr != text.data() + text.size() || rid < 0) return std::nullopt;
  return rid;
}

}  // namespace cairn::store
