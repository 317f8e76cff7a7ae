// chat: a conversation with an agent in the terminal, over the breadcrumb API.
//
// One event stream, opened before the first message is written and kept for the whole session:
//   GET /events/stream?any_tags=session:<id>,session-activity:<id>&types=breadcrumb.created,agent.token
// (agents tag the tool requests they write for a session "session-activity:<id>", so they are
// seen here without being part of the session's history)
// (reconnected with Last-Event-ID when it fails). For each non-empty line of stdin it writes a
// user.message.v1 {content, agent_id?} tagged session:<id>, then waits for the agent.response.v1
// whose context.request_id is that message's id, printing on the way the agent.token deltas as
// they arrive and a line per tool.request.v1. Only then is the next line read, so piped input is
// a conversation too. Everything runs on one thread: the next line is read (and written) from
// within the stream's callbacks, so no event of the session can be missed between two messages.
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>
#include <algorithm>
#include <chrono>
#include <functional>
#include <istream>
#include <ostream>

#include "base/clock.h"
#include "base/json_util.h"
#include "base/uuid.h"
#include "cli/commands.h"
#include "cli/json_output.h"
#include "cli/stop_signal.h"
#include "cli/url_util.h"
#include "model/reserved.h"
#include "net/sse_parser.h"

namespace cairn::cli {
namespace json = boost::json;
namespace {

constexpr std::chrono::milliseconds kFirstBackoff{100};
constexpr std::chrono::milliseconds kMaxBackoff{5000};
constexpr size_t kEventMaxDepth = 1024;
constexpr size_t kTitleChars = 60;
constexpr size_t kToolInputChars = 200;
constexpr int64_t kDefaultAnswerTimeoutMs = 300'000;

struct ChatOptions {
  std::string session;
  std::optional<std::string> agent;
  int64_t answer_timeout_ms = kDefaultAnswerTimeoutMs;
  bool json = false;
};

// The first `n` characters of UTF-8 `text` (a cut never splits a multi-byte character).
std::string FirstChars(std::string_view text, size_t n) {
  size_t chars = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80 && chars++ == n) return std::string(text.substr(0, i));
  }
  return std::string(text);
}

std::string FormatDelay(std::chrono::milliseconds delay) {
  if (delay.count() < 1000) return std::to_string(delay.count()) + " ms";
  const int64_t tenths = (delay.count() + 50) / 100;
  return std::to_string(tenths / 10) + (tenths % 10 == 0 ? "" : "." + std::to_string(tenths % 10)) + " s";
}

std::string FormatSeconds(int64_t ms) {
  return ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms";
}

// Ends a stream on Ctrl-C, or once the answer being waited for is overdue.
class AnswerStop final : public StopSignal {
 public:
  AnswerStop(StopSignal& signal, std::function<bool()> overdue) : signal_(signal), overdue_(std::move(overdue)) {}
  bool stop_requested() const override { return signal_.stop_requested() || overdue_(); }
  int fd() const override { return signal_.fd(); }
  bool WaitFor(std::chrono::milliseconds duration) override { return signal_.WaitFor(duration) && !stop_requested(); }

 private:
  StopSignal& signal_;
  std::function<bool()> overdue_;
};

// One run of `chat`: the connection loop, the conversation state and the output.
class ChatSession {
 public:
  ChatSession(CommandRun& run, StreamingHttpClient& http, StopSignal& signal, ChatOptions options)
      : run_(run),
        out_(run.context().out),
        err_(run.context().err),
        http_(http),
        signal_(signal),
        options_(std::move(options)),
        stop_(signal, [this] { return awaiting_ && Now() >= deadline_; }) {}

