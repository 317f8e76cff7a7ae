// ArgParser: the command-line grammar shared by every client subcommand.
//
// Grammar (getopt_long-like, so it behaves as people expect):
//   --name VALUE and --name=VALUE   an option that takes a value; the next argument is taken as the
//                                   value even if it starts with '-' (so `--context -` means stdin)
//   --flag                          an option without value; `--flag=x` is an error
//   -x                              the declared short form of an option (e.g. -h)
//   --                              everything after it is positional (ids starting with '-')
//   -                               a positional argument (conventionally stdin)
// Unknown options, a missing value, a non-repeatable option given twice and a wrong number of
// positional arguments are kInvalidArgument with a message naming the culprit. Options and
// positionals may be interleaved.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace cairn::cli {

struct OptionSpec {
  std::string name;        // long name without dashes, e.g. "title"
  std::string value_name;  // placeholder in the usage text ("TEXT"); empty = a flag without value
  std::string help;        // one line
  bool repeatable = false;  // may be given several times (values are kept in order)
  char short_name = 0;      // e.g. 'h' for -h; 0 = none

  bool takes_value() const { return !value_name.empty(); }
};

// What a parse produced: option values by long name, positionals in order.
class ParsedArgs {
 public:
  // True if the option was given (flag or valued).
  bool Has(std::string_view name) const { return values_.find(std::string(name)) != values_.end(); }
  // The value of a (non-repeatable) valued option; for a repeatable one, the last value.
  std::optional<std::string> Get(std::string_view name) const;
  // Every value of the option in command-line order (empty if absent).
  const std::vector<std::string>& GetAll(std::string_view name) const;
  const std::vector<std::string>& positionals() const { return positionals_; }

 private:
  friend class ArgParser;
  std::map<std::string, std::vector<std::string>> values_;  // a flag maps to an empty vector
  std::vector<std::string> positionals_;
};

class ArgParser {
 public:
  // `positional_names` documents the positional arguments in the usage ("ID"); between
  // `min_positionals` and `max_positionals` of them are accepted.
  ArgParser(std::string command, std::vector<OptionSpec> options, std::string positional_names = {},
            size_t min_positionals = 0, size_t max_positionals = 0);

  Result<ParsedArgs> Parse(const std::vector<std::string>& args) const;

  // "usage: cairn <command> <synopsis>" followed by one aligned line per option.
  // `synopsis` defaults to "[options] <positional_names>".
  std::string Usage(std::string_view summary = {}, std::string_view synopsis = {}) const;

  const std::vector<OptionSpec>& options() const { return options_; }

 private:
  const OptionSpec* FindLong(std::string_view name) const;
  const OptionSpec* FindShort(char name) const;

  std::string command_;
  std::vector<OptionSpec> options_;
  std::string positional_names_;
  size_t min_positionals_;
  size_t max_positionals_;
};

}  // namespace cairn::cli
