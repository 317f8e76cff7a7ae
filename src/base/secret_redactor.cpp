#include "base/secret_redactor.h"

#include <algorithm>
#include <boost/json/serialize.hpp>

#include "base/base64.h"
#include "base/json_util.h"

namespace cairn {
namespace {

// Shorter partial base64 forms would match too much unrelated text.
constexpr size_t kMinPartialBase64 = 8;

bool Unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_' || c == '~';
}

std::string PercentEncode(std::string_view value, const char* digits, bool plus_for_space) {
  std::string out;
  for (unsigned char c : value) {
    if (Unreserved(c)) {
      out += static_cast<char>(c);
    } else if (c == ' ' && plus_for_space) {
      out += '+';
    } else {
      out += '%';
      out += digits[c >> 4];
      out += digits[c & 15];
    }
  }
  return out;
}

}  // namespace

void SecretRedactor::AddForm(std::string form, const std::string& label) {
  if (form.empty()) return;
  for (const auto& [known, known_label] : forms_) {
    if (known == form) return;
  }
  forms_.emplace_back(std::move(form), label);
}

void SecretRedactor::Add(std::string_view value, const std::string& label) {
  if (value.empty()) return;
  AddForm(std::string(value), label);
  std::string escaped = boost::json::serialize(boost::json::value(boost::json::string_view(value.data(), value.size())));
  AddForm(escaped.substr(1, escaped.size() - 2), label);
  // Base64 at each of the three byte offsets a value can start at inside a longer text.
  for (size_t offset = 0; offset < 3; ++offset) {
    std::string shifted(offset, '\0');
    shifted.append(value);
    std::string encoded = Base64Encode(shifted);
    if (offset == 0) {
      AddForm(encoded, label);
      AddForm(ToUrlAlphabet(encoded), label);
    }
    // Only the characters every bit of which comes from the value: skip those the offset bytes
    // touch, and the last partial one.
    size_t skip = offset == 0 ? 0 : offset + 1;
    size_t whole = (shifted.size() * 8) / 6;
    if (whole <= skip) continue;
    std::string core = encoded.substr(skip, whole - skip);
    if (core.size() < kMinPartialBase64) continue;
    AddForm(WithoutPadding(core), label);
    AddForm(ToUrlAlphabet(WithoutPadding(core)), label);
  }
  AddForm(PercentEncode(value, "0123456789ABCDEF", false), label);
  AddForm(PercentEncode(value, "0123456789abcdef", false), label);
  AddForm(PercentEncode(value, "0123456789ABCDEF", true), label);
  // Longest first, so a form that contains another is replaced whole.
  std::stable_sort(forms_.begin(), forms_.end(), [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
}

std::string SecretRedactor::Redact(std::string text) const {
  for (const auto& [form, label] : forms_) {
    for (size_t at = text.find(form); at != std::string::npos; at = text.find(form, at + label.size())) {
      text.replace(at, form.size(), label);
    }
  }
  return text;
}

Result<boost::json::value> SecretRedactor::RedactJson(const boost::json::value& value, size_t max_depth) const {
  if (forms_.empty()) return value;
  auto redacted = ParseJson(Redact(boost::json::serialize(value)), max_depth);
  if (!redacted.ok()) return Status::Internal("a value holding a secret could not be redacted");
  return std::move(redacted).value();
}

Status SecretRedactor::RedactStatus(const Status& status) const {
  if (status.ok() || forms_.empty()) return status;
  Status out(status.code(), Redact(status.message()), status.field());
  if (!status.reason().empty()) out = std::move(out).WithReason(status.reason());
  return out;
}

}  // namespace cairn
