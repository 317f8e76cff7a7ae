// `cairn tail` against a scripted StreamingHttpClient and StopSignal: the request (selector,
// resume point), the output, reconnecting with backoff, and the exit codes, without a server.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <deque>
#include <sstream>

#include "cli/client_commands.h"
#include "cli/client_context.h"
#include "net/sse_parser.h"

namespace cairn::cli {
namespace {

namespace json = boost::json;

// One scripted connection: the reply's head, the body chunks, then how it ends.
struct Connection {
  int status = 200;  // 0: no reply at all (`failure`)
  std::string content_type = "text/event-stream";
  std::vector<std::string> chunks = {};  // streamed for a 2xx
  std::string error_body = {};           // the body of a non-2xx
  std::optional<Status> failure = {};    // after the chunks: the connection breaks (kUnavailable...)
  bool stop_after = false;          // a SIGINT arrives once the chunks are delivered
};

struct Script {
  std::deque<Connection> connections;
  std::vector<HttpRequest> requests;
  std::vector<std::chrono::milliseconds> waits;
  bool stop = false;
  int stop_after_waits = -1;  // request the stop during wait number N (1-based); -1 never
  std::vector<size_t> chunks_taken;  // per connection: chunks the command accepted
};

class FakeStop final : public StopSignal {
 public:
  explicit FakeStop(Script* script) : script_(script) {}
  bool stop_requested() const override { return script_->stop; }
  int fd() const override { return -1; }
  bool WaitFor(std::chrono::milliseconds duration) override {
    script_->waits.push_back(duration);
    if (script_->stop_after_waits == static_cast<int>(script_->waits.size())) script_->stop = true;
    return !script_->stop;
  }

 private:
  Script* script_;
};

// tail must not use the request/reply client.
class NoHttp final : public HttpClient {
 public:
  Result<HttpReply> Send(const HttpRequest& request) override {
    ADD_FAILURE() << "unexpected request " << request.url;
    return Status::Internal("unexpected");
  }
};

class FakeStream final : public StreamingHttpClient {
 public:
  explicit FakeStream(Script* script) : script_(script) {}
  Result<HttpReply> Stream(const HttpRequest& request, const StreamCallbacks& callbacks, StopSignal* stop) override {
    script_->requests.push_back(request);
    EXPECT_NE(stop, nullptr);
    if (script_->connections.empty()) {
      ADD_FAILURE() << "unscripted connection " << request.url;
      script_->stop = true;
      return Status::Unavailable("unscripted");
    }
    Connection connection = std::move(script_->connections.front());
    script_->connections.pop_front();
    if (connection.status == 0) return connection.failure.value_or(Status::Unavailable("no reply"));
    HttpReply head;
    head.status = connection.status;
    head.headers = {{"content-type", connection.content_type}};
    script_->chunks_taken.push_back(0);
    if (connection.status < 200 || connection.status > 299) {
      head.body = connection.error_body;
      return head;
    }
    if (callbacks.on_open && !callbacks.on_open(head)) return head;
    for (const auto& chunk : connection.chunks) {
      ++script_->chunks_taken.back();
      if (!callbacks.on_data(chunk)) return head;
    }
    if (connection.stop_after) script_->stop = true;
    if (connection.failure) return *connection.failure;
    return head;
  }

