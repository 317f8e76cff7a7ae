// tail: follows GET /events/stream (Server-Sent Events), printing each event as it arrives and
// resuming after a lost connection from the last event received.
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>
#include <algorithm>
#include <chrono>
#include <ostream>

#include "base/json_util.h"
#include "cli/breadcrumb_fields.h"
#include "cli/commands.h"
#include "cli/json_output.h"
#include "cli/stop_signal.h"
#include "cli/url_util.h"
#include "net/sse_parser.h"

namespace cairn::cli {

namespace json = boost::json;

namespace {

constexpr std::chrono::milliseconds kFirstBackoff{100};
constexpr std::chrono::milliseconds kMaxBackoff{5000};
constexpr size_t kEventMaxDepth = 1024;

struct TailOptions {
  QueryString query;             // the selector
  std::optional<int64_t> since;  // --since
  std::optional<int64_t> max_events;
  bool pretty = false;
};

// A whole number >= 0 (at most 18 digits, so it fits an int64_t).
std::optional<int64_t> ParseCount(std::string_view text) {
  if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != std::string_view::npos) {
    return std::nullopt;
  }
  return std::stoll(std::string(text));
}

// Joins the values of a repeatable comma-list option ("--any-tag a --any-tag b,c" -> "a,b,c"),
// refusing empty items, which the API would reject less clearly.
Result<std::string> JoinList(const ParsedArgs& args, std::string_view option, bool expand_types) {
  std::string joined;
  for (const auto& value : args.GetAll(option)) {
    size_t begin = 0;
    while (true) {
      const size_t comma = value.find(',', begin);
      std::string item = value.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
      if (item.empty()) {
        return Status::InvalidArgument("--" + std::string(option) + " '" + value + "' has an empty item");
      }
      // "created" is short for "breadcrumb.created".
      if (expand_types && (item == "created" || item == "updated" || item == "deleted")) item = "breadcrumb." + item;
      if (!joined.empty()) joined += ',';
      joined += item;
      if (comma == std::string::npos) break;
      begin = comma + 1;
    }
  }
  return joined;
}

Result<TailOptions> ParseTailOptions(const ParsedArgs& args, std::istream& in) {
  TailOptions options;
  QueryString& query = options.query;
  if (auto v = args.Get("schema")) query.Add("schema_name", *v);
  for (const auto& tag : args.GetAll("tag")) query.Add("tag", tag);
  if (args.Has("any-tag")) {
    CAIRN_ASSIGN_OR_RETURN(std::string joined, JoinList(args, "any-tag", false));
    query.Add("any_tags", joined);
  }
  if (auto v = args.Get("path")) query.Add("path", *v);
  if (args.Has("types")) {
    CAIRN_ASSIGN_OR_RETURN(std::string joined, JoinList(args, "types", true));
    query.Add("types", joined);
  }
  if (args.Has("match")) {
    CAIRN_ASSIGN_OR_RETURN(std::string rules, ContextMatchParameter(args, in));
    query.Add("context_match", rules);
  }
  if (auto v = args.Get("selector-id")) query.Add("selector_id", *v);
  if (auto v = args.Get("since")) {
    options.since = ParseCount(*v);
    if (!options.since) return Status::InvalidArgument("--since must be an event seq (a whole number >= 0), got '" + *v + "'");
  }
  if (auto v = args.Get("max-events")) {
    options.max_events = ParseCount(*v);
    if (!options.max_events || *options.max_events < 1) {
      return Status::InvalidArgument("--max-events must be a positive integer, got '" + *v + "'");
    }
  }
  options.pretty = args.Has("pretty");
  return options;
}

std::string Text(const json::object& obj, std::string_view key, std::string_view absent = "-") {
  const json::value* v = obj.if_contains(key);
  if (v == nullptr || v->is_null()) return std::string(absent);
  if (v->is_string()) return std::string(v->get_string());
  return CompactJson(*v);
}

std::string FormatDelay(std::chrono::milliseconds delay) {
  if (delay.count() < 1000) return std::to_string(delay.count()) + " ms";
  const int64_t tenths = (delay.count() + 50) / 100;
  return std::to_string(tenths / 10) + (tenths % 10 == 0 ? "" : "." + std::to_string(tenths % 10)) + " s";
}

// One run of `tail`: the connection loop, the resume point and the output.
class TailSession {
 public:
  TailSession(CommandRun& run, StreamingHttpClient& http, StopSignal& stop, TailOptions options)
      : run_(run), http_(http), stop_(stop), options_(std::move(options)), resume_(options_.since) {}

