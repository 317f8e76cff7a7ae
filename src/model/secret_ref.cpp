#include "model/secret_ref.h"

#include <algorithm>
#include <boost/json/object.hpp>
#include <cctype>
#include <set>

#include "base/json_util.h"

namespace cairn::model {
namespace json = boost::json;
namespace {

constexpr size_t kMaxHeaders = 32;
constexpr size_t kMaxHeaderNameBytes = 256;
constexpr size_t kMaxHeaderValueBytes = 8192;
constexpr size_t kMaxPrefixBytes = 256;

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// RFC 9110 token characters.
bool IsHeaderName(std::string_view name) {
  if (name.empty() || name.size() > kMaxHeaderNameBytes) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
  });
}

bool IsReservedHeader(std::string_view name) {
  std::string lower = Lower(name);
  return lower == "content-type" || lower == "content-length" || lower == "host" || lower == "transfer-encoding" ||
         lower == "connection" || lower.starts_with("x-cairn-") || lower.starts_with("x-rcrt-");
}

bool HasLineBreakOrNul(std::string_view text) { return text.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos; }

}  // namespace

bool IsValidSecretName(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return name != "." && name != "..";
}

bool LooksLikeSecretReference(const json::value& value) {
  return value.is_object() && value.as_object().contains("secret");
}

Result<SecretOrValue> ParseSecretReference(const json::value& value, const std::string& field, bool allow_prefix) {
  const std::string shape = allow_prefix ? "{\"secret\": \"NAME\"} (optionally with \"prefix\")" : "{\"secret\": \"NAME\"}";
  if (!value.is_object()) return Status::Validation(field, "must be " + shape);
  SecretOrValue out;
  bool named = false;
  for (const auto& [key, member] : value.as_object()) {
    if (key == "secret") {
      if (!member.is_string() || !IsValidSecretName(member.as_string())) {
        return Status::Validation(field + ".secret", "must name a secret: 1 to 128 of A-Z a-z 0-9 _ . -");
      }
      out.secret_name = std::string(member.as_string());
      named = true;
    } else if (key == "prefix" && allow_prefix) {
      if (!member.is_string() || member.as_string().size() > kMaxPrefixBytes || HasLineBreakOrNul(member.as_string())) {
        return Status::Validation(field + ".prefix", "must be a string of at most 256 bytes without line breaks");
      }
      out.value = std::string(member.as_string());
    } else {
      return Status::Validation(field + "." + std::string(key), "unknown field: a reference is " + shape);
    }
  }
  if (!named) return Status::Validation(field, "must be " + shape);
  return out;
}

Result<SecretOrValue> ParseSecretOrValue(const json::value& value, const std::string& field, size_t max_bytes,
                                         bool allow_prefix) {
  if (value.is_object()) return ParseSecretReference(value, field, allow_prefix);
  if (!value.is_string()) {
    return Status::Validation(field, "must be a string or {\"secret\": \"NAME\"}, got " + std::string(JsonKindName(value)));
  }
  const auto& text = value.as_string();
  if (text.empty() || text.size() > max_bytes) {
    return Status::Validation(field, "must be 1 to " + std::to_string(max_bytes) + " bytes");
  }
  if (HasLineBreakOrNul(text)) return Status::Validation(field, "must not contain line breaks or NUL");
  return SecretOrValue{std::string(text), ""};
}

json::value SecretOrValueToJson(const SecretOrValue& value) {
  if (!value.is_reference()) return json::value(value.value);
  json::object out{{"secret", value.secret_name}};
  if (!value.value.empty()) out["prefix"] = value.value;
  return out;
}

Result<HeaderList> ParseHeaderList(const json::value& value, const std::string& field) {
  if (!value.is_object()) return Status::Validation(field, "must be an object of header names to strings or {\"secret\": \"NAME\"}");
  if (value.as_object().size() > kMaxHeaders) return Status::Validation(field, "may name at most 32 headers");
  HeaderList out;
  std::set<std::string> seen;
  for (const auto& [name, header_value] : value.as_object()) {
    const std::string entry = field + "." + std::string(name);
    if (!IsHeaderName(name)) return Status::Validation(entry, "is not a header name (an HTTP token of at most 256 bytes)");
    if (IsReservedHeader(name)) return Status::Validation(entry, "is set by cairn itself");
    if (!seen.insert(Lower(name)).second) return Status::Validation(entry, "is given twice");
    CAIRN_ASSIGN_OR_RETURN(SecretOrValue parsed, ParseSecretOrValue(header_value, entry, kMaxHeaderValueBytes, true));
    out.emplace_back(std::string(name), std::move(parsed));
  }
  return out;
}

json::value HeaderListToJson(const HeaderList& headers) {
  json::object out;
  for (const auto& [name, value] : headers) out[name] = SecretOrValueToJson(value);
  return out;
}

Result<std::string> ResolveSecretOrValue(const SecretOrValue& given, const std::string& tenant,
                                         const SecretResolver& resolve, const std::string& where,
                                         SecretRedactor* redact) {
  if (!given.is_reference()) return given.value;
  if (!resolve) {
    return Status::FailedPrecondition(where + ": secret " + given.secret_name + " cannot be read: this server has no secrets")
        .WithReason("secret_not_found");
  }
  Result<std::string> value = resolve(tenant, given.secret_name);
  if (!value.ok()) {
    if (value.status().code() == StatusCode::kNotFound) {
      return Status::NotFound(where + ": secret '" + given.secret_name + "' not found in tenant " + tenant +
                              " (create it with POST /secrets)")
          .WithReason("secret_not_found");
    }
    return value.status().Prefixed(where + ": secret " + given.secret_name + ": ");
  }
  if (redact) redact->AddSecret(given.secret_name, *value);
  return given.value + *value;
}

Result<std::vector<std::pair<std::string, std::string>>> ResolveHeaders(const HeaderList& headers,
                                                                        const std::string& tenant,
                                                                        const SecretResolver& resolve,
                                                                        SecretRedactor* redact) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, value] : headers) {
    CAIRN_ASSIGN_OR_RETURN(std::string resolved, ResolveSecretOrValue(value, tenant, resolve, "header " + name, redact));
    if (HasLineBreakOrNul(resolved)) {
      return Status::FailedPrecondition("header " + name + ": secret " + value.secret_name +
                                        " contains a line break or NUL and cannot be sent in a header");
    }
    out.emplace_back(name, std::move(resolved));
  }
  return out;
}

}  // namespace cairn::model
