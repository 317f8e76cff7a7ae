#include "model/breadcrumb_codec.h"

#include <algorithm>
#include <cctype>
#include <boost/json/array.hpp>
#include <boost/json/serialize.hpp>
#include <set>

#include "base/json_util.h"
#include "base/time_format.h"
#include "model/llm_hints.h"

namespace cairn::model {
namespace json = boost::json;
namespace {

bool HasControlChars(std::string_view text) {
  return std::any_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; });
}

Result<std::string> RequireString(const json::value& value, const std::string& field) {
  if (!value.is_string()) {
    return Status::Validation(field, "must be a string, got " + std::string(JsonKindName(value)));
  }
  return std::string(value.get_string());
}

Result<std::optional<std::string>> NullableString(const json::value& value, const std::string& field) {
  if (value.is_null()) return std::optional<std::string>();
  CAIRN_ASSIGN_OR_RETURN(std::string text, RequireString(value, field));
  return std::optional<std::string>(std::move(text));
}

Status ValidateTitle(const std::string& title, const Limits& limits) {
  if (title.find_first_not_of(" \t\r\n") == std::string::npos) return Status::Validation("title", "must not be empty");
  if (title.size() > limits.max_title_bytes) {
    return Status::Validation("title", "longer than " + std::to_string(limits.max_title_bytes) + " bytes");
  }
  return Status::Ok();
}

Status ValidateDescription(const std::optional<std::string>& text, const Limits& limits) {
  if (text && text->size() > limits.max_description_bytes) {
    return Status::Validation("description", "longer than " + std::to_string(limits.max_description_bytes) + " bytes");
  }
  return Status::Ok();
}

Result<std::vector<std::string>> ParseTags(const json::value& value, const Limits& limits) {
  if (!value.is_array()) return Status::Validation("tags", "must be an array of strings");
  const json::array& items = value.get_array();
  if (items.size() > limits.max_tags) {
    return Status::Validation("tags", "more than " + std::to_string(limits.max_tags) + " tags");
  }
  std::vector<std::string> tags;
  std::set<std::string> seen;
  for (size_t i = 0; i < items.size(); ++i) {
    std::string field = "tags[" + std::to_string(i) + "]";
    CAIRN_ASSIGN_OR_RETURN(std::string tag, RequireString(items[i], field));
    CAIRN_RETURN_IF_ERROR(ValidateTag(field, tag, limits));
    if (seen.insert(tag).second) tags.push_back(std::move(tag));  // duplicates collapse, order kept
  }
  return tags;
}

Status ValidateEnum(const std::string& field, const std::string& value, std::initializer_list<std::string_view> allowed) {
  for (auto option : allowed) {
    if (value == option) return Status::Ok();
  }
  std::string list;
  for (auto option : allowed) list += (list.empty() ? "" : "|") + std::string(option);
  return Status::Validation(field, "must be one of " + list);
}

Result<std::optional<int64_t>> ParseTtl(const json::value& value, int64_t now_micros) {
  if (value.is_null()) return std::optional<int64_t>();
  if (!value.is_string()) return Status::Validation("ttl", "must be an RFC 3339 timestamp string or null");
  auto micros = ParseRfc3339Micros(std::string_view(value.get_string()));
  if (!micros) return Status::Validation("ttl", "is not an RFC 3339 timestamp (e.g. 2030-01-01T00:00:00Z)");
  if (*micros <= now_micros) return Status::Validation("ttl", "is in the past");
  return std::optional<int64_t>(*micros);
}

Result<Trace> ParseTrace(const json::value& value) {
  if (!value.is_object()) return Status::Validation("trace", "must be an object");
  Trace trace;
  for (const auto& kv : value.get_object()) {
    std::string field = "trace." + std::string(kv.key());
    if (kv.key() == "trace_id") {
      CAIRN_ASSIGN_OR_RETURN(trace.trace_id, RequireString(kv.value(), field));
    } else if (kv.key() == "caused_by") {
      CAIRN_ASSIGN_OR_RETURN(trace.caused_by, RequireString(kv.value(), field));
    } else if (kv.key() == "depth") {
      if (!kv.value().is_int64() || kv.value().get_int64() < 0) {
        return Status::Validation(field, "must be a non-negative integer");
      }
      trace.depth = kv.value().get_int64();
    } else {
      return Status::Validation(field, "unknown field");
    }
  }
  if (trace.trace_id.size() > 128 || trace.caused_by.size() > 128) {
    return Status::Validation("trace", "ids longer than 128 bytes");
  }
  return trace;
}