  int Run() {
    (options_.json ? err_ : out_) << "session " << options_.session << " (Ctrl-D to quit)\n" << std::flush;
    std::chrono::milliseconds backoff = kFirstBackoff;
    StreamCallbacks callbacks;
    callbacks.on_open = [this](const HttpReply& head) { return OnOpen(head); };
    callbacks.on_data = [this](std::string_view chunk) { return OnData(chunk); };
    while (true) {
      if (signal_.stop_requested()) return kExitOk;
      if (awaiting_ && Now() >= deadline_) NoAnswer();  // overdue while reconnecting
      const HttpRequest request = BuildRequest();
      parser_.Reset();
      healthy_ = false;
      dropped_reason_.reset();
      auto reply = http_.Stream(request, callbacks, &stop_);
      if (finished_) return exit_code_;
      if (signal_.stop_requested()) return kExitOk;
      if (!fatal_.ok()) return run_.Failure(fatal_);
      const bool overdue = awaiting_ && Now() >= deadline_;
      if (overdue) NoAnswer();

      std::string why;
      if (!reply.ok()) {
        if (reply.status().code() != StatusCode::kUnavailable) return run_.Failure(reply.status());
        why = ever_opened_ ? "lost the event stream (" + reply.status().message() + ")"
                           : "cannot reach the cairn server at " + run_.api().server_url() + " (" +
                                 reply.status().message() + ")";
      } else if (overdue && !dropped_reason_ && (reply->status == 0 || (reply->status >= 200 && reply->status <= 299))) {
        continue;  // ended by us, to give up on the answer: open the stream again for the next line
      } else if (reply->status >= 200 && reply->status <= 299) {
        why = dropped_reason_ ? "the server dropped the event stream: " + *dropped_reason_
                              : "the server closed the event stream";
      } else if (reply->status == 503) {
        why = ErrorFromReply(*reply, request.method, request.url).message();
      } else {
        return run_.Failure(ErrorFromReply(*reply, request.method, request.url));
      }
      // Nothing was ever sent: better say so than retry in silence.
      if (!ever_opened_) return run_.Failure(Status::Unavailable(why));
      if (healthy_) backoff = kFirstBackoff;
      EndTokenLine();
      err_ << "cairn chat: " << why << "; reconnecting in " << FormatDelay(backoff) << "\n" << std::flush;
      if (!signal_.WaitFor(backoff)) return kExitOk;
      backoff = std::min(backoff * 2, kMaxBackoff);
    }
  }

 private:
  int64_t Now() const { return run_.context().now_micros(); }

  HttpRequest BuildRequest() const {
    QueryString query;
    query.Add("any_tags", "session:" + options_.session + ",session-activity:" + options_.session);
    query.Add("types", "breadcrumb.created,agent.token");
    return EventStreamRequest(run_, query, resume_);
  }

  bool OnOpen(const HttpReply& head) {
    if (Status stream = CheckEventStream(run_, head); !stream.ok()) {
      fatal_ = stream;
      return false;
    }
    if (ever_opened_ && awaiting_) {
      gap_ = true;  // tokens published while it was down are gone (stored events are resumed)
      err_ << "cairn chat: reconnected\n" << std::flush;
    }
    ever_opened_ = true;
    return awaiting_ ? true : SendNext();
  }

  bool OnData(std::string_view chunk) {
    if (Status fed = parser_.Feed(chunk); !fed.ok()) {
      fatal_ = fed;
      return false;
    }
    while (auto frame = parser_.Next()) {
      healthy_ = true;
      if (auto seq = ParseSeq(frame->last_event_id)) resume_ = *seq;
      auto parsed = ParseJson(frame->data, kEventMaxDepth);
      if (!parsed.ok() || !parsed->is_object()) continue;
      if (!OnEvent(parsed->get_object())) return false;
    }
    return true;
  }

