// SecretRedactor: the one way cairn keeps secret values out of what it stores, shows and logs
// (docs/secrets.md). Whatever holds a secret value for a moment (a process tool's environment, an
// http tool's or webhook's header, a webhook's signing secret, an LLM API key) adds the value
// here and passes every text that could carry it back (tool results, error messages, log lines,
// provider errors, delivery errors) through Redact before it is stored, returned or logged.
//
// A value is replaced by its label ("[secret:NAME]" for a tenant's secret, "***" for an
// operator's key) in these forms:
//   - as it is, and as a JSON string escapes it;
//   - base64 and base64url, padded or not, standing alone or inside a longer base64 text at any
//     byte offset (so "Basic " + base64("user:" + value) is caught: at offsets 1 and 2 only the
//     characters that depend on the value alone are replaced, and only when there are at least 8
//     of them);
//   - percent-encoded (upper- and lower-case hex; "+" for spaces as in forms).
// A program that transforms a value otherwise (reverses, splits, hashes it) can still show a
// recognisable form of it: what holds a secret is trusted with it.
//
// Not thread-safe for Add; Redact is const and may run on many threads once the adding is done.
#pragma once

#include <boost/json/value.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/base64.h"
#include "base/status.h"

namespace cairn {

class SecretRedactor {
 public:
  // Every form of `value` becomes `label` (an empty value adds nothing).
  void Add(std::string_view value, const std::string& label);
  // A tenant's secret: `value` becomes "[secret:<name>]".
  void AddSecret(const std::string& name, std::string_view value) { Add(value, SecretLabel(name)); }

  bool empty() const { return forms_.empty(); }

  // `text` with every form of every value replaced by its label.
  std::string Redact(std::string text) const;
  std::string operator()(std::string text) const { return Redact(std::move(text)); }
  // A JSON value with every form redacted, wherever it occurs (keys and strings); kInternal in
  // the unexpected case that the redacted text is no JSON any more.
  Result<boost::json::value> RedactJson(const boost::json::value& value, size_t max_depth = 64) const;
  // A status with its message redacted (code, field and reason kept).
  Status RedactStatus(const Status& status) const;

  static std::string SecretLabel(const std::string& name) { return "[secret:" + name + "]"; }

 private:
  void AddForm(std::string form, const std::string& label);

  std::vector<std::pair<std::string, std::string>> forms_;  // (form, label), longest forms first
};

}  // namespace cairn