// Fields shared by create and patch, applied to either through `apply`.
template <typename Sink>
Status ParseCommonField(const json::key_value_pair& kv, const Limits& limits, int64_t now_micros, Sink& sink) {
  std::string key(kv.key());
  const json::value& value = kv.value();
  if (key == "schema_name") {
    CAIRN_ASSIGN_OR_RETURN(auto schema, NullableString(value, key));
    if (schema) CAIRN_RETURN_IF_ERROR(ValidateSchemaName(key, *schema, limits));
    sink.schema_name(std::move(schema));
  } else if (key == "title") {
    CAIRN_ASSIGN_OR_RETURN(std::string title, RequireString(value, key));
    CAIRN_RETURN_IF_ERROR(ValidateTitle(title, limits));
    sink.title(std::move(title));
  } else if (key == "description") {
    CAIRN_ASSIGN_OR_RETURN(auto description, NullableString(value, key));
    CAIRN_RETURN_IF_ERROR(ValidateDescription(description, limits));
    sink.description(std::move(description));
  } else if (key == "tags") {
    CAIRN_ASSIGN_OR_RETURN(auto tags, ParseTags(value, limits));
    sink.tags(std::move(tags));
  } else if (key == "context") {
    sink.context(value);
  } else if (key == "path") {
    CAIRN_ASSIGN_OR_RETURN(auto path, NullableString(value, key));
    if (path) CAIRN_RETURN_IF_ERROR(ValidatePath(key, *path, limits));
    sink.path(std::move(path));
  } else if (key == "llm_hints") {
    CAIRN_RETURN_IF_ERROR(ValidateLlmHints(value));
    sink.llm_hints(value);
  } else if (key == "visibility") {
    CAIRN_ASSIGN_OR_RETURN(std::string visibility, RequireString(value, key));
    CAIRN_RETURN_IF_ERROR(ValidateEnum(key, visibility, {"public", "team", "private"}));
    sink.visibility(std::move(visibility));
  } else if (key == "sensitivity") {
    CAIRN_ASSIGN_OR_RETURN(std::string sensitivity, RequireString(value, key));
    CAIRN_RETURN_IF_ERROR(ValidateEnum(key, sensitivity, {"low", "pii", "secret"}));
    sink.sensitivity(std::move(sensitivity));
  } else if (key == "acl") {
    CAIRN_ASSIGN_OR_RETURN(auto acl, ParseAcl(value, key));
    sink.acl(std::move(acl));
  } else if (key == "ttl") {
    CAIRN_ASSIGN_OR_RETURN(auto ttl, ParseTtl(value, now_micros));
    sink.ttl(ttl);
  } else {
    return Status::Validation(key, "unknown or read-only field");
  }
  return Status::Ok();
}

struct DraftSink {
  BreadcrumbDraft& d;
  void schema_name(std::optional<std::string> v) { d.schema_name = std::move(v); }
  void title(std::string v) { d.title = std::move(v); }
  void description(std::optional<std::string> v) { d.description = std::move(v); }
  void tags(std::vector<std::string> v) { d.tags = std::move(v); }
  void context(const json::value& v) { d.context = v; }
  void path(std::optional<std::string> v) { d.path = std::move(v); }
  void llm_hints(const json::value& v) { d.llm_hints = v; }
  void visibility(std::string v) { d.visibility = std::move(v); }
  void sensitivity(std::string v) { d.sensitivity = std::move(v); }
  void acl(std::optional<RecordAcl> v) { d.acl = std::move(v); }
  void ttl(std::optional<int64_t> v) { d.ttl_micros = v; }
};

