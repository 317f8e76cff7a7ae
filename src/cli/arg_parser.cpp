#include "cli/arg_parser.h"

#include <algorithm>

namespace cairn::cli {

std::optional<std::string> ParsedArgs::Get(std::string_view name) const {
  auto it = values_.find(std::string(name));
  if (it == values_.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

const std::vector<std::string>& ParsedArgs::GetAll(std::string_view name) const {
  static const std::vector<std::string> kEmpty;
  auto it = values_.find(std::string(name));
  return it == values_.end() ? kEmpty : it->second;
}

ArgParser::ArgParser(std::string command, std::vector<OptionSpec> options, std::string positional_names,
                     size_t min_positionals, size_t max_positionals)
    : command_(std::move(command)),
      options_(std::move(options)),
      positional_names_(std::move(positional_names)),
      min_positionals_(min_positionals),
      max_positionals_(std::max(min_positionals, max_positionals)) {}

const OptionSpec* ArgParser::FindLong(std::string_view name) const {
  for (const auto& option : options_) {
    if (option.name == name) return &option;
  }
  return nullptr;
}

const OptionSpec* ArgParser::FindShort(char name) const {
  for (const auto& option : options_) {
    if (option.short_name != 0 && option.short_name == name) return &option;
  }
  return nullptr;
}

Result<ParsedArgs> ArgParser::Parse(const std::vector<std::string>& args) const {
  ParsedArgs parsed;
  bool options_ended = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (options_ended || arg == "-" || arg.empty() || arg[0] != '-') {
      parsed.positionals_.push_back(arg);
      continue;
    }
    if (arg == "--") {
      options_ended = true;
      continue;
    }

    const OptionSpec* spec = nullptr;
    std::string shown;  // the option as the user wrote it, for messages
    std::optional<std::string> inline_value;
    if (arg.starts_with("--")) {
      std::string_view body = std::string_view(arg).substr(2);
      const size_t eq = body.find('=');
      if (eq != std::string_view::npos) {
        inline_value = std::string(body.substr(eq + 1));
        body = body.substr(0, eq);
      }
      spec = FindLong(body);
      shown = "--" + std::string(body);
    } else if (arg.size() == 2) {
      spec = FindShort(arg[1]);
      shown = arg;
    } else {
      shown = arg;
    }
    if (spec == nullptr) {
      return Status::InvalidArgument("cairn " + command_ + ": unknown option '" + shown + "'");
    }
    shown = "--" + spec->name;

    auto [it, inserted] = parsed.values_.try_emplace(spec->name);
    if (!inserted && !spec->repeatable) {
      return Status::InvalidArgument("cairn " + command_ + ": " + shown + " given more than once");
    }
    if (!spec->takes_value()) {
      if (inline_value.has_value()) {
        return Status::InvalidArgument("cairn " + command_ + ": " + shown + " does not take a value");
      }
      continue;
    }
    if (!inline_value.has_value()) {
      if (i + 1 >= args.size()) {
        return Status::InvalidArgument("cairn " + command_ + ": " + shown + " needs a value (" +
                                       spec->value_name + ")");
      }
      inline_value = args[++i];
    }
    it->second.push_back(std::move(*inline_value));
  }

  const size_t count = parsed.positionals_.size();
  if (count < min_positionals_) {
    return Status::InvalidArgument("cairn " + command_ + ": missing " +
                                   (positional_names_.empty() ? std::string("argument") : positional_names_));
  }
  if (count > max_positionals_) {
    std::string message = "cairn " + command_ + ": unexpected argument '" + parsed.positionals_[max_positionals_] + "'";
    return Status::InvalidArgument(std::move(message));
  }
  return parsed;
}

std::string ArgParser::Usage(std::string_view summary, std::string_view synopsis) const {
  std::string out = "usage: cairn " + command_ + " ";
  if (!synopsis.empty()) {
    out += synopsis;
  } else {
    out += "[options]";
    if (!positional_names_.empty()) out += " " + positional_names_;
  }
  out += '\n';
  if (!summary.empty()) {
    out += "  ";
    out += summary;
    out += '\n';
  }

  std::vector<std::string> lefts;
  size_t width = 0;
  for (const auto& option : options_) {
    std::string left = option.short_name != 0 ? std::string("-") + option.short_name + ", " : std::string();
    left += "--" + option.name;
    if (option.takes_value()) left += " " + option.value_name;
    width = std::max(width, left.size());
    lefts.push_back(std::move(left));
  }
  if (!options_.empty()) out += "options:\n";
  for (size_t i = 0; i < options_.size(); ++i) {
    out += "  " + lefts[i];
    out.append(width - lefts[i].size() + 2, ' ');
    out += options_[i].help;
    if (options_[i].repeatable) out += " (repeatable)";
    out += '\n';
  }
  return out;
}

}  // namespace cairn::cli