  // One event; false ends the stream (stdin is done, or a stop was requested while reading it).
  bool OnEvent(const json::object& event) {
    const std::string type = StringMember(event, "type");
    if (type == "ping") return true;
    if (type == "stream.dropped") {  // the server closes next; it says where to resume
      if (const json::value* from = event.if_contains("resume_from"); from != nullptr && from->is_int64()) {
        resume_ = from->get_int64();
      }
      dropped_reason_ = StringMember(event, "reason");
      return true;
    }
    if (options_.json) out_ << CompactJson(event) << "\n" << std::flush;
    if (type == "agent.token") {
      OnToken(event);
      return true;
    }
    if (type != "breadcrumb.created") return true;
    const std::string schema = StringMember(event, "schema_name");
    if (schema == model::kToolRequestSchema) {
      if (options_.json || !awaiting_) return true;
      auto context = ContextOf(event);
      if (!context) return true;
      const json::value* input = context->if_contains("input");
      EndTokenLine();
      out_ << "  \u2192 " << StringMember(*context, "tool") << "("
           << FirstChars(input != nullptr ? CompactJson(*input) : "{}", kToolInputChars) << ")\n"
           << std::flush;
      return true;
    }
    if (schema != model::kAgentResponseSchema || !awaiting_) return true;
    auto context = ContextOf(event);
    if (!context || StringMember(*context, "request_id") != request_id_) return true;  // another message's answer
    Answered(*context);
    return SendNext();
  }

  void OnToken(const json::object& event) {
    if (options_.json || !awaiting_) return;
    // Tokens that name the message they answer must name this one.
    if (event.contains("request_id") && StringMember(event, "request_id") != request_id_) return;
    const json::value* delta = event.if_contains("delta");
    if (delta == nullptr || !delta->is_string() || delta->get_string().empty()) return;
    out_ << std::string_view(delta->get_string()) << std::flush;
    tokens_printed_ = true;
    mid_line_ = delta->get_string().back() != '\n';
  }

  // The answer to the current message.
  void Answered(const json::object& context) {
    awaiting_ = false;
    const bool error = StringMember(context, "status") == "error";
    if (!options_.json) {
      EndTokenLine();
      // The streamed tokens were the answer, unless some may have been lost in a reconnection.
      if (!error && (!tokens_printed_ || gap_)) {
        const json::value* message = context.if_contains("message");
        if (message != nullptr && !message->is_null()) {
          out_ << (message->is_string() ? std::string(message->get_string()) : CompactJson(*message)) << "\n";
        }
      }
      out_ << std::flush;
    }
    if (error) {
      const json::value* e = context.if_contains("error");
      const json::object empty;
      const json::object& detail = e != nullptr && e->is_object() ? e->get_object() : empty;
      err_ << "error: " << StringMember(detail, "code") << ": " << StringMember(detail, "message") << "\n" << std::flush;
    }
  }

  void NoAnswer() {
    awaiting_ = false;
    EndTokenLine();
    err_ << "cairn chat: no answer within " << FormatSeconds(options_.answer_timeout_ms) << " (message "
         << request_id_ << "); it may still come, but will not be shown\n"
         << std::flush;
  }

  // Ends a line of streamed tokens, so that what follows starts on a line of its own.
  void EndTokenLine() {
    if (mid_line_) out_ << "\n" << std::flush;
    mid_line_ = false;
  }