  int Run() {
    const std::string server = run_.api().server_url();
    std::chrono::milliseconds backoff = kFirstBackoff;
    StreamCallbacks callbacks;
    callbacks.on_open = [this](const HttpReply& head) { return OnOpen(head); };
    callbacks.on_data = [this](std::string_view chunk) { return OnData(chunk); };
    while (true) {
      if (stop_.stop_requested()) return kExitOk;
      const HttpRequest request = BuildRequest();
      parser_.Reset();
      opened_ = false;
      healthy_ = false;
      dropped_reason_.reset();
      fatal_ = Status::Ok();

      auto reply = http_.Stream(request, callbacks, &stop_);
      if (done_ || stop_.stop_requested()) return kExitOk;
      if (!fatal_.ok()) return run_.Failure(fatal_);

      std::string why;
      if (!reply.ok()) {
        if (reply.status().code() != StatusCode::kUnavailable) return run_.Failure(reply.status());
        why = opened_ ? "lost the event stream (" + reply.status().message() + ")"
                      : "cannot reach the cairn server at " + server + " (" + reply.status().message() + ")";
      } else if (reply->status >= 200 && reply->status <= 299) {
        why = dropped_reason_ ? "the server dropped the event stream: " + *dropped_reason_
                              : "the server closed the event stream";
      } else if (reply->status == 503) {
        why = ErrorFromReply(*reply, request.method, request.url).message();
      } else {
        return run_.Failure(ErrorFromReply(*reply, request.method, request.url));
      }
      if (healthy_) backoff = kFirstBackoff;  // the stream worked: this is a new failure, not the same one
      run_.context().err << "cairn tail: " << why << "; reconnecting in " << FormatDelay(backoff)
                         << (resume_ ? " (resuming after event " + std::to_string(*resume_) + ")"
                                     : " (no event received yet: events in between are not replayed)")
                         << "\n"
                         << std::flush;
      if (!stop_.WaitFor(backoff)) return kExitOk;
      backoff = std::min(backoff * 2, kMaxBackoff);
    }
  }

 private:
  HttpRequest BuildRequest() const { return EventStreamRequest(run_, options_.query, resume_); }

  bool OnOpen(const HttpReply& head) {
    if (Status stream = CheckEventStream(run_, head); !stream.ok()) {
      fatal_ = stream;
      return false;
    }
    opened_ = true;
    // Also tells a script that events written from now on will arrive.
    if (connections_++ == 0) {
      run_.context().err << "cairn tail: connected to " << run_.api().server_url()
                         << ", waiting for events (Ctrl-C to stop)\n";
    } else {
      run_.context().err << "cairn tail: reconnected\n";
    }
    run_.context().err << std::flush;
    return true;
  }

  bool OnData(std::string_view chunk) {
    if (Status s = parser_.Feed(chunk); !s.ok()) {
      fatal_ = s;
      return false;
    }
    while (auto event = parser_.Next()) {
      if (!OnEvent(*event)) return false;
    }
    // An id without data moves the resume point too (once; resume_from may have moved it since).
    if (parser_.last_event_id() != noted_id_) NoteResume(parser_.last_event_id());
    return true;
  }

  // Handles one frame; false once --max-events is reached.
  bool OnEvent(const net::SseEvent& frame) {
    healthy_ = true;
    auto parsed = ParseJson(frame.data, kEventMaxDepth);
    if (!parsed.ok() || !parsed->is_object()) {
      run_.context().err << "cairn tail: ignoring a frame that is not a JSON object: "
                         << frame.data.substr(0, 200) << "\n";
      NoteResume(frame.last_event_id);
      return true;
    }
    const json::object& event = parsed->get_object();
    const std::string type = Text(event, "type", "");
    if (type == "ping") return true;
    if (type == "stream.dropped") {
      // The server is about to close; it says where to resume (it dropped what came after).
      if (const json::value* from = event.if_contains("resume_from"); from != nullptr && from->is_int64() &&
                                                                      from->get_int64() >= 0) {
        resume_ = from->get_int64();
      }
      dropped_reason_ = Text(event, "reason", "no reason given");
      return true;
    }
    run_.context().out << (options_.pretty ? PrettyLine(event) : CompactJson(*parsed)) << "\n" << std::flush;
    NoteResume(frame.last_event_id);
    ++printed_;
    if (options_.max_events && printed_ >= *options_.max_events) {
      done_ = true;
      return false;
    }
    return true;
  }

