#include "model/llm_hints.h"

#include <boost/json/serialize.hpp>
#include <string_view>
#include <vector>

namespace cairn::model {
namespace json = boost::json;
namespace {

std::vector<std::string> SplitDots(std::string_view path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    parts.emplace_back(path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return parts;
}

const json::value* Find(const json::value& root, const std::vector<std::string>& parts) {
  const json::value* node = &root;
  for (const auto& part : parts) {
    if (!node->is_object()) return nullptr;
    node = node->get_object().if_contains(part);
    if (!node) return nullptr;
  }
  return node;
}

void CopyPath(const json::value& from, const std::vector<std::string>& parts, json::value& to) {
  const json::value* found = Find(from, parts);
  if (!found) return;
  json::value* node = &to;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    json::value& next = node->as_object()[parts[i]];
    if (!next.is_object()) next = json::object();
    node = &next;
  }
  node->as_object()[parts.back()] = *found;
}

void RemovePath(json::value& root, const std::vector<std::string>& parts) {
  json::value* node = &root;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    if (!node->is_object()) return;
    node = node->get_object().if_contains(parts[i]);
    if (!node) return;
  }
  if (node->is_object()) node->get_object().erase(parts.back());
}

Status ValidatePathList(const json::value& value, const std::string& field) {
  if (!value.is_array()) return Status::Validation(field, "must be an array of dotted field paths");
  for (size_t i = 0; i < value.get_array().size(); ++i) {
    const json::value& item = value.get_array()[i];
    if (!item.is_string() || item.get_string().empty()) {
      return Status::Validation(field + "[" + std::to_string(i) + "]", "must be a non-empty string");
    }
  }
  return Status::Ok();
}

}  // namespace

Status ValidateLlmHints(const json::value& hints) {
  if (hints.is_null()) return Status::Ok();
  if (!hints.is_object()) return Status::Validation("llm_hints", "must be an object or null");
  for (const auto& kv : hints.get_object()) {
    std::string field = "llm_hints." + std::string(kv.key());
    if (kv.key() == "include" || kv.key() == "exclude") {
      CAIRN_RETURN_IF_ERROR(ValidatePathList(kv.value(), field));
    } else if (kv.key() == "template") {
      if (!kv.value().is_string()) return Status::Validation(field, "must be a string");
    } else {
      return Status::Validation(field, "unknown field (expected include, exclude or template)");
    }
  }
  return Status::Ok();
}

RenderedContext ApplyLlmHints(const json::value& context, const json::value& hints) {
  RenderedContext out{context, std::nullopt};
  if (!hints.is_object()) return out;
  const json::object& h = hints.get_object();
  // include/exclude select object members; a template renders whatever the context is.
  if (const json::value* include = context.is_object() ? h.if_contains("include") : nullptr) {
    json::value filtered = json::object();
    for (const auto& path : include->get_array()) CopyPath(context, SplitDots(path.get_string()), filtered);
    out.context = std::move(filtered);
  }
  if (const json::value* exclude = h.if_contains("exclude")) {
    for (const auto& path : exclude->get_array()) RemovePath(out.context, SplitDots(path.get_string()));
  }
  if (const json::value* tmpl = h.if_contains("template")) {
    std::string_view text = tmpl->get_string();
    std::string rendered;
    size_t pos = 0;
    while (pos < text.size()) {
      size_t open = text.find("{{", pos);
      size_t close = open == std::string_view::npos ? open : text.find("}}", open + 2);
      if (close == std::string_view::npos) {
        rendered.append(text.substr(pos));
        break;
      }
      rendered.append(text.substr(pos, open - pos));
      std::string_view name = text.substr(open + 2, close - open - 2);
      while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
      while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
      if (const json::value* value = Find(out.context, SplitDots(name))) {
        rendered += value->is_string() ? std::string(value->get_string()) : json::serialize(*value);
      }
      pos = close + 2;
    }
    out.text = std::move(rendered);
  }
  return out;
}

}  // namespace cairn::model
