#include "base/json_util.h"

#include <openssl/evp.h>

#include <algorithm>
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
  return parser.release();
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

}  // namespace cairn