struct PatchSink {
  BreadcrumbPatch& p;
  void schema_name(std::optional<std::string> v) { p.schema_name.Set(std::move(v)); }
  void title(std::string v) { p.title.Set(std::move(v)); }
  void description(std::optional<std::string> v) { p.description.Set(std::move(v)); }
  void tags(std::vector<std::string> v) { p.tags.Set(std::move(v)); }
  void context(const json::value& v) { p.context.Set(v); }
  void path(std::optional<std::string> v) { p.path.Set(std::move(v)); }
  void llm_hints(const json::value& v) { p.llm_hints.Set(v); }
  void visibility(std::string v) { p.visibility.Set(std::move(v)); }
  void sensitivity(std::string v) { p.sensitivity.Set(std::move(v)); }
  void acl(std::optional<RecordAcl> v) { p.acl.Set(std::move(v)); }
  void ttl(std::optional<int64_t> v) { p.ttl_micros.Set(v); }
};

json::value OptionalString(const std::optional<std::string>& text) {
  return text ? json::value(*text) : json::value(nullptr);
}

json::array TagArray(const std::vector<std::string>& tags) {
  json::array out;
  out.reserve(tags.size());
  for (const auto& tag : tags) out.emplace_back(tag);
  return out;
}

}  // namespace

Status ValidateSchemaName(const std::string& field, const std::string& value, const Limits& limits) {
  if (value.empty() || value.size() > limits.max_schema_name_bytes) {
    return Status::Validation(field, "must be 1 to " + std::to_string(limits.max_schema_name_bytes) + " bytes");
  }
  for (char c : value) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' || c == ':' || c == '/')) {
      return Status::Validation(field, "may contain only letters, digits and . _ - : /");
    }
  }
  return Status::Ok();
}

Status ValidateTag(const std::string& field, const std::string& value, const Limits& limits) {
  if (value.empty() || value.size() > limits.max_tag_bytes) {
    return Status::Validation(field, "must be 1 to " + std::to_string(limits.max_tag_bytes) + " bytes");
  }
  if (HasControlChars(value)) return Status::Validation(field, "must not contain control characters");
  return Status::Ok();
}

Status ValidatePath(const std::string& field, const std::string& value, const Limits& limits) {
  if (value.empty() || value.size() > limits.max_path_bytes) {
    return Status::Validation(field, "must be 1 to " + std::to_string(limits.max_path_bytes) + " bytes");
  }
  if (value.front() == '/' || value.back() == '/' || value.find("//") != std::string::npos) {
    return Status::Validation(field, "segments are separated by single '/', with none at either end");
  }
  if (HasControlChars(value) || value.find_first_of("*? ") != std::string::npos) {
    return Status::Validation(field, "must not contain spaces, control characters, '*' or '?'");
  }
  return Status::Ok();
}

Result<BreadcrumbDraft> ParseDraft(const json::value& body, const Limits& limits, int64_t now_micros) {
  if (!body.is_object()) return Status::Validation("body", "must be a JSON object");
  BreadcrumbDraft draft;
  DraftSink sink{draft};
  bool has_title = false;
  for (const auto& kv : body.get_object()) {
    if (kv.key() == "trace") {
      CAIRN_ASSIGN_OR_RETURN(draft.trace, ParseTrace(kv.value()));
      continue;
    }
    if (kv.key() == "title") has_title = true;
    CAIRN_RETURN_IF_ERROR(ParseCommonField(kv, limits, now_micros, sink));
  }
  if (!has_title) return Status::Validation("title", "is required");
  return draft;
}

Result<BreadcrumbPatch> ParsePatch(const json::value& body, const Limits& limits, int64_t now_micros) {
  if (!body.is_object()) return Status::Validation("body", "must be a JSON object");
  BreadcrumbPatch patch;
  PatchSink sink{patch};
  for (const auto& kv : body.get_object()) CAIRN_RETURN_IF_ERROR(ParseCommonField(kv, limits, now_micros, sink));
  if (patch.empty()) return Status::Validation("body", "names no field to update");
  return patch;
}

