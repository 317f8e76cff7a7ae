// ClientContext: everything a client command takes from its process, made injectable.
//
// RunClientCommand (client_commands.h) fills it with std::cin, getenv, libcurl and the system
// clock; tests fill it with string streams, a fixed environment, a scripted HttpClient and a
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
};

// RunClientCommand with an explicit context: same contract as the public entry point.
int RunClientCommandIn(std::string_view command, const std::vector<std::string>& args, ClientContext& context);

}  // namespace cairn::cli