  void NoteResume(const std::string& id) {
    noted_id_ = id;
    if (auto seq = ParseCount(id)) resume_ = *seq;
  }

  // "42  2030-01-01T00:00:00.000000Z  created  note.v1  "Buy milk"  b1 v1  [todo, life]"
  static std::string PrettyLine(const json::object& event) {
    std::string type = Text(event, "type");
    if (type.starts_with("breadcrumb.")) type.erase(0, std::string_view("breadcrumb.").size());
    std::string tags = "[";
    if (const json::value* list = event.if_contains("tags"); list != nullptr && list->is_array()) {
      for (const auto& tag : list->get_array()) {
        if (tags.size() > 1) tags += ", ";
        tags += tag.is_string() ? std::string(tag.get_string()) : CompactJson(tag);
      }
    }
    tags += "]";
    const json::value* title = event.if_contains("title");
    std::string line = Text(event, "seq") + "  " + Text(event, "at") + "  " + type + "  " +
                       Text(event, "schema_name") + "  " +
                       (title != nullptr && title->is_string() ? json::serialize(*title) : std::string("-")) + "  " +
                       Text(event, "breadcrumb_id");
    if (event.contains("version")) line += " v" + Text(event, "version");
    return line + "  " + tags;
  }

  CommandRun& run_;
  StreamingHttpClient& http_;
  StopSignal& stop_;
  const TailOptions options_;
  net::SseParser parser_;
  std::optional<int64_t> resume_;  // the seq to resume after (Last-Event-ID)
  std::string noted_id_;           // the last SSE id taken into resume_
  int64_t printed_ = 0;
  int64_t connections_ = 0;  // event streams opened so far
  bool done_ = false;     // --max-events reached
  bool opened_ = false;   // this connection got a 2xx event stream
  bool healthy_ = false;  // this connection delivered at least one frame
  std::optional<std::string> dropped_reason_;
  Status fatal_;
};

}  // namespace

CommandSpec TailSpec() {
  return {"tail",
          "print events as they happen (one JSON per line), resuming after a lost connection",
          "[filters] [--since SEQ] [--pretty]",
          {
              {"schema", "NAME", "only breadcrumbs of this schema name"},
              {"tag", "TAG", "must carry TAG (all of the given tags)", true},
              {"any-tag", "TAG", "must carry at least one of the given tags (or a comma list)", true},
              {"path", "GLOB", "path glob: '*' is one segment, '**' any number"},
              {"types", "T,...", "event types: created, updated, deleted (default all)", true},
              {"match", "JSON", "context rule {\"path\":\"$.a\",\"op\":\"eq\",\"value\":1}; all must hold", true},
              {"selector-id", "ID", "a stored selector instead of the filters above"},
              {"since", "SEQ", "first replay the retained events after event SEQ"},
              {"pretty", "", "one readable line per event (seq, time, type, schema, title, id, tags)"},
              {"max-events", "N", "exit after printing N events"},
          },
          "",
          0,
          0};
}

int RunTail(CommandRun& run) {
  ClientContext& context = run.context();
  auto options = ParseTailOptions(run.args(), context.in);
  if (!options.ok()) return run.UsageError(options.status().message());
  if (!context.make_stream_http || !context.make_stop) {
    return run.Failure(Status::Internal("streaming is not available in this context"));
  }
  CurlOptions curl_options = run.curl_options();
  curl_options.total_timeout_ms = 0;  // --timeout bounds connecting, not the stream
  std::unique_ptr<StreamingHttpClient> http = context.make_stream_http(curl_options);
  std::unique_ptr<StopSignal> stop = context.make_stop();
  TailSession session(run, *http, *stop, std::move(*options));
  return session.Run();
}

}  // namespace cairn::cli
