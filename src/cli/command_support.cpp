#include "cli/command_support.h"

#include <cmath>
#include <ostream>

#include "cli/json_output.h"
#include "cli/url_util.h"

namespace cairn::cli {

namespace {

// Strips a leading "cairn <cmd>: " so messages from ArgParser are not prefixed twice.
std::string_view WithoutPrefix(std::string_view message, std::string_view command) {
  const std::string prefix = "cairn " + std::string(command) + ": ";
  if (message.starts_with(prefix)) message.remove_prefix(prefix.size());
  return message;
}

Result<int64_t> ParseTimeoutMs(const std::string& text) {
  size_t used = 0;
  double seconds = 0;
  try {
    seconds = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty() || !std::isfinite(seconds) || seconds <= 0 || seconds > 86400) {
    return Status::InvalidArgument("--timeout must be a number of seconds between 0 and 86400, got '" + text + "'");
  }
  return static_cast<int64_t>(std::ceil(seconds * 1000));
}

}  // namespace

std::vector<OptionSpec> CommonOptions() {
  return {
      {"server", "URL", "cairn server (default: $CAIRN_SERVER, else " + std::string(kDefaultServer) + ")"},
      {"actor", "NAME", "acting identity, sent as X-Cairn-Actor (recorded as created_by/updated_by)"},
      {"timeout", "SECONDS", "give up on a request after this long (default 30)"},
      {"compact", "", "print JSON on one line"},
      {"help", "", "show this help", false, 'h'},
  };
}

std::string CommandUsage(const CommandSpec& spec) {
  std::vector<OptionSpec> options = spec.options;
  for (auto& option : CommonOptions()) options.push_back(std::move(option));
  const ArgParser parser(spec.name, std::move(options), spec.positional_names, spec.min_positionals,
                         spec.max_positionals);
  return parser.Usage(spec.summary, spec.synopsis + " [options]");
}

std::unique_ptr<CommandRun> CommandRun::Start(const CommandSpec& spec, const std::vector<std::string>& args,
                                              ClientContext& context, int* exit_code) {
  std::unique_ptr<CommandRun> run(new CommandRun(spec, context));
  std::vector<OptionSpec> options = spec.options;
  for (auto& option : CommonOptions()) options.push_back(std::move(option));
  const ArgParser parser(spec.name, std::move(options), spec.positional_names, spec.min_positionals,
                         spec.max_positionals);

  // --help wins over every other problem on the line: whoever asks for help gets it.
  for (const auto& arg : args) {
    if (arg == "--") break;
    if (arg == "--help" || arg == "-h") {
      context.out << CommandUsage(spec);
      *exit_code = kExitOk;
      return nullptr;
    }
  }

  auto parsed = parser.Parse(args);
  if (!parsed.ok()) {
    *exit_code = run->UsageError(parsed.status().message());
    return nullptr;
  }
  run->args_ = std::move(*parsed);

  std::string server(kDefaultServer);
  if (auto flag = run->args_.Get("server")) {
    server = *flag;
  } else if (const char* env = context.env ? context.env(std::string(kServerEnvVar).c_str()) : nullptr;
             env != nullptr && *env != '\0') {
    server = env;
  }
  auto url = NormalizeServerUrl(server);
  if (!url.ok()) {
    *exit_code = run->UsageError(url.status().message());
    return nullptr;
  }

  CurlOptions curl_options;
  if (auto timeout = run->args_.Get("timeout")) {
    auto ms = ParseTimeoutMs(*timeout);
    if (!ms.ok()) {
      *exit_code = run->UsageError(ms.status().message());
      return nullptr;
    }
    curl_options.total_timeout_ms = *ms;
    curl_options.connect_timeout_ms = std::min(curl_options.connect_timeout_ms, *ms);
  }
  run->curl_options_ = curl_options;
  run->http_ = context.make_http(curl_options);
  run->api_ = std::make_unique<ApiClient>(*run->http_, std::move(*url), run->args_.Get("actor"));
  return run;
}

int CommandRun::UsageError(std::string_view message) {
  context_.err << "cairn " << spec_.name << ": " << WithoutPrefix(message, spec_.name) << "\n\n"
               << CommandUsage(spec_);
  return kExitUsage;
}

int CommandRun::Failure(const Status& status) {
  context_.err << "cairn " << spec_.name << ": " << WithoutPrefix(status.message(), spec_.name) << "\n";
  return kExitFailure;
}

int CommandRun::PrintJson(const boost::json::value& value) {
  context_.out << FormatJson(value, compact()) << "\n";
  return kExitOk;
}

std::string BreadcrumbPath(std::string_view id, std::string_view suffix) {
  return "/breadcrumbs/" + PercentEncode(id) + std::string(suffix);
}

HttpRequest EventStreamRequest(CommandRun& run, const QueryString& query, std::optional<int64_t> resume) {
  HttpRequest request;
  request.method = "GET";
  request.url = run.api().server_url() + "/events/stream" + query.Build();
  if (resume) request.headers.emplace_back("Last-Event-ID", std::to_string(*resume));
  if (auto actor = run.args().Get("actor")) request.headers.emplace_back("X-Cairn-Actor", *actor);
  return request;
}

Status CheckEventStream(CommandRun& run, const HttpReply& head) {
  const std::string type = head.Header("content-type").value_or("");
  if (type.starts_with("text/event-stream")) return Status::Ok();
  return Status::Internal("GET " + run.api().server_url() +
                          "/events/stream did not answer with an event stream (Content-Type '" + type +
                          "'); is this a cairn server?");
}

}  // namespace cairn::cli