  // Reads stdin up to the next non-empty line and writes it as a user.message.v1. False when
  // stdin ends (or Ctrl-C came while reading): the chat is over.
  bool SendNext() {
    std::string line;
    while (true) {
      if (!std::getline(run_.context().in, line) || signal_.stop_requested()) {
        finished_ = true;
        exit_code_ = failed_writes_ && !signal_.stop_requested() ? kExitFailure : kExitOk;
        return false;
      }
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.find_first_not_of(" \t") == std::string::npos) continue;
      json::object context{{"content", line}};
      if (options_.agent) context["agent_id"] = *options_.agent;
      const size_t first = line.find_first_not_of(" \t");
      json::object body{{"title", FirstChars(std::string_view(line).substr(first), kTitleChars)},
                        {"schema_name", model::kUserMessageSchema},
                        {"tags", json::array{json::value("session:" + options_.session)}},
                        {"context", std::move(context)}};
      auto written = run_.api().Call("POST", "/breadcrumbs", json::value(std::move(body)));
      std::string id;
      if (written.ok() && written->body.is_object()) id = StringMember(written->body.get_object(), "id");
      if (id.empty()) {
        failed_writes_ = true;
        err_ << "cairn chat: the message was not sent: "
             << (written.ok() ? "the server's reply has no id" : written.status().message()) << "\n"
             << std::flush;
        continue;
      }
      request_id_ = id;
      awaiting_ = true;
      deadline_ = Now() + options_.answer_timeout_ms * 1000;
      tokens_printed_ = false;
      gap_ = false;
      return true;
    }
  }

  // The event's context, read from the record when the event omits it (too large).
  std::optional<json::object> ContextOf(const json::object& event) {
    if (const json::value* context = event.if_contains("context")) {
      if (context->is_object()) return context->get_object();
      return std::nullopt;
    }
    if (!event.contains("context_omitted")) return std::nullopt;
    auto record = run_.api().Call("GET", BreadcrumbPath(StringMember(event, "breadcrumb_id"), "/full"));
    if (!record.ok()) {
      err_ << "cairn chat: cannot read breadcrumb " << StringMember(event, "breadcrumb_id") << ": "
           << record.status().message() << "\n" << std::flush;
      return std::nullopt;
    }
    const json::value* context = record->body.is_object() ? record->body.get_object().if_contains("context") : nullptr;
    if (context == nullptr || !context->is_object()) return std::nullopt;
    return context->get_object();
  }

  static std::optional<int64_t> ParseSeq(std::string_view text) {
    if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != std::string_view::npos) {
      return std::nullopt;
    }
    return std::stoll(std::string(text));
  }

  CommandRun& run_;
  std::ostream& out_;
  std::ostream& err_;
  StreamingHttpClient& http_;
  StopSignal& signal_;
  const ChatOptions options_;
  AnswerStop stop_;
  net::SseParser parser_;
  std::optional<int64_t> resume_;  // the seq to resume after (Last-Event-ID)
  std::optional<std::string> dropped_reason_;
  Status fatal_;
  bool ever_opened_ = false;  // an event stream was open at least once
  bool healthy_ = false;      // this connection delivered at least one frame
  bool finished_ = false;     // stdin is done: exit with exit_code_
  int exit_code_ = kExitOk;
  bool failed_writes_ = false;
  // The message being answered.
  bool awaiting_ = false;
  std::string request_id_;  // its breadcrumb id
  int64_t deadline_ = 0;    // microseconds since the epoch
  bool tokens_printed_ = false;
  bool gap_ = false;       // the stream was reconnected meanwhile: tokens may be missing
  bool mid_line_ = false;  // the last token did not end its line
};

}  // namespace

CommandSpec ChatSpec() {
  return {"chat",
          "talk with an agent: each line of stdin is a user.message.v1 of the session; the answer is "
          "streamed as it comes (--timeout: seconds to wait for each answer, default 300)",
          "[AGENT] [--session ID] [--json]",
          {{"session", "ID", "the session to write to (default: a new one; its id is printed first)"},
           {"json", "", "print every event of the session as one JSON line instead (for scripts)"}},
          "AGENT",
          0,
          1};
}

int RunChat(CommandRun& run) {
  ClientContext& context = run.context();
  ChatOptions options;
  if (!run.args().positionals().empty()) options.agent = run.args().positionals()[0];
  if (auto session = run.args().Get("session")) {
    if (session->empty()) return run.UsageError("--session must not be empty");
    options.session = *session;
  } else {
    options.session = UuidV7Generator(SystemClock::Instance()).Next();
  }
  // --timeout bounds each answer here (and, as for every command, each request).
  if (run.args().Has("timeout")) options.answer_timeout_ms = run.curl_options().total_timeout_ms;
  options.json = run.args().Has("json");
  if (!context.make_stream_http || !context.make_stop) {
    return run.Failure(Status::Internal("streaming is not available in this context"));
  }
  CurlOptions curl_options = run.curl_options();
  curl_options.total_timeout_ms = 0;  // the stream stays open
  std::unique_ptr<StreamingHttpClient> http = context.make_stream_http(curl_options);
  std::unique_ptr<StopSignal> signal = context.make_stop();
  ChatSession session(run, *http, *signal, std::move(options));
  return session.Run();
}

}  // namespace cairn::cli
