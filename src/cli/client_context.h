// ClientContext: everything a client command takes from its process, made injectable.
//
// RunClientCommand (client_commands.h) fills it with std::cin, getenv, libcurl, the system
// clock and SIGINT/SIGTERM; tests fill it with string streams, a fixed environment, a scripted HttpClient and a
// fixed time, and run the very same command code.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cli/curl_http_client.h"
#include "cli/http_client.h"
#include "cli/stop_signal.h"

namespace cairn::cli {

struct ClientContext {
  std::istream& in;   // read by `--context -` / `--context-file -`
  std::ostream& out;  // results
  std::ostream& err;  // errors, usage and notes
  // getenv-like: nullptr when unset.
  std::function<const char*(const char*)> env;
  // Makes the HttpClient for one command run (timeouts come from the command line).
  std::function<std::unique_ptr<HttpClient>(const CurlOptions&)> make_http;
  // Microseconds since the epoch (for --ttl durations).
  std::function<int64_t()> now_micros;
  // For `tail`: makes the streaming HTTP client (its connect timeout from the command line), and
  // the stop request (SIGINT/SIGTERM in the real process). Left empty, `tail` fails.
  std::function<std::unique_ptr<StreamingHttpClient>(const CurlOptions&)> make_stream_http = {};
  std::function<std::unique_ptr<StopSignal>()> make_stop = {};
};

// RunClientCommand with an explicit context: same contract as the public entry point.
int RunClientCommandIn(std::string_view command, const std::vector<std::string>& args, ClientContext& context);

}  // namespace cairn::cli
