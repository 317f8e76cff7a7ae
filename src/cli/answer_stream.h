// Waiting for an answer on the event stream: what `call` (a tool.request.v1's tool.response.v1)
// and `run --wait` (a workflow.request.v1's workflow.result.v1) share.
//
// The stream is opened before the request is written (by `write`, once the stream is open), so
// an answer however fast cannot be missed. Frames whose context `match` accepts end the wait; an
// answer too large for the stream (context_omitted) is read from the store.
#pragma once

#include <boost/json/object.hpp>
#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "base/status.h"
#include "cli/command_support.h"

namespace cairn::cli {

struct AnswerWait {
  std::string stream_query;  // the /events/stream query, e.g. "?schema_name=...&tag=..."
  std::function<Status()> write;                            // writes the request
  std::function<bool(const boost::json::object&)> match;    // the answer's context
  int64_t wait_seconds = 30;
};

struct AnswerOutcome {
  std::optional<boost::json::object> answer;  // its context; nullopt when none came
  bool interrupted = false;                   // Ctrl-C ended the wait (else: the deadline)
};
// Errors: writing the request, or the stream (refused, broken).
Result<AnswerOutcome> AwaitAnswer(CommandRun& run, const AnswerWait& wait);

// Writes a tool.request.v1 for `tool` with `input` under `request_id` and waits up to
// `wait_seconds` for its tool.response.v1 (`call`, `mcp serve`'s call_tool).
Result<AnswerOutcome> CallToolAndWait(CommandRun& run, const std::string& tool, const boost::json::value& input,
                                      const std::string& request_id, int64_t wait_seconds);

// The --input option as JSON ({} when absent); a usage error message when it does not parse.
Result<boost::json::value> InputOption(const CommandRun& run);

// Prints an answer ({status: success|error, output | error {code, message}}): its `output` (the
// whole answer with --full) and exit 0 on success; else "cairn <command>: <what> failed: code:
// message" on stderr and exit 1.
int ReportAnswer(CommandRun& run, const boost::json::object& answer, const std::string& command, const std::string& what);

// Reads the option `name` as SECONDS (1..86400; `fallback` when absent); a usage error message
// otherwise.
Result<int64_t> WaitSeconds(const CommandRun& run, const std::string& name, int64_t fallback);

}  // namespace cairn::cli
