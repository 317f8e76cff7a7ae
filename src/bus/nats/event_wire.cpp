#include "bus/nats/event_wire.h"

#include <boost/json/serialize.hpp>

#include "base/json_util.h"
#include "model/access.h"

namespace cairn::bus::nats {
namespace json = boost::json;
namespace {

// The envelope and a `before` view add two levels to the deepest stored context.
constexpr size_t kMaxDepth = 1024;

json::value OptionalString(const std::optional<std::string>& value) {
  return value ? json::value(*value) : json::value(nullptr);
}

Status Malformed(std::string_view what) {
  return Status(StatusCode::kInvalidArgument, "stream message: " + std::string(what));
}

// Reads the string member `key` into `*out`; false when it is absent or not a string.
bool ReadString(const json::object& o, std::string_view key, std::string* out) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr || !v->is_string()) return false;
  *out = std::string(v->as_string());
  return true;
}

// Reads a member that is a string or null.
bool ReadOptionalString(const json::object& o, std::string_view key, std::optional<std::string>* out) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr) return false;
  if (v->is_null()) {
    out->reset();
    return true;
  }
  if (!v->is_string()) return false;
  *out = std::string(v->as_string());
  return true;
}

bool ReadInt(const json::object& o, std::string_view key, int64_t* out) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr || !v->is_int64()) return false;
  *out = v->as_int64();
  return true;
}

}  // namespace

std::string EncodeStreamEvent(const model::Event& e) {
  json::object o;
  o["seq"] = e.seq;
  o["type"] = e.type;
  o["id"] = e.breadcrumb_id;
  o["version"] = e.version;
  o["schema"] = OptionalString(e.schema_name);
  o["title"] = e.title;
  json::array tags;
  for (const std::string& tag : e.tags) tags.emplace_back(tag);
  o["tags"] = std::move(tags);
  o["path"] = OptionalString(e.path);
  o["owner"] = e.owner_id;
  o["by"] = e.created_by;
  o["trace"] = json::object{{"id", e.trace.trace_id}, {"caused_by", e.trace.caused_by}, {"depth", e.trace.depth}};
  o["at"] = e.at;
  o["context"] = e.context;
  if (e.context_unreadable) o["unreadable"] = true;
  if (e.before) o["before"] = *e.before;
  o["visibility"] = e.visibility;
  o["sensitivity"] = e.sensitivity;
  o["creator"] = e.record_creator;
  o["acl"] = model::AclJson(e.acl);
  return json::serialize(o);
}

std::string EncodeStreamMarker(int64_t seq) { return json::serialize(json::object{{"seq", seq}, {"marker", true}}); }

Result<StreamMessage> DecodeStreamMessage(std::string_view body) {
  CAIRN_ASSIGN_OR_RETURN(json::value parsed, ParseJson(body, kMaxDepth));
  if (!parsed.is_object()) return Malformed("not an object");
  const json::object& o = parsed.as_object();
  StreamMessage message;
  if (!ReadInt(o, "seq", &message.seq) || message.seq <= 0) return Malformed("no positive seq");
  if (const json::value* marker = o.if_contains("marker"); marker != nullptr) {
    if (!marker->is_bool() || !marker->as_bool() || o.size() != 2) return Malformed("bad marker");
    return message;
  }
  model::Event& e = message.event;
  e.seq = message.seq;
  const json::value* tags = o.if_contains("tags");
  const json::value* trace = o.if_contains("trace");
  const json::value* context = o.if_contains("context");
  const json::value* acl = o.if_contains("acl");
  bool complete = ReadString(o, "type", &e.type) && ReadString(o, "id", &e.breadcrumb_id) &&
                  ReadInt(o, "version", &e.version) && ReadOptionalString(o, "schema", &e.schema_name) &&
                  ReadString(o, "title", &e.title) && ReadOptionalString(o, "path", &e.path) &&
                  ReadString(o, "owner", &e.owner_id) && ReadString(o, "by", &e.created_by) &&
                  ReadInt(o, "at", &e.at) && ReadString(o, "visibility", &e.visibility) &&
                  ReadString(o, "sensitivity", &e.sensitivity) && ReadString(o, "creator", &e.record_creator) &&
                  tags != nullptr && tags->is_array() && trace != nullptr && trace->is_object() &&
                  context != nullptr && acl != nullptr;
  if (!complete) return Malformed("a field is missing or of the wrong kind");
  for (const json::value& tag : tags->as_array()) {
    if (!tag.is_string()) return Malformed("a tag is not a string");
    e.tags.emplace_back(tag.as_string());
  }
  const json::object& t = trace->as_object();
  if (!ReadString(t, "id", &e.trace.trace_id) || !ReadString(t, "caused_by", &e.trace.caused_by) ||
      !ReadInt(t, "depth", &e.trace.depth)) {
    return Malformed("bad trace");
  }
  e.context = *context;
  if (const json::value* unreadable = o.if_contains("unreadable"); unreadable != nullptr) {
    if (!unreadable->is_bool()) return Malformed("bad unreadable");
    e.context_unreadable = unreadable->as_bool();
  }
  if (const json::value* before = o.if_contains("before"); before != nullptr) {
    e.before = std::make_shared<const json::value>(*before);
  }
  auto parsed_acl = model::ParseAcl(*acl);
  if (!parsed_acl.ok()) return Malformed("bad acl");
  e.acl = std::move(parsed_acl).value();
  message.whole = true;
  return message;
}

}  // namespace cairn::bus::nats
