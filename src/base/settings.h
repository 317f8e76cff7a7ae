// Settings: every tunable of cairn is declared once, as a row of a table (name, flag, environment
// variable, default, description). The same table parses the command line and the environment,
// prints `--help`, and renders docs/config.md, so the three can never disagree.
//
// Precedence: command-line flag, then environment variable, then the default.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"

namespace cairn {

enum class SettingKind { kString, kInt, kBool };

struct SettingSpec {
  std::string name;           // e.g. "max_body_bytes"; the flag is --max-body-bytes
  SettingKind kind = SettingKind::kString;
  std::string default_value;  // as it would be written on the command line
  std::string description;
  int64_t min = 0;            // bounds for kInt (inclusive)
  int64_t max = INT64_MAX;

  std::string Flag() const;    // "--max-body-bytes"
  std::string EnvVar() const;  // "CAIRN_MAX_BODY_BYTES"
};

class Settings {
 public:
  using EnvLookup = std::function<const char*(const char*)>;

  explicit Settings(std::vector<SettingSpec> specs);

  // Parses `args` (flags only: "--name value" or "--name=value"; bool flags may stand alone) over
  // the environment over defaults. Unknown flags, missing values, non-numbers and out-of-range
  // numbers are kInvalidArgument naming the flag or variable. On error nothing is changed.
  Status Parse(const std::vector<std::string>& args, const EnvLookup& env);

  // Accessors. `name` must be a declared setting of the right kind (checked; aborts otherwise).
  const std::string& GetString(const std::string& name) const;
  int64_t GetInt(const std::string& name) const;
  bool GetBool(const std::string& name) const;

  // Text for `--help`: one block per setting with flag, variable, default and description.
  std::string HelpText() const;
  // A Markdown table of all settings (docs/config.md embeds it verbatim).
  std::string MarkdownTable() const;

  const std::vector<SettingSpec>& specs() const { return specs_; }

 private:
  const SettingSpec& Spec(const std::string& name, SettingKind kind) const;
  static Status Check(const SettingSpec& spec, const std::string& value, const std::string& source);

  std::vector<SettingSpec> specs_;
  std::map<std::string, std::string> values_;
};

}  // namespace cairn
