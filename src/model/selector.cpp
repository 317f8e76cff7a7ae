#include "model/selector.h"

#include <algorithm>
#include <boost/json/array.hpp>
#include <functional>

#include "base/json_util.h"
#include "model/breadcrumb_codec.h"
#include "model/context_rule_eval.h"

namespace cairn::model {
namespace json = boost::json;
namespace {

constexpr std::string_view kEventTypes[] = {"breadcrumb.created", "breadcrumb.updated", "breadcrumb.deleted"};
constexpr std::string_view kEphemeralTypes[] = {kAgentTokenEventType, kToolProgressEventType};

using AddFn = std::function<Status(const std::string& field, std::string item)>;

bool Has(const std::vector<std::string>& list, std::string_view item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// Adds a validated tag to `out` (duplicates collapse, order kept); `list` names the whole list.
Status AddTag(const std::string& field, std::string tag, const std::string& list, const Limits& limits,
              std::vector<std::string>& out) {
  CAIRN_RETURN_IF_ERROR(ValidateTag(field, tag, limits));
  if (!Has(out, tag)) out.push_back(std::move(tag));
  if (out.size() > limits.max_tags) {
    return Status::Validation(list, "more than " + std::to_string(limits.max_tags) + " tags");
  }
  return Status::Ok();
}

Status AddType(const std::string& field, std::string type, std::vector<std::string>& out) {
  if (!IsStoredEventType(type) && !IsEphemeralEventType(type)) {
    return Status::Validation(field, "unknown event type '" + type +
                                         "' (breadcrumb.created, breadcrumb.updated, breadcrumb.deleted, agent.token, "
                                         "tool.progress)");
  }
  if (!Has(out, type)) out.push_back(std::move(type));
  return Status::Ok();
}

Status ValidatePathGlob(const std::string& field, const std::string& glob, const Limits& limits) {
  if (glob.empty() || glob.size() > limits.max_path_bytes) {
    return Status::Validation(field, "must be 1 to " + std::to_string(limits.max_path_bytes) + " bytes");
  }
  if (glob.front() == '/' || glob.back() == '/' || glob.find("//") != std::string::npos) {
    return Status::Validation(field, "segments are separated by single '/', with none at either end");
  }
  if (std::any_of(glob.begin(), glob.end(), [](char c) { return static_cast<unsigned char>(c) <= 0x20 || c == '?'; })) {
    return Status::Validation(field, "must not contain spaces, control characters or '?'");
  }
  size_t start = 0;
  while (start <= glob.size()) {
    size_t end = std::min(glob.find('/', start), glob.size());
    std::string_view segment = std::string_view(glob).substr(start, end - start);
    if (segment.find('*') != std::string_view::npos && segment != "*" && segment != "**") {
      return Status::Validation(field, "'*' and '**' must be whole segments, got '" + std::string(segment) + "'");
    }
    start = end + 1;
  }
  return Status::Ok();
}

// Feeds each string of a JSON array to `add` as "<name>[i]".
Status ReadStringArray(const json::value& value, const std::string& name, bool allow_empty, const AddFn& add) {
  if (!value.is_array()) {
    return Status::Validation(name, "must be an array of strings, got " + std::string(JsonKindName(value)));
  }
  const json::array& items = value.get_array();
  if (items.empty() && !allow_empty) return Status::Validation(name, "must not be empty (omit it instead)");
  for (size_t i = 0; i < items.size(); ++i) {
    std::string field = name + "[" + std::to_string(i) + "]";
    if (!items[i].is_string()) {
      return Status::Validation(field, "must be a string, got " + std::string(JsonKindName(items[i])));
    }
    CAIRN_RETURN_IF_ERROR(add(field, std::string(items[i].get_string())));
  }
  return Status::Ok();
}

// Feeds each item of "a,b,c" to `add` as "<name>[i]"; empty items reach `add`, which refuses them.
Status ReadCommaList(const std::string& text, const std::string& name, const AddFn& add) {
  size_t start = 0;
  for (size_t i = 0;; ++i) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    CAIRN_RETURN_IF_ERROR(add(name + "[" + std::to_string(i) + "]", std::move(item)));
    if (comma == std::string::npos) return Status::Ok();
    start = comma + 1;
  }
}

Result<std::string> RequireString(const json::value& value, const std::string& field) {
  if (!value.is_string()) return Status::Validation(field, "must be a string, got " + std::string(JsonKindName(value)));
  return std::string(value.get_string());
}

json::array StringArray(const std::vector<std::string>& items) {
  json::array out;
  for (const auto& item : items) out.emplace_back(item);
  return out;
}

}  // namespace

bool IsStoredEventType(std::string_view type) {
  return std::find(std::begin(kEventTypes), std::end(kEventTypes), type) != std::end(kEventTypes);
}

bool IsEphemeralEventType(std::string_view type) {
  return std::find(std::begin(kEphemeralTypes), std::end(kEphemeralTypes), type) != std::end(kEphemeralTypes);
}

bool SelectsStoredEvents(const Selector& selector) {
  return selector.types.empty() || std::any_of(selector.types.begin(), selector.types.end(),
                                                [](const std::string& t) { return IsStoredEventType(t); });
}

bool SelectsEphemeralEvents(const Selector& selector) {
  return std::any_of(selector.types.begin(), selector.types.end(),
                     [](const std::string& t) { return IsEphemeralEventType(t); });
}

Result<Selector> ParseSelector(const json::value& input, const Limits& limits) {
  if (!input.is_object()) return Status::Validation("selector", "must be a JSON object");
  Selector s;
  for (const auto& member : input.get_object()) {
    std::string key(member.key());
    const json::value& value = member.value();
    if (key == "schema_name") {
      CAIRN_ASSIGN_OR_RETURN(std::string name, RequireString(value, key));
      CAIRN_RETURN_IF_ERROR(ValidateSchemaName(key, name, limits));
      s.schema_name = std::move(name);
    } else if (key == "any_tags" || key == "all_tags") {
      std::vector<std::string>& out = key == "any_tags" ? s.any_tags : s.all_tags;
      CAIRN_RETURN_IF_ERROR(ReadStringArray(value, key, key == "all_tags", [&](const std::string& field, std::string tag) {
        return AddTag(field, std::move(tag), key, limits, out);
      }));
    } else if (key == "path") {
      CAIRN_ASSIGN_OR_RETURN(std::string glob, RequireString(value, key));
      CAIRN_RETURN_IF_ERROR(ValidatePathGlob(key, glob, limits));
      s.path = std::move(glob);
    } else if (key == "context_match") {
      CAIRN_ASSIGN_OR_RETURN(s.context_match, ParseContextRules(value, limits));
    } else if (key == "types") {
      CAIRN_RETURN_IF_ERROR(ReadStringArray(value, key, false, [&](const std::string& field, std::string type) {
        return AddType(field, std::move(type), s.types);
      }));
    } else if (key == "when") {
      CAIRN_ASSIGN_OR_RETURN(s.when, RequireString(value, key));
      CAIRN_ASSIGN_OR_RETURN(s.condition, EventExpression::Compile(s.when, key));
    } else {
      return Status::Validation(key, "unknown selector field (schema_name, any_tags, all_tags, path, context_match, types, "
                                     "when)");
    }
  }
  return s;
}

Result<Selector> ParseSelectorQuery(const std::vector<std::pair<std::string, std::string>>& params,
                                    const std::vector<std::string>& ignored, const Limits& limits) {
  Selector s;
  std::vector<std::string> seen;
  for (const auto& [name, value] : params) {
    if (Has(ignored, name)) continue;
    if (name != "tag" && Has(seen, name)) return Status::Validation(name, "query parameter given more than once");
    seen.push_back(name);
    if (name == "schema_name") {
      CAIRN_RETURN_IF_ERROR(ValidateSchemaName(name, value, limits));
      s.schema_name = value;
    } else if (name == "tag") {
      CAIRN_RETURN_IF_ERROR(AddTag(name, value, "all_tags", limits, s.all_tags));
    } else if (name == "any_tags" || name == "all_tags") {
      std::vector<std::string>& out = name == "any_tags" ? s.any_tags : s.all_tags;
      CAIRN_RETURN_IF_ERROR(ReadCommaList(value, name, [&](const std::string& field, std::string tag) {
        return AddTag(field, std::move(tag), name, limits, out);
      }));
    } else if (name == "path") {
      CAIRN_RETURN_IF_ERROR(ValidatePathGlob(name, value, limits));
      s.path = value;
    } else if (name == "types") {
      CAIRN_RETURN_IF_ERROR(ReadCommaList(value, name, [&](const std::string& field, std::string type) {
        return AddType(field, std::move(type), s.types);
      }));
    } else if (name == "context_match") {
      auto rules_json = ParseJson(value, limits.max_json_depth);
      if (!rules_json.ok()) return Status::Validation(name, "is not valid JSON: " + rules_json.status().message());
      CAIRN_ASSIGN_OR_RETURN(s.context_match, ParseContextRules(*rules_json, limits));
    } else if (name == "when") {
      s.when = value;
      CAIRN_ASSIGN_OR_RETURN(s.condition, EventExpression::Compile(s.when, name));
    } else {
      return Status::Validation(name, "unknown query parameter");
    }
  }
  return s;
}

json::object SelectorToJson(const Selector& selector) {
  json::object out;
  if (selector.schema_name) out["schema_name"] = *selector.schema_name;
  if (!selector.any_tags.empty()) out["any_tags"] = StringArray(selector.any_tags);
  if (!selector.all_tags.empty()) out["all_tags"] = StringArray(selector.all_tags);
  if (selector.path) out["path"] = *selector.path;
  if (!selector.context_match.empty()) {
    json::array rules;
    for (const auto& rule : selector.context_match) {
      rules.push_back(json::object{{"path", rule.path}, {"op", RuleOpName(rule.op)}, {"value", rule.value}});
    }
    out["context_match"] = std::move(rules);
  }
  if (!selector.types.empty()) out["types"] = StringArray(selector.types);
  if (!selector.when.empty()) out["when"] = selector.when;
  return out;
}

bool Matches(const Selector& selector, const Event& event) {
  if (selector.types.empty() ? !IsStoredEventType(event.type) : !Has(selector.types, event.type)) return false;
  if (selector.schema_name && event.schema_name != selector.schema_name) return false;
  auto carried = [&](const std::string& tag) { return Has(event.tags, tag); };
  if (!selector.any_tags.empty() && std::none_of(selector.any_tags.begin(), selector.any_tags.end(), carried)) {
    return false;
  }
  if (!std::all_of(selector.all_tags.begin(), selector.all_tags.end(), carried)) return false;
  if (selector.path && (!event.path || !PathGlobMatches(*selector.path, *event.path))) return false;
  if (!AllRulesHold(selector.context_match, event.context)) return false;
  return !selector.condition || selector.condition->Holds(event);
}

bool PathGlobMatches(std::string_view glob, std::string_view path) {
  auto split = [](std::string_view text) {
    std::vector<std::string_view> parts;
    if (text.empty()) return parts;
    size_t start = 0;
    while (true) {
      size_t slash = text.find('/', start);
      parts.push_back(text.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start));
      if (slash == std::string_view::npos) return parts;
      start = slash + 1;
    }
  };
  std::vector<std::string_view> g = split(glob);
  std::vector<std::string_view> p = split(path);
  // Wildcard matching over segments ('**' as '*', '*' as '?'): on a mismatch, let the most
  // recent '**' swallow one more segment and retry from there.
  constexpr size_t kNone = static_cast<size_t>(-1);
  size_t gi = 0, pi = 0, star = kNone, star_pi = 0;
  while (pi < p.size()) {
    if (gi < g.size() && g[gi] == "**") {
      star = gi++;
      star_pi = pi;
    } else if (gi < g.size() && (g[gi] == "*" || g[gi] == p[pi])) {
      ++gi;
      ++pi;
    } else if (star != kNone) {
      gi = star + 1;
      pi = ++star_pi;
    } else {
      return false;
    }
  }
  while (gi < g.size() && g[gi] == "**") ++gi;
  return gi == g.size();
}

}  // namespace cairn::model
