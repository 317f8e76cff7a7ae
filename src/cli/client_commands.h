// The client subcommands of `cairn`: put, get, list, update, rm, history, tail, tools, call, chat.
//
// Each is a client of the HTTP API (docs/api.md) of a running `cairn serve`, chosen with
// --server URL, else the CAIRN_SERVER environment variable, else http://127.0.0.1:8081.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace cairn::cli {

// True if `command` is one of the client subcommands (put, get, list, update, rm, history, tail,
// tools, call, chat).
bool IsClientCommand(std::string_view command);

// Runs a client subcommand with its arguments (argv after the subcommand). Prints results to `out`,
// errors to `err`; returns the process exit code (0 success, 1 server/network error, 2 usage error).
// `--help` / `-h` prints the subcommand's usage to `out` and returns 0. Reads standard input only
// for `--context -` and `--context-file -` (and `--match -`), and `chat` reads its messages from
// it. `tail` runs until --max-events, a fatal error, or SIGINT/SIGTERM (exit 0), `chat` until
// stdin ends or SIGINT/SIGTERM; they handle those two signals while they run.
int RunClientCommand(std::string_view command, const std::vector<std::string>& args, std::ostream& out,
                     std::ostream& err);

// Usage text for all client subcommands.
std::string ClientUsage();

}  // namespace cairn::cli
