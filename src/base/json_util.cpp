#include "base/json_util.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <boost/json/parser.hpp>
#include <boost/json/serialize.hpp>
#include <vector>

namespace cairn {
namespace json = boost::json;

Result<json::value> ParseJson(std::string_view text, size_t max_depth) {
  json::parse_options options;
  options.max_depth = max_depth;
  options.allow_invalid_utf8 = false;
  options.allow_comments = false;
  options.allow_trailing_commas = false;
  // One parser per thread and depth, reused: constructing one per call costs more than parsing a
  // small document.
  thread_local std::unique_ptr<json::parser> cached;
  thread_local size_t cached_depth = 0;
  if (!cached || cached_depth != max_depth) {
    cached = std::make_unique<json::parser>(json::storage_ptr(), options);
    cached_depth = max_depth;
  }
  json::parser& parser = *cached;
  parser.reset();
  boost::system::error_code ec;
  size_t consumed = parser.write(text.data(), text.size(), ec);
  if (ec) {
    if (ec == json::error::too_deep) {
      return Status::InvalidArgument("JSON nested deeper than " + std::to_string(max_depth) + " levels");
    }
    return Status::InvalidArgument("malformed JSON at byte " + std::to_string(consumed) + ": " + ec.message());
  }
  json::value value = parser.release();
  if (auto path = FindNonFiniteNumber(value)) {
    return Status::InvalidArgument("number out of range at " + *path +
                                   ": JSON numbers must be finite (at most about 1.8e308 in magnitude)");
  }
  return value;
}

namespace {

bool IsIdentifier(std::string_view key) {
  if (key.empty() || (key[0] >= '0' && key[0] <= '9')) return false;
  for (char c : key) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

// Walks `value`; on the first non-finite number, writes its path's steps (innermost first) to
// `steps` and returns true. The path is only built on the way out of a hit, so a clean walk
// allocates nothing.
bool FindNonFinite(const json::value& value, std::vector<std::string>& steps) {
  switch (value.kind()) {
    case json::kind::double_:
      return !std::isfinite(value.get_double());
    case json::kind::array: {
      const json::array& items = value.get_array();
      for (size_t i = 0; i < items.size(); ++i) {
        if (FindNonFinite(items[i], steps)) {
          steps.push_back("[" + std::to_string(i) + "]");
          return true;
        }
      }
      return false;
    }
    case json::kind::object:
      for (const auto& kv : value.get_object()) {
        if (FindNonFinite(kv.value(), steps)) {
          std::string_view key = kv.key();
          steps.push_back(IsIdentifier(key) ? "." + std::string(key)
                                            : "[" + json::serialize(json::string_view(key)) + "]");
          return true;
        }
      }
      return false;
    default:
      return false;
  }
}

}  // namespace

std::optional<std::string> FindNonFiniteNumber(const json::value& value) {
  std::vector<std::string> steps;
  if (!FindNonFinite(value, steps)) return std::nullopt;
  std::string path = "$";
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) path += *it;
  return path;
}

Status CheckFiniteNumbers(const json::value& value, std::string_view what) {
  auto path = FindNonFiniteNumber(value);
  if (!path) return Status::Ok();
  return Status::InvalidArgument(std::string(what) + ": number out of range at " + *path +
                                 " (JSON numbers must be finite)");
}

namespace {

void AppendCanonical(const json::value& value, std::string& out) {
  switch (value.kind()) {
    case json::kind::object: {
      const json::object& obj = value.get_object();
      std::vector<const json::key_value_pair*> entries;
      entries.reserve(obj.size());
      for (const auto& kv : obj) entries.push_back(&kv);
      std::sort(entries.begin(), entries.end(),
                [](const auto* a, const auto* b) { return a->key() < b->key(); });
      out.push_back('{');
      bool first = true;
      for (const auto* kv : entries) {
        if (!first) out.push_back(',');
        first = false;
        out += json::serialize(json::string_view(kv->key()));
        out.push_back(':');
        AppendCanonical(kv->value(), out);
      }
      out.push_back('}');
      return;
    }
    case json::kind::array: {
      out.push_back('[');
      bool first = true;
      for (const auto& item : value.get_array()) {
        if (!first) out.push_back(',');
        first = false;
        AppendCanonical(item, out);
      }
      out.push_back(']');
      return;
    }
    default:
      out += json::serialize(value);
  }
}

}  // namespace

std::string CanonicalJson(const json::value& value) {
  std::string out;
  AppendCanonical(value, out);
  return out;
}

std::string Sha256Checksum(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "sha256:";
  out.reserve(7 + 2 * length);
  for (unsigned int i = 0; i < length; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 0x0F]);
  }
  return out;
}

size_t JsonDepth(const json::value& value) {
  size_t deepest = 0;
  if (value.is_object()) {
    for (const auto& kv : value.get_object()) deepest = std::max(deepest, JsonDepth(kv.value()));
    return deepest + 1;
  }
  if (value.is_array()) {
    for (const auto& item : value.get_array()) deepest = std::max(deepest, JsonDepth(item));
    return deepest + 1;
  }
  return 0;
}

std::string_view JsonKindName(const json::value& value) {
  switch (value.kind()) {
    case json::kind::null: return "null";
    case json::kind::bool_: return "boolean";
    case json::kind::int64:
    case json::kind::uint64:
    case json::kind::double_: return "number";
    case json::kind::string: return "string";
    case json::kind::array: return "array";
    case json::kind::object: return "object";
  }
  return "unknown";
}

std::string StringMember(const boost::json::object& object, std::string_view key) {
  const boost::json::value* v = object.if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : "";
}

}  // namespace cairn
