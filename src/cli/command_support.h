// What every client subcommand shares: the common options, exit codes, parsing the command
// line into a ready ApiClient, and reporting results and errors the same way.
#pragma once

#include <boost/json/value.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "cli/api_client.h"
#include "cli/arg_parser.h"
#include "cli/client_context.h"
#include "cli/http_client.h"
#include "cli/url_util.h"

namespace cairn::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // the server said no, or could not be reached
inline constexpr int kExitUsage = 2;    // the command line is wrong; nothing was sent

inline constexpr std::string_view kDefaultServer = "http://127.0.0.1:8081";
inline constexpr std::string_view kServerEnvVar = "CAIRN_SERVER";

struct CommandSpec {
  std::string name;      // "put"
  std::string summary;   // one line
  std::string synopsis;  // "--title TEXT [fields]"; usage appends " [options]"
  std::vector<OptionSpec> options;  // the command's own; CommonOptions() are appended
  std::string positional_names;     // "ID"
  size_t min_positionals = 0;
  size_t max_positionals = 0;
};

// --server, --actor, --timeout, --compact, --help: accepted by every client subcommand.
std::vector<OptionSpec> CommonOptions();

// The full usage of one subcommand (its options, then the common ones).
std::string CommandUsage(const CommandSpec& spec);

// One run of a subcommand: the parsed command line, the connection to the server, and the
// uniform ways to finish (each returns the exit code to return from the command).
class CommandRun {
 public:
  // Parses `args` against `spec`. Returns nullptr when the run is already over: after printing
  // the usage for --help (*exit_code = 0) or a usage error (*exit_code = 2).
  static std::unique_ptr<CommandRun> Start(const CommandSpec& spec, const std::vector<std::string>& args,
                                           ClientContext& context, int* exit_code);

  const ParsedArgs& args() const { return args_; }
  ApiClient& api() { return *api_; }
  ClientContext& context() { return context_; }
  bool compact() const { return args_.Has("compact"); }
  // The HTTP options from the command line (--timeout), as given to make_http.
  const CurlOptions& curl_options() const { return curl_options_; }

  // Prints "cairn <cmd>: <message>", a blank line and the usage to err; returns kExitUsage.
  int UsageError(std::string_view message);
  // Prints "cairn <cmd>: <status message>" to err; returns kExitFailure.
  int Failure(const Status& status);
  // Prints `value` (pretty or compact) and a newline to out; returns kExitOk.
  int PrintJson(const boost::json::value& value);

 private:
  CommandRun(const CommandSpec& spec, ClientContext& context) : spec_(spec), context_(context) {}

  const CommandSpec& spec_;
  ClientContext& context_;
  ParsedArgs args_;
  CurlOptions curl_options_;
  std::unique_ptr<HttpClient> http_;
  std::unique_ptr<ApiClient> api_;
};

// GET /events/stream?<query> of the run's server, resumed after `resume` (Last-Event-ID) when
// given, as the run's --actor.
HttpRequest EventStreamRequest(CommandRun& run, const QueryString& query, std::optional<int64_t> resume);

// kInternal ("… is this a cairn server?") unless `head` answers with an event stream.
Status CheckEventStream(CommandRun& run, const HttpReply& head);

// "/breadcrumbs/<percent-encoded id><suffix>".
std::string BreadcrumbPath(std::string_view id, std::string_view suffix = {});

}  // namespace cairn::cli
