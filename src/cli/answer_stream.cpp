#include "cli/answer_stream.h"

#include "cli/json_output.h"

#include <cstdlib>

#include "base/json_util.h"
#include "cli/url_util.h"
#include "model/reserved.h"
#include "net/sse_parser.h"

namespace cairn::cli {
namespace json = boost::json;
namespace {

constexpr size_t kMaxDepth = 1024;

// Stops a stream at a deadline or at Ctrl-C, whichever comes first.
class DeadlineStop final : public StopSignal {
 public:
  DeadlineStop(StopSignal& inner, std::chrono::steady_clock::time_point deadline) : inner_(inner), deadline_(deadline) {}
  bool stop_requested() const override { return inner_.stop_requested() || std::chrono::steady_clock::now() >= deadline_; }
  int fd() const override { return inner_.fd(); }
  bool WaitFor(std::chrono::milliseconds duration) override {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - std::chrono::steady_clock::now());
    return inner_.WaitFor(std::min(duration, std::max(left, std::chrono::milliseconds(0)))) && !stop_requested();
  }

 private:
  StopSignal& inner_;
  std::chrono::steady_clock::time_point deadline_;
};
}  // namespace

Result<json::value> InputOption(const CommandRun& run) {
  auto text = run.args().Get("input");
  if (!text) return json::value(json::object{});
  auto parsed = ParseJson(*text, kMaxDepth);
  if (!parsed.ok()) return Status::InvalidArgument("--input is not valid JSON: " + parsed.status().message());
  return std::move(parsed).value();
}

int ReportAnswer(CommandRun& run, const json::object& answer, const std::string& command, const std::string& what) {
  bool ok = StringMember(answer, "status") == "success";
  if (run.args().Has("full")) {
    run.PrintJson(answer);
  } else if (ok) {
    const json::value* output = answer.if_contains("output");
    run.PrintJson(output ? *output : json::value(nullptr));
  }
  if (ok) return kExitOk;
  const json::value* error = answer.if_contains("error");
  std::string code = error && error->is_object() ? StringMember(error->as_object(), "code") : "";
  std::string message = error && error->is_object() ? StringMember(error->as_object(), "message") : "";
  run.context().err << "cairn " << command << ": " << what << " failed: " << code << ": " << message << "\n";
  return kExitFailure;
}

Result<int64_t> WaitSeconds(const CommandRun& run, const std::string& name, int64_t fallback) {
  auto text = run.args().Get(name);
  if (!text) return fallback;
  char* end = nullptr;
  int64_t seconds = std::strtoll(text->c_str(), &end, 10);
  if (text->empty() || *end != '\0' || seconds < 1 || seconds > 86400) {
    return Status::InvalidArgument("--" + name + " must be a number of seconds from 1 to 86400, got '" + *text + "'");
  }
  return seconds;
}

Result<AnswerOutcome> CallToolAndWait(CommandRun& run, const std::string& tool, const boost::json::value& input,
                                      const std::string& request_id, int64_t wait_seconds) {
  QueryString query;
  query.Add("schema_name", std::string(model::kToolResponseSchema));
  query.Add("tag", "request:" + request_id);
  AnswerWait wait;
  wait.stream_query = query.Build();
  wait.wait_seconds = wait_seconds;
  wait.write = [&]() -> Status {
    boost::json::object body{
        {"title", "call " + tool},
        {"schema_name", model::kToolRequestSchema},
        {"context", boost::json::object{{"tool", tool}, {"input", input}, {"request_id", request_id}}}};
    return run.api().Call("POST", "/breadcrumbs", boost::json::value(std::move(body))).status();
  };
  wait.match = [](const boost::json::object&) { return true; };
  return AwaitAnswer(run, wait);
}

Result<AnswerOutcome> AwaitAnswer(CommandRun& run, const AnswerWait& wait) {
  ClientContext& context = run.context();
  if (!context.make_stream_http || !context.make_stop) {
    return Status::Internal("streaming is not available in this context");
  }
  HttpRequest stream_request;
  stream_request.method = "GET";
  stream_request.url = run.api().server_url() + "/events/stream" + wait.stream_query;
  CurlOptions curl_options = run.curl_options();
  curl_options.total_timeout_ms = 0;
  auto http = context.make_stream_http(curl_options);
  auto signal = context.make_stop();
  DeadlineStop stop(*signal, std::chrono::steady_clock::now() + std::chrono::seconds(wait.wait_seconds));

  Status failure;
  AnswerOutcome outcome;
  std::string omitted_id;
  net::SseParser parser;
  StreamCallbacks callbacks;
  callbacks.on_open = [&](const HttpReply&) {
    failure = wait.write();
    return failure.ok();
  };
  callbacks.on_data = [&](std::string_view chunk) {
    if (Status fed = parser.Feed(chunk); !fed.ok()) {
      failure = fed;
      return false;
    }
    while (auto frame = parser.Next()) {
      auto event = ParseJson(frame->data, kMaxDepth);
      if (!event.ok() || !event->is_object()) continue;
      const json::value* ctx = event->as_object().if_contains("context");
      if (ctx && ctx->is_object()) {
        if (!wait.match(ctx->as_object())) continue;
        outcome.answer = ctx->as_object();
        return false;
      }
      if (event->as_object().contains("context_omitted")) {  // too large for the stream: read the record
        omitted_id = StringMember(event->as_object(), "breadcrumb_id");
        return false;
      }
    }
    return true;
  };
  auto reply = http->Stream(stream_request, callbacks, &stop);
  if (!failure.ok()) return failure;
  if (!outcome.answer && !omitted_id.empty()) {
    auto record = run.api().Call("GET", BreadcrumbPath(omitted_id, "/full"));
    if (!record.ok()) return record.status();
    const json::value* ctx = record->body.is_object() ? record->body.as_object().if_contains("context") : nullptr;
    if (ctx && ctx->is_object() && wait.match(ctx->as_object())) outcome.answer = ctx->as_object();
  }
  if (!outcome.answer) {
    if (!reply.ok()) return reply.status();
    if (reply->status < 200 || reply->status > 299) return ErrorFromReply(*reply, stream_request.method, stream_request.url);
    outcome.interrupted = signal->stop_requested();
  }
  return outcome;
}

}  // namespace cairn::cli