 private:
  Script* script_;
};

std::string Frame(int64_t seq, const std::string& type = "breadcrumb.created", const std::string& id = "b") {
  return "id: " + std::to_string(seq) + "\ndata: {\"type\":\"" + type + "\",\"seq\":" + std::to_string(seq) +
         ",\"breadcrumb_id\":\"" + id + std::to_string(seq) + "\",\"version\":1,\"schema_name\":\"x.v1\"," +
         "\"title\":\"T" + std::to_string(seq) + "\",\"tags\":[\"a\",\"b\"],\"at\":\"2030-01-01T00:00:00.000000Z\"}\n\n";
}

const std::string kOpen = ": stream open\n\n";
const std::string kPing = "data: {\"type\":\"ping\",\"at\":\"2030-01-01T00:00:00Z\"}\n\n";

class TailCommandTest : public ::testing::Test {
 protected:
  int Run(std::vector<std::string> args, const std::string& stdin_text = "") {
    in_.str(stdin_text);
    out_.str("");
    err_.str("");
    ClientContext context{
        in_,
        out_,
        err_,
        [](const char*) -> const char* { return nullptr; },
        [](const CurlOptions&) -> std::unique_ptr<HttpClient> { return std::make_unique<NoHttp>(); },
        [] { return int64_t{0}; },
        [this](const CurlOptions& options) -> std::unique_ptr<StreamingHttpClient> {
          stream_options_ = options;
          return std::make_unique<FakeStream>(&script_);
        },
        [this]() -> std::unique_ptr<StopSignal> { return std::make_unique<FakeStop>(&script_); },
    };
    args.push_back("--server");
    args.push_back("http://srv:9");
    return RunClientCommandIn("tail", args, context);
  }

  std::vector<std::string> OutLines() const {
    std::vector<std::string> lines;
    std::istringstream in(out_.str());
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }

  static std::string Header(const HttpRequest& request, const std::string& name) {
    for (const auto& [key, value] : request.headers) {
      if (key == name) return value;
    }
    return "<absent>";
  }

