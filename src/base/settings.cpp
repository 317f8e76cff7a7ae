#include "base/settings.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <iostream>
#include <optional>

namespace cairn {
namespace {

std::optional<int64_t> ParseInt(const std::string& text) {
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

std::optional<bool> ParseBool(const std::string& text) {
  if (text == "true" || text == "1" || text == "yes" || text == "on") return true;
  if (text == "false" || text == "0" || text == "no" || text == "off") return false;
  return std::nullopt;
}

std::string_view KindName(SettingKind kind) {
  switch (kind) {
    case SettingKind::kString: return "string";
    case SettingKind::kInt: return "integer";
    case SettingKind::kBool: return "boolean";
  }
  return "string";
}

}  // namespace

std::string SettingSpec::Flag() const {
  std::string flag = "--" + name;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

std::string SettingSpec::EnvVar() const {
  std::string var = "CAIRN_" + name;
  for (char& c : var) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return var;
}

Settings::Settings(std::vector<SettingSpec> specs) : specs_(std::move(specs)) {
  for (const auto& spec : specs_) values_[spec.name] = spec.default_value;
}

Status Settings::Check(const SettingSpec& spec, const std::string& value, const std::string& source) {
  if (spec.kind == SettingKind::kInt) {
    auto parsed = ParseInt(value);
    if (!parsed) return Status::InvalidArgument(source + ": '" + value + "' is not an integer");
    if (*parsed < spec.min || *parsed > spec.max) {
      return Status::InvalidArgument(source + ": " + value + " is out of range [" + std::to_string(spec.min) +
                                     ", " + std::to_string(spec.max) + "]");
    }
  } else if (spec.kind == SettingKind::kBool && !ParseBool(value)) {
    return Status::InvalidArgument(source + ": '" + value + "' is not a boolean (true|false)");
  }
  return Status::Ok();
}

Status Settings::Parse(const std::vector<std::string>& args, const EnvLookup& env) {
  std::map<std::string, std::string> values = values_;
  for (const auto& spec : specs_) {
    if (const char* from_env = env ? env(spec.EnvVar().c_str()) : nullptr) {
      CAIRN_RETURN_IF_ERROR(Check(spec, from_env, spec.EnvVar()));
      values[spec.name] = from_env;
    }
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    std::string flag = arg;
    std::optional<std::string> value;
    if (auto eq = arg.find('='); eq != std::string::npos) {
      flag = arg.substr(0, eq);
      value = arg.substr(eq + 1);
    }
    auto spec = std::find_if(specs_.begin(), specs_.end(), [&](const SettingSpec& s) { return s.Flag() == flag; });
    if (spec == specs_.end()) return Status::InvalidArgument("unknown option '" + flag + "' (see --help)");
    if (!value) {
      bool next_is_value = i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0;
      if (spec->kind == SettingKind::kBool && !(next_is_value && ParseBool(args[i + 1]))) {
        value = "true";
      } else if (!next_is_value) {
        return Status::InvalidArgument("option " + flag + " needs a value");
      } else {
        value = args[++i];
      }
    }
    CAIRN_RETURN_IF_ERROR(Check(*spec, *value, flag));
    values[spec->name] = *value;
  }
  values_ = std::move(values);
  return Status::Ok();
}

const SettingSpec& Settings::Spec(const std::string& name, SettingKind kind) const {
  for (const auto& spec : specs_) {
    if (spec.name == name && spec.kind == kind) return spec;
  }
  std::cerr << "fatal: setting '" << name << "' is not declared as " << KindName(kind) << "\n";
  std::abort();
}

const std::string& Settings::GetString(const std::string& name) const {
  Spec(name, SettingKind::kString);
  return values_.at(name);
}

int64_t Settings::GetInt(const std::string& name) const {
  Spec(name, SettingKind::kInt);
  return *ParseInt(values_.at(name));
}

bool Settings::GetBool(const std::string& name) const {
  Spec(name, SettingKind::kBool);
  return *ParseBool(values_.at(name));
}

std::string Settings::HelpText() const {
  std::string out;
  for (const auto& spec : specs_) {
    out += "  " + spec.Flag() + " <" + std::string(KindName(spec.kind)) + ">   (env " + spec.EnvVar() +
           ", default: " + (spec.default_value.empty() ? "\"\"" : spec.default_value) + ")\n";
    out += "      " + spec.description + "\n";
  }
  return out;
}

std::string Settings::MarkdownTable() const {
  std::string out = "| flag | environment variable | type | default | description |\n";
  out += "|---|---|---|---|---|\n";
  for (const auto& spec : specs_) {
    out += "| `" + spec.Flag() + "` | `" + spec.EnvVar() + "` | " + std::string(KindName(spec.kind)) + " | `" +
           (spec.default_value.empty() ? "(none)" : spec.default_value) + "` | " + spec.description + " |\n";
  }
  return out;
}

}  // namespace cairn