namespace {

json::object RecordView(const Breadcrumb& crumb, bool include_context) {
  json::object out;
  out["id"] = crumb.id;
  out["schema_name"] = OptionalString(crumb.schema_name);
  out["title"] = crumb.title;
  out["description"] = OptionalString(crumb.description);
  out["tags"] = TagArray(crumb.tags);
  if (include_context) out["context"] = crumb.context;
  out["path"] = OptionalString(crumb.path);
  out["llm_hints"] = crumb.llm_hints;
  out["version"] = crumb.version;
  out["checksum"] = crumb.checksum;
  out["visibility"] = crumb.visibility;
  out["sensitivity"] = crumb.sensitivity;
  out["acl"] = AclJson(crumb.acl);
  out["ttl"] = crumb.ttl_micros ? json::value(FormatRfc3339Micros(*crumb.ttl_micros)) : json::value(nullptr);
  out["owner_id"] = crumb.owner_id;
  out["created_by"] = crumb.created_by;
  out["updated_by"] = crumb.updated_by;
  out["trace"] = json::object{{"trace_id", crumb.trace.trace_id},
                              {"caused_by", crumb.trace.caused_by.empty() ? json::value(nullptr)
                                                                          : json::value(crumb.trace.caused_by)},
                              {"depth", crumb.trace.depth}};
  out["created_at"] = FormatRfc3339Micros(crumb.created_at);
  out["updated_at"] = FormatRfc3339Micros(crumb.updated_at);
  out["size_bytes"] = crumb.size_bytes;
  return out;
}

}  // namespace

json::object FullView(const Breadcrumb& crumb) { return RecordView(crumb, true); }

json::object ContextView(const Breadcrumb& crumb) {
  json::object out;
  out["id"] = crumb.id;
  out["schema_name"] = OptionalString(crumb.schema_name);
  out["title"] = crumb.title;
  out["tags"] = TagArray(crumb.tags);
  out["version"] = crumb.version;
  out["updated_at"] = FormatRfc3339Micros(crumb.updated_at);
  if (crumb.llm_hints.is_null()) {
    out["context"] = crumb.context;  // the common case: no copy through ApplyLlmHints
    return out;
  }
  RenderedContext rendered = ApplyLlmHints(crumb.context, crumb.llm_hints);
  out["context"] = std::move(rendered.context);
  if (rendered.text) out["rendered"] = *rendered.text;
  return out;
}

namespace {

// `view` serialised with `"context":<context>` appended as its last member.
std::string SerializeWithContext(const json::object& view, const json::value& context) {
  std::string out = json::serialize(view);
  out.pop_back();  // '}'
  out += out.size() > 1 ? ",\"context\":" : "\"context\":";
  out += json::serialize(context);
  out += '}';
  return out;
}

}  // namespace

std::string SerializeContextView(const Breadcrumb& crumb) {
  if (!crumb.llm_hints.is_null()) return json::serialize(ContextView(crumb));
  json::object head;
  head["id"] = crumb.id;
  head["schema_name"] = OptionalString(crumb.schema_name);
  head["title"] = crumb.title;
  head["tags"] = TagArray(crumb.tags);
  head["version"] = crumb.version;
  head["updated_at"] = FormatRfc3339Micros(crumb.updated_at);
  return SerializeWithContext(head, crumb.context);
}

std::string SerializeFullView(const Breadcrumb& crumb) { return json::serialize(FullView(crumb)); }

json::object ListItemView(const Breadcrumb& crumb, bool include_context) {
  return RecordView(crumb, include_context);
}

json::object VersionView(const BreadcrumbVersion& version) {
  return json::object{{"version", version.version},
                      {"title", version.title},
                      {"tags", TagArray(version.tags)},
                      {"context", version.context},
                      {"checksum", version.checksum},
                      {"updated_by", version.updated_by},
                      {"updated_at", FormatRfc3339Micros(version.updated_at)}};
}

}  // namespace cairn::model
