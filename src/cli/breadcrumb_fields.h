// The record fields of `cairn put` and `cairn update`: their options, and the JSON body built
// from them.
//
// The client checks only what it must to build the body (JSON syntax of --context/--llm-hints,
// readable files, the --ttl form, options that contradict each other); the rules on values
// (title length, tag syntax, visibility names...) stay with the server, which reports them with
// the field at fault. Problems found here are usage errors: nothing has been sent.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <istream>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "cli/arg_parser.h"

namespace cairn::cli {

// Options for the fields; `for_update` adds --clear and --if-match and drops --idempotency-key.
std::vector<OptionSpec> BreadcrumbFieldOptions(bool for_update);

// The POST /breadcrumbs body. --title is required. `in` is read for `--context -` or
// `--context-file -`; `now_micros` resolves --ttl durations.
Result<boost::json::object> BuildCreateBody(const ParsedArgs& args, std::istream& in, int64_t now_micros);

// The PATCH /breadcrumbs/{id} body: only the fields given; --clear F sends null (tags: []).
// kInvalidArgument when nothing would change or a field is both set and cleared.
Result<boost::json::object> BuildUpdateBody(const ParsedArgs& args, std::istream& in, int64_t now_micros);

// The `context_match` query parameter from every --match (a rule or an array of rules; `-` reads
// `in`): all must hold, so several are sent as one JSON array.
Result<std::string> ContextMatchParameter(const ParsedArgs& args, std::istream& in);

// Parses JSON given on the command line for `option` ("--context"); "-" reads `in` to its end.
Result<boost::json::value> ReadJsonArgument(std::string_view option, const std::string& text, std::istream& in);

// Parses the JSON file at `path` for `option` ("--context-file"); "-" reads `in` to its end.
Result<boost::json::value> ReadJsonFile(std::string_view option, const std::string& path, std::istream& in);

}  // namespace cairn::cli