  std::istringstream in_;
  std::ostringstream out_;
  std::ostringstream err_;
  Script script_;
  CurlOptions stream_options_;
};

TEST_F(TailCommandTest, PrintsEachEventAsCompactJsonAndStopsAtMaxEvents) {
  // Frames split mid-line across chunks; pings and comments are not printed.
  const std::string body = kOpen + Frame(5) + kPing + Frame(6) + Frame(7);
  script_.connections.push_back({.chunks = {body.substr(0, 20), body.substr(20, 77), body.substr(97)}});
  EXPECT_EQ(Run({"--max-events", "2"}), 0) << err_.str();
  const auto lines = OutLines();
  ASSERT_EQ(lines.size(), 2u) << out_.str();
  EXPECT_EQ(json::parse(lines[0]).at("seq"), json::value(5));
  EXPECT_EQ(json::parse(lines[1]).at("seq"), json::value(6));
  EXPECT_EQ(lines[0].find(' '), std::string::npos) << "compact: " << lines[0];
  EXPECT_EQ(err_.str(), "cairn tail: connected to http://srv:9, waiting for events (Ctrl-C to stop)\n");
  ASSERT_EQ(script_.requests.size(), 1u);
  EXPECT_EQ(script_.requests[0].method, "GET");
  EXPECT_EQ(script_.requests[0].url, "http://srv:9/events/stream");
  EXPECT_EQ(Header(script_.requests[0], "Last-Event-ID"), "<absent>");
  EXPECT_EQ(stream_options_.total_timeout_ms, 0) << "a stream has no total timeout";
}

TEST_F(TailCommandTest, SelectorOptionsBecomeQueryParameters) {
  script_.connections.push_back({.chunks = {kOpen + Frame(1)}});
  EXPECT_EQ(Run({"--schema", "x.v1", "--tag", "a", "--tag", "b c", "--any-tag", "p", "--any-tag", "q,r", "--path",
                 "proj/**", "--types", "created,breadcrumb.deleted", "--types", "updated", "--match",
                 R"({"path":"$.n","op":"eq","value":1})", "--selector-id", "s1", "--actor", "me", "--max-events",
                 "1"}),
            0)
      << err_.str();
  ASSERT_EQ(script_.requests.size(), 1u);
  EXPECT_EQ(script_.requests[0].url,
            "http://srv:9/events/stream?schema_name=x.v1&tag=a&tag=b%20c&any_tags=p%2Cq%2Cr&path=proj%2F%2A%2A"
            "&types=breadcrumb.created%2Cbreadcrumb.deleted%2Cbreadcrumb.updated"
            "&context_match=%7B%22path%22%3A%22%24.n%22%2C%22op%22%3A%22eq%22%2C%22value%22%3A1%7D"
            "&selector_id=s1");
  EXPECT_EQ(Header(script_.requests[0], "X-Cairn-Actor"), "me");
}

TEST_F(TailCommandTest, SinceIsSentAsLastEventId) {
  script_.connections.push_back({.chunks = {kOpen + Frame(11)}});
  EXPECT_EQ(Run({"--since", "10", "--max-events", "1"}), 0) << err_.str();
  ASSERT_EQ(script_.requests.size(), 1u);
  EXPECT_EQ(Header(script_.requests[0], "Last-Event-ID"), "10");
}

TEST_F(TailCommandTest, ReconnectsAfterNetworkErrorResumingFromTheLastEvent) {
  script_.connections.push_back({.chunks = {kOpen + Frame(3) + Frame(4) + "id: 5\ndata: {\"ty"},
                                 .failure = Status::Unavailable("GET x failed: Connection reset by peer")});
  script_.connections.push_back({.chunks = {kOpen + Frame(5) + Frame(6)}});
  EXPECT_EQ(Run({"--max-events", "4"}), 0) << err_.str();
  const auto lines = OutLines();
  ASSERT_EQ(lines.size(), 4u) << out_.str();
  for (int i = 0; i < 4; ++i) EXPECT_EQ(json::parse(lines[i]).at("seq"), json::value(3 + i)) << lines[i];
  ASSERT_EQ(script_.requests.size(), 2u);
  EXPECT_EQ(Header(script_.requests[1], "Last-Event-ID"), "4") << "the cut-off frame 5 was not received";
  EXPECT_NE(err_.str().find("lost the event stream (GET x failed: Connection reset by peer); reconnecting in 100 ms "
                            "(resuming after event 4)"),
            std::string::npos)
      << err_.str();
  EXPECT_EQ(script_.waits, std::vector<std::chrono::milliseconds>{std::chrono::milliseconds(100)});
  EXPECT_NE(err_.str().find("(resuming after event 4)\ncairn tail: reconnected\n"), std::string::npos) << err_.str();
}

TEST_F(TailCommandTest, BackoffDoublesUpToFiveSecondsAndResetsAfterAHealthyStream) {
  const Status refused = Status::Unavailable("GET x failed: Connection refused");
  for (int i = 0; i < 8; ++i) script_.connections.push_back({.status = 0, .failure = refused});
  script_.connections.push_back({.chunks = {kOpen + Frame(1)}});  // healthy, then closed by the server
  script_.connections.push_back({.status = 0, .failure = refused});
  script_.connections.push_back({.chunks = {kOpen + Frame(2)}});
  EXPECT_EQ(Run({"--max-events", "2"}), 0) << err_.str();
  using ms = std::chrono::milliseconds;
  EXPECT_EQ(script_.waits, (std::vector<ms>{ms(100), ms(200), ms(400), ms(800), ms(1600), ms(3200), ms(5000),
                                            ms(5000), ms(100), ms(200)}));
  EXPECT_NE(err_.str().find("cannot reach the cairn server at http://srv:9 (GET x failed: Connection refused); "
                            "reconnecting in 100 ms (no event received yet"),
            std::string::npos)
      << err_.str();
  EXPECT_NE(err_.str().find("reconnecting in 5 s"), std::string::npos) << err_.str();
  EXPECT_NE(err_.str().find("the server closed the event stream; reconnecting in 100 ms (resuming after event 1)"),
            std::string::npos)
      << err_.str();
  ASSERT_EQ(script_.requests.size(), 11u);
  EXPECT_EQ(Header(script_.requests[8], "Last-Event-ID"), "<absent>");
  EXPECT_EQ(Header(script_.requests[9], "Last-Event-ID"), "1");
  EXPECT_EQ(Header(script_.requests[10], "Last-Event-ID"), "1");
}

TEST_F(TailCommandTest, StreamDroppedResumesFromResumeFrom) {
  script_.connections.push_back(
      {.chunks = {kOpen + Frame(8) +
                  "data: {\"type\":\"stream.dropped\",\"reason\":\"the client read too slowly\",\"resume_from\":9}\n\n"}});
  script_.connections.push_back({.chunks = {kOpen + Frame(10)}});
  EXPECT_EQ(Run({"--max-events", "2"}), 0) << err_.str();
  ASSERT_EQ(script_.requests.size(), 2u);
  EXPECT_EQ(Header(script_.requests[1], "Last-Event-ID"), "9");
  EXPECT_EQ(OutLines().size(), 2u) << "stream.dropped is not printed: " << out_.str();
  EXPECT_NE(err_.str().find("the server dropped the event stream: the client read too slowly; reconnecting in 100 ms "
                            "(resuming after event 9)"),
            std::string::npos)
      << err_.str();
}

TEST_F(TailCommandTest, AnIdWithoutDataMovesTheResumePoint) {
  script_.connections.push_back({.chunks = {kOpen + Frame(1) + "id: 5\n\n"}, .failure = Status::Unavailable("reset")});
  script_.connections.push_back({.chunks = {kOpen + Frame(6)}});
  EXPECT_EQ(Run({"--max-events", "2"}), 0) << err_.str();
  ASSERT_EQ(script_.requests.size(), 2u);
  EXPECT_EQ(Header(script_.requests[1], "Last-Event-ID"), "5");
}

TEST_F(TailCommandTest, ServiceUnavailableIsRetried) {
  script_.connections.push_back(
      {.status = 503, .error_body = R"({"error":{"code":"unavailable","message":"the server is shutting down"}})"});
  script_.connections.push_back({.chunks = {kOpen + Frame(1)}});
  EXPECT_EQ(Run({"--max-events", "1"}), 0) << err_.str();
  EXPECT_NE(err_.str().find("the server is shutting down (HTTP 503 unavailable); reconnecting in 100 ms"),
            std::string::npos)
      << err_.str();
  EXPECT_EQ(OutLines().size(), 1u);
}

TEST_F(TailCommandTest, HttpErrorIsFatalWithTheServersMessage) {
  script_.connections.push_back(
      {.status = 410,
       .error_body = R"({"error":{"code":"gone","message":"events after 3 are no longer retained"}})"});
  EXPECT_EQ(Run({"--since", "3"}), 1);
  EXPECT_EQ(err_.str(), "cairn tail: events after 3 are no longer retained (HTTP 410 gone)\n");
  EXPECT_EQ(out_.str(), "");
  EXPECT_EQ(script_.requests.size(), 1u);
  EXPECT_TRUE(script_.waits.empty());
}

TEST_F(TailCommandTest, ValidationErrorAfterAReconnectIsFatalToo) {
  script_.connections.push_back({.chunks = {kOpen + Frame(1)}, .failure = Status::Unavailable("reset")});
  script_.connections.push_back(
      {.status = 422,
       .error_body = R"({"error":{"code":"validation","message":"types[0]: unknown event type","field":"types[0]"}})"});
  EXPECT_EQ(Run({}), 1);
  EXPECT_NE(err_.str().find("cairn tail: types[0]: unknown event type (HTTP 422 validation)\n"), std::string::npos)
      << err_.str();
  EXPECT_EQ(OutLines().size(), 1u);
}

TEST_F(TailCommandTest, NotAnEventStreamIsFatal) {
  script_.connections.push_back({.content_type = "text/html", .chunks = {"<html>"}});
  EXPECT_EQ(Run({}), 1);
  EXPECT_NE(err_.str().find("did not answer with an event stream (Content-Type 'text/html')"), std::string::npos)
      << err_.str();
  EXPECT_EQ(script_.chunks_taken, std::vector<size_t>{0});
}

TEST_F(TailCommandTest, StopSignalEndsWithExitZero) {
  script_.connections.push_back({.chunks = {kOpen + Frame(1), Frame(2)}, .stop_after = true});
  EXPECT_EQ(Run({}), 0) << err_.str();
  EXPECT_EQ(OutLines().size(), 2u);
  EXPECT_EQ(err_.str().find("reconnecting"), std::string::npos) << "no reconnect note when stopping: " << err_.str();
  EXPECT_EQ(script_.requests.size(), 1u);
}

TEST_F(TailCommandTest, StopDuringBackoffEndsWithExitZero) {
  script_.connections.push_back({.status = 0, .failure = Status::Unavailable("refused")});
  script_.stop_after_waits = 1;
  EXPECT_EQ(Run({}), 0) << err_.str();
  EXPECT_EQ(script_.requests.size(), 1u);
  EXPECT_EQ(script_.waits.size(), 1u);
}

TEST_F(TailCommandTest, PrettyPrintsOneReadableLine) {
  script_.connections.push_back(
      {.chunks = {kOpen + Frame(42) +
                  "id: 43\ndata: {\"type\":\"breadcrumb.deleted\",\"seq\":43,\"breadcrumb_id\":\"z\",\"version\":3,"
                  "\"schema_name\":null,\"title\":\"say \\\"hi\\\"\",\"tags\":[],\"at\":\"2030-01-02T00:00:00Z\"}\n\n"}});
  EXPECT_EQ(Run({"--pretty", "--max-events", "2"}), 0) << err_.str();
  const auto lines = OutLines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "42  2030-01-01T00:00:00.000000Z  created  x.v1  \"T42\"  b42 v1  [a, b]");
  EXPECT_EQ(lines[1], "43  2030-01-02T00:00:00Z  deleted  -  \"say \\\"hi\\\"\"  z v3  []");
}

TEST_F(TailCommandTest, NonJsonFrameIsSkippedWithANote) {
  script_.connections.push_back({.chunks = {kOpen + "id: 1\ndata: not json\n\n" + Frame(2)}});
  EXPECT_EQ(Run({"--max-events", "1"}), 0);
  EXPECT_EQ(OutLines().size(), 1u);
  EXPECT_NE(err_.str().find("ignoring a frame that is not a JSON object: not json"), std::string::npos) << err_.str();
}

TEST_F(TailCommandTest, OversizedFrameIsFatal) {
  script_.connections.push_back({.chunks = {kOpen + "data: " + std::string(net::SseParser::kDefaultMaxFrameBytes, 'x')}});
  EXPECT_EQ(Run({}), 1);
  EXPECT_NE(err_.str().find("larger than"), std::string::npos) << err_.str();
}

TEST_F(TailCommandTest, UsageErrorsExitTwoWithoutConnecting) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--since", "-1"},
           {"--since", "x"},
           {"--max-events", "0"},
           {"--max-events", "1.5"},
           {"--any-tag", "a,,b"},
           {"--types", ""},
           {"--match", "{"},
           {"extra"},
       }) {
    EXPECT_EQ(Run(args), 2) << args[0];
    EXPECT_NE(err_.str().find("usage: cairn tail"), std::string::npos) << err_.str();
  }
  EXPECT_TRUE(script_.requests.empty());
}

TEST_F(TailCommandTest, HelpListsTheOptions) {
  EXPECT_EQ(Run({"--help"}), 0);
  for (const char* option : {"--schema", "--tag", "--any-tag", "--path", "--types", "--match", "--selector-id",
                             "--since", "--pretty", "--max-events", "--server"}) {
    EXPECT_NE(out_.str().find(option), std::string::npos) << option;
  }
}

}  // namespace
}  // namespace cairn::cli
