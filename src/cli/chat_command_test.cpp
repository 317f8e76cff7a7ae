// `cairn chat` against a scripted event stream and API: the messages written, what is printed
// while an answer streams in, which answer ends the wait, errors, timeouts and reconnections,
// without a server. The fakes run synchronously: the stream delivers its chunks from within
// Stream(), and chat reads and writes the next line from within those callbacks, so the order of
// everything that happened is recorded in one log.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <deque>
#include <map>
#include <sstream>

#include "cli/client_commands.h"
#include "cli/client_context.h"

namespace cairn::cli {
namespace {

namespace json = boost::json;

// One scripted connection of the event stream.
struct Connection {
  int status = 200;
  std::vector<std::string> chunks = {};  // streamed after the head
  std::optional<Status> failure = {};    // after the chunks: the connection breaks
  bool idle_until_stop = false;          // after the chunks: nothing more until the stop (time passes)
};

struct World {
  std::deque<Connection> connections;
  std::vector<HttpRequest> stream_requests;
  std::vector<HttpRequest> requests;       // through the request/reply client
  std::vector<std::string> log;            // "stream", "chunk", "POST <content>", "GET <path>"
  std::vector<std::string> out_after_chunk;  // stdout after each chunk was handled
  std::map<std::string, std::string> records;  // GET /breadcrumbs/<id>/full bodies
  std::deque<std::string> post_errors;  // the next POSTs are answered 422 with these bodies
  int next_id = 1;
  int64_t now = 1'000'000'000'000;   // microseconds
  bool stop = false;
  std::vector<std::chrono::milliseconds> waits;
  std::ostringstream* out = nullptr;
};

class FakeStop final : public StopSignal {
 public:
  explicit FakeStop(World* world) : world_(world) {}
  bool stop_requested() const override { return world_->stop; }
  int fd() const override { return -1; }
  bool WaitFor(std::chrono::milliseconds duration) override {
    world_->waits.push_back(duration);
    world_->now += duration.count() * 1000;
    return !world_->stop;
  }

 private:
  World* world_;
};

class FakeHttp final : public HttpClient {
 public:
  explicit FakeHttp(World* world) : world_(world) {}
  Result<HttpReply> Send(const HttpRequest& request) override {
    world_->requests.push_back(request);
    HttpReply reply;
    reply.headers = {{"content-type", "application/json"}};
    const std::string path = request.url.substr(std::string("http://srv:9").size());
    if (request.method == "POST" && path == "/breadcrumbs") {
      json::value body = json::parse(request.body.value_or("null"));
      world_->log.push_back("POST " + std::string(body.at("context").at("content").as_string()));
      if (!world_->post_errors.empty()) {
        reply.status = 422;
        reply.body = world_->post_errors.front();
        world_->post_errors.pop_front();
        return reply;
      }
      reply.status = 201;
      reply.body = R"({"id":"m)" + std::to_string(world_->next_id++) + R"(","version":1})";
      return reply;
    }
    world_->log.push_back(request.method + " " + path);
    for (const auto& [id, body] : world_->records) {
      if (request.method == "GET" && path == "/breadcrumbs/" + id + "/full") {
        reply.status = 200;
        reply.body = body;
        return reply;
      }
    }
    reply.status = 404;
    reply.body = R"({"error":{"code":"not_found","message":"no such breadcrumb"}})";
    return reply;
  }

 private:
  World* world_;
};

class FakeStream final : public StreamingHttpClient {
 public:
  explicit FakeStream(World* world) : world_(world) {}
  Result<HttpReply> Stream(const HttpRequest& request, const StreamCallbacks& callbacks, StopSignal* stop) override {
    world_->stream_requests.push_back(request);
    world_->log.push_back("stream");
    if (world_->connections.empty()) {
      ADD_FAILURE() << "unscripted connection " << request.url;
      world_->stop = true;
      return Status::Unavailable("unscripted");
    }
    Connection connection = std::move(world_->connections.front());
    world_->connections.pop_front();
    if (connection.status == 0) return connection.failure.value_or(Status::Unavailable("connection refused"));
    HttpReply head;
    head.status = connection.status;
    head.headers = {{"content-type", connection.status == 200 ? "text/event-stream" : "application/json"}};
    if (connection.status != 200) {
      head.body = R"({"error":{"code":"unavailable","message":"shutting down"}})";
      return head;
    }
    if (callbacks.on_open && !callbacks.on_open(head)) return head;
    for (const auto& chunk : connection.chunks) {
      world_->log.push_back("chunk");
      bool more = callbacks.on_data(chunk);
      world_->out_after_chunk.push_back(world_->out->str());
      if (!more) return head;
    }
    if (connection.idle_until_stop) {
      for (int i = 0; i < 100'000 && !stop->stop_requested(); ++i) world_->now += 1'000'000;  // a second a turn
      EXPECT_TRUE(stop->stop_requested()) << "the stream was never stopped";
      return head;
    }
    if (connection.failure) return *connection.failure;
    return head;
  }

 private:
  World* world_;
};

// "id: <seq>\ndata: <breadcrumb.created event>\n\n"; `context` is JSON text, or "" for an event
// whose context was omitted.
std::string Created(int64_t seq, const std::string& schema, const std::string& context, const std::string& id = "") {
  std::string breadcrumb_id = id.empty() ? "b" + std::to_string(seq) : id;
  std::string body = R"({"type":"breadcrumb.created","seq":)" + std::to_string(seq) + R"(,"breadcrumb_id":")" +
                     breadcrumb_id + R"(","version":1,"schema_name":")" + schema +
                     R"(","title":"t","tags":["session:s1"],"owner_id":"default","at":"2030-01-01T00:00:00.000000Z",)" +
                     (context.empty() ? std::string(R"("context_omitted":true)") : R"("context":)" + context) + "}";
  return "id: " + std::to_string(seq) + "\ndata: " + body + "\n\n";
}

std::string Token(const std::string& delta) {
  json::object event{{"type", "agent.token"},      {"owner_id", "default"}, {"tags", json::array{"session:s1"}},
                     {"at", "2030-01-01T00:00:00.000000Z"}, {"execution_id", "x1"}, {"agent_id", "helper"},
                     {"delta", delta}};
  return "data: " + json::serialize(event) + "\n\n";
}

std::string Answer(int64_t seq, const std::string& request_id, const std::string& message) {
  return Created(seq, "agent.response.v1",
                 json::serialize(json::object{{"request_id", request_id}, {"status", "success"}, {"message", message}}));
}

std::string ErrorAnswer(int64_t seq, const std::string& request_id, const std::string& code, const std::string& message) {
  return Created(seq, "agent.response.v1",
                 json::serialize(json::object{{"request_id", request_id},
                                              {"status", "error"},
                                              {"error", json::object{{"code", code}, {"message", message}}}}));
}

// The echo of the user.message.v1 chat wrote (the stream carries it too).
std::string Echo(int64_t seq, const std::string& id, const std::string& content) {
  return Created(seq, "user.message.v1", json::serialize(json::object{{"content", content}}), id);
}

const std::string kOpen = ": stream open\n\n";

class ChatCommandTest : public ::testing::Test {
 protected:
  ChatCommandTest() { world_.out = &out_; }

  int Run(std::vector<std::string> args, const std::string& stdin_text) {
    in_.str(stdin_text);
    out_.str("");
    err_.str("");
    ClientContext context{
        in_,
        out_,
        err_,
        [](const char*) -> const char* { return nullptr; },
        [this](const CurlOptions&) -> std::unique_ptr<HttpClient> { return std::make_unique<FakeHttp>(&world_); },
        [this] { return world_.now; },
        [this](const CurlOptions& options) -> std::unique_ptr<StreamingHttpClient> {
          stream_options_ = options;
          return std::make_unique<FakeStream>(&world_);
        },
        [this]() -> std::unique_ptr<StopSignal> { return std::make_unique<FakeStop>(&world_); },
    };
    args.push_back("--server");
    args.push_back("http://srv:9");
    return RunClientCommandIn("chat", args, context);
  }

  // The POST bodies chat wrote, in order.
  std::vector<json::object> Posts() const {
    std::vector<json::object> posts;
    for (const auto& request : world_.requests) {
      if (request.method == "POST") posts.push_back(json::parse(request.body.value_or("{}")).as_object());
    }
    return posts;
  }

  static std::string Header(const HttpRequest& request, const std::string& name) {
    for (const auto& [key, value] : request.headers) {
      if (key == name) return value;
    }
    return "<absent>";
  }

  World world_;
  std::istringstream in_;
  std::ostringstream out_;
  std::ostringstream err_;
  CurlOptions stream_options_;
};

TEST_F(ChatCommandTest, WritesEachLineAsAUserMessageAfterOpeningTheStream) {
  world_.connections.push_back({.chunks = {kOpen, Echo(10, "m1", "hello there"), Answer(11, "m1", "Hi!")}});
  EXPECT_EQ(Run({"helper", "--session", "s1"}, "hello there\n"), 0) << err_.str();

  ASSERT_EQ(world_.stream_requests.size(), 1u);
  EXPECT_EQ(world_.stream_requests[0].url,
            "http://srv:9/events/stream?any_tags=session%3As1%2Csession-activity%3As1&types=breadcrumb.created%2Cagent.token");
  EXPECT_EQ(stream_options_.total_timeout_ms, 0);  // the stream has no overall deadline
  EXPECT_EQ(world_.log.front(), "stream");          // opened before the message was written
  auto posts = Posts();
  ASSERT_EQ(posts.size(), 1u);
  EXPECT_EQ(posts[0], json::parse(R"({"title":"hello there","schema_name":"user.message.v1","tags":["session:s1"],
                                      "context":{"content":"hello there","agent_id":"helper"}})"));
  EXPECT_EQ(out_.str(), "session s1 (Ctrl-D to quit)\nHi!\n");
  EXPECT_EQ(err_.str(), "");
}

TEST_F(ChatCommandTest, WithoutAnAgentTheMessageHasNoAgentIdAndTheTitleIsCut) {
  // 70 characters, some of them two bytes long: the title keeps the first 60 characters whole.
  std::string line;
  for (int i = 0; i < 35; ++i) line += "\xC3\xA9" "a";  // "éa"
  world_.connections.push_back({.chunks = {kOpen, Answer(11, "m1", "ok")}});
  EXPECT_EQ(Run({"--session", "s1"}, "\n   \n" + line + "\n"), 0) << err_.str();  // blank lines are skipped
  auto posts = Posts();
  ASSERT_EQ(posts.size(), 1u);
  EXPECT_FALSE(posts[0].at("context").as_object().contains("agent_id"));
  EXPECT_EQ(posts[0].at("context").at("content"), json::value(line));
  std::string title;
  for (int i = 0; i < 30; ++i) title += "\xC3\xA9" "a";
  EXPECT_EQ(posts[0].at("title"), json::value(title));
}

TEST_F(ChatCommandTest, ANewSessionIdIsPrintedAndUsed) {
  world_.connections.push_back({.chunks = {kOpen}});
  EXPECT_EQ(Run({}, ""), 0) << err_.str();  // stdin ends at once: nothing is written
  const std::string out = out_.str();
  ASSERT_TRUE(out.starts_with("session ")) << out;
  std::string id = out.substr(8, out.find(' ', 8) - 8);
  EXPECT_EQ(id.size(), 36u) << out;  // a UUID
  EXPECT_NE(world_.stream_requests.at(0).url.find("any_tags=session%3A" + id + "%2Csession-activity%3A" + id + "&"), std::string::npos);
  EXPECT_TRUE(Posts().empty());
}

TEST_F(ChatCommandTest, TokensArePrintedAsTheyArriveAndTheAnswerEndsTheLine) {
  world_.connections.push_back(
      {.chunks = {kOpen, Echo(10, "m1", "hi"), Token("Hel"), Token("lo, "), Token("you"), Answer(11, "m1", "Hello, you")}});
  EXPECT_EQ(Run({"helper", "--session", "s1"}, "hi\n"), 0) << err_.str();
  const std::string banner = "session s1 (Ctrl-D to quit)\n";
  ASSERT_EQ(world_.out_after_chunk.size(), 6u);
  EXPECT_EQ(world_.out_after_chunk[2], banner + "Hel");  // flushed as each token came
  EXPECT_EQ(world_.out_after_chunk[3], banner + "Hello, ");
  EXPECT_EQ(world_.out_after_chunk[4], banner + "Hello, you");
  EXPECT_EQ(out_.str(), banner + "Hello, you\n");  // the answer only ends the line: no repeat
}

TEST_F(ChatCommandTest, OnlyTheAnswerToThisMessageEndsTheWait) {
  // Conversation of two lines, answered in turn on the same stream.
  world_.connections.push_back({.chunks = {kOpen, Echo(10, "m1", "one"),
                                           Answer(11, "m0", "an answer to an older message"),
                                           Created(12, "agent.response.v1", R"({"status":"success","message":"no id"})"),
                                           Answer(13, "m1", "first"), Echo(14, "m2", "two"), Answer(15, "m1", "late duplicate"),
                                           Answer(16, "m2", "second")}});
  EXPECT_EQ(Run({"helper", "--session", "s1"}, "one\ntwo\n"), 0) << err_.str();
  EXPECT_EQ(out_.str(), "session s1 (Ctrl-D to quit)\nfirst\nsecond\n");
  // The second line was only written once the first was answered.
  EXPECT_EQ(world_.log, (std::vector<std::string>{"stream", "POST one", "chunk", "chunk", "chunk", "chunk", "chunk",
                                                  "POST two", "chunk", "chunk", "chunk"}));
  EXPECT_EQ(world_.stream_requests.size(), 1u);  // one stream for the whole conversation
}

TEST_F(ChatCommandTest, AnErrorAnswerGoesToStderrAndTheChatGoesOn) {
  world_.connections.push_back({.chunks = {kOpen, Token("Work"), ErrorAnswer(11, "m1", "llm_unavailable", "the model did not answer"),
                                           Answer(12, "m2", "fine now")}});
  EXPECT_EQ(Run({"helper", "--session", "s1"}, "one\ntwo\n"), 0) << err_.str();
  EXPECT_EQ(err_.str(), "error: llm_unavailable: the model did not answer\n");
  EXPECT_EQ(out_.str(), "session s1 (Ctrl-D to quit)\nWork\nfine now\n");
}

TEST_F(ChatCommandTest, ToolRequestsOfTheSessionArePrintedOnALineOfTheirOwn) {
  std::string big(300, 'x');
  world_.connections.push_back(
      {.chunks = {kOpen, Token("Let me look"),
                  Created(11, "tool.request.v1", R"({"tool":"search","input":{"q":"lisbon","n":3},"request_id":"r1"})"),
                  Created(12, "tool.request.v1", R"({"tool":"echo","input":{"text":")" + big + R"("}})"),
                  Token("Found it."), Answer(13, "m1", "Let me lookFound it.")}});
  EXPECT_EQ(Run({"helper", "--session", "s1"}, "where?\n"), 0) << err_.str();
  std::string cut = (R"({"text":")" + big).substr(0, 200);
  EXPECT_EQ(out_.str(), "session s1 (Ctrl-D to quit)\nLet me look\n"
                        "  \u2192 search({\"q\":\"lisbon\",\"n\":3})\n"
                        "  \u2192 echo(" + cut + ")\n"
                        "Found it.\n");
}

TEST_F(ChatCommandTest, NoAnswerInTimeIsSaidAndTheNextLineIsSent) {
  world_.connections.push_back({.chunks = {kOpen, Echo(10, "m1", "one"), Token("thinking")}, .idle_until_stop = true});
  world_.connections.push_back({.chunks = {kOpen, Answer(12, "m2", "two it is")}});
  const int64_t start = world_.now;
  EXPECT_EQ(Run({"helper", "--session", "s1", "--timeout", "5"}, "one\ntwo\n"), 0) << err_.str();
  EXPECT_EQ(err_.str(), "cairn chat: no answer within 5 s (message m1); it may still come, but will not be shown\n");
  EXPECT_EQ(out_.str(), "session s1 (Ctrl-D to quit)\nthinking\ntwo it is\n");
  EXPECT_GE(world_.now - start, 5'000'000);  // it gave up at the deadline, not before
  EXPECT_LT(world_.now - start, 7'000'000);
  ASSERT_EQ(world_.stream_requests.size(), 2u);
  EXPECT_EQ(Header(world_.stream_requests[1], "Last-Event-ID"), "10");  // resumed, nothing stored lost
  EXPECT_TRUE(world_.waits.empty());  // no backoff: the stream was ended on purpose
}

TEST_F(ChatCommandTest, TheDefaultAnswerTimeoutIsFiveMinutes) {
  world_.connections.push_back({.chunks = {kOpen}, .idle_until_stop = true});
  world_.connections.push_back({.chunks = {kOpen}});
  const int64_t start = world_.now;
  EXPECT_EQ(Run({"--session", "s1"}, "anyone?\n"), 0) << err_.str();
  EXPECT_NE(err_.str().find("no answer within 300 s"), std::string::npos) << err_.str();
  EXPECT_GE(world_.now - start, 300'000'000);
  EXPECT_LT(world_.now - start, 302'000'000);
}

TEST_F(ChatCommandTest, AnOmittedContextIsReadFromTheRecord) {
  world_.records["b11"] = R"({"id":"b11","context":{"request_id":"m1","status":"success","message":"a long answer"}})";
  world_.connections.push_back({.chunks = {kOpen, Created(11, "agent.response.v1", "")}});
  EXPECT_EQ(Run({"--session", "s1"}, "tell me everything\n"), 0) << err_.str();
  EXPECT_EQ(out_.str(), "session s1 (Ctrl-D to quit)\na long answer\n");
  EXPECT_EQ(world_.log, (std::vector<std::string>{"stream", "POST tell me everything", "chunk", "chunk",
                                                  "GET /breadcrumbs/b11/full"}));
}

TEST_F(ChatCommandTest, ALostStreamIsResumedAndTheAnswerStillArrives) {
  world_.connections.push_back({.chunks = {kOpen, Echo(10, "m1", "one"), Token("par")},
                                .failure = Status::Unavailable("connection reset")});
  world_.connections.push_back({.status = 503});
  world_.connections.push_back({.chunks = {kOpen, Token("tial"), Answer(12, "m1", "partial answer")}});
  EXPECT_EQ(Run({"--session", "s1"}, "one\n"), 0) << err_.str();
  ASSERT_EQ(world_.stream_requests.size(), 3u);
  EXPECT_EQ(Header(world_.stream_requests[1], "Last-Event-ID"), "10");
  EXPECT_EQ(Header(world_.stream_requests[2], "Last-Event-ID"), "10");
  EXPECT_EQ(Posts().size(), 1u);  // the message is not written again
  EXPECT_EQ(world_.waits, (std::vector<std::chrono::milliseconds>{std::chrono::milliseconds(100), std::chrono::milliseconds(200)}));
  // The notes on stderr start on a line of their own; tokens may have been lost meanwhile, so the
  // whole answer is printed after them.
  EXPECT_EQ(out_.str(), "session s1 (Ctrl-D to quit)\npar\ntial\npartial answer\n");
  EXPECT_NE(err_.str().find("cairn chat: lost the event stream"), std::string::npos) << err_.str();
  EXPECT_NE(err_.str().find("cairn chat: reconnected\n"), std::string::npos) << err_.str();
}

TEST_F(ChatCommandTest, JsonPrintsEveryEventOfTheSession) {
  world_.connections.push_back({.chunks = {kOpen, "data: {\"type\":\"ping\",\"at\":\"x\"}\n\n", Echo(10, "m1", "hi"), Token("Hey"),
                                           Answer(11, "m1", "Hey")}});
  EXPECT_EQ(Run({"--session", "s1", "--json"}, "hi\n"), 0) << err_.str();
  std::vector<std::string> types;
  std::istringstream lines(out_.str());
  for (std::string line; std::getline(lines, line);) {
    json::value event = json::parse(line);
    types.push_back(std::string(event.at("type").as_string()) + " " +
                    (event.as_object().contains("schema_name") ? std::string(event.at("schema_name").as_string()) : "-"));
  }
  EXPECT_EQ(types, (std::vector<std::string>{"breadcrumb.created user.message.v1", "agent.token -",
                                             "breadcrumb.created agent.response.v1"}));
  EXPECT_EQ(err_.str(), "session s1 (Ctrl-D to quit)\n");  // stdout is JSON only
}

TEST_F(ChatCommandTest, AMessageThatCannotBeWrittenIsReportedAndTheExitCodeSaysSo) {
  world_.post_errors.push_back(
      R"({"error":{"code":"validation_failed","message":"title: too long","field":"title"}})");
  world_.connections.push_back({.chunks = {kOpen, Answer(11, "m1", "got the second")}});
  EXPECT_EQ(Run({"--session", "s1"}, "first\nsecond\n"), 1);
  EXPECT_NE(err_.str().find("cairn chat: the message was not sent: title: too long (HTTP 422 validation_failed)"), std::string::npos) << err_.str();
  EXPECT_EQ(out_.str(), "session s1 (Ctrl-D to quit)\ngot the second\n");
}

TEST_F(ChatCommandTest, AServerThatCannotBeReachedAtFirstIsAFailure) {
  world_.connections.push_back({.status = 0, .failure = Status::Unavailable("connection refused")});
  EXPECT_EQ(Run({"--session", "s1"}, "hello\n"), 1);
  EXPECT_NE(err_.str().find("cannot reach the cairn server at http://srv:9"), std::string::npos) << err_.str();
  EXPECT_TRUE(Posts().empty());
}

TEST_F(ChatCommandTest, UsageErrors) {
  EXPECT_EQ(Run({"a", "b"}, ""), 2);
  EXPECT_EQ(Run({"--session", ""}, ""), 2);
  EXPECT_TRUE(world_.stream_requests.empty());
  EXPECT_EQ(Run({"--help"}, ""), 0);
  EXPECT_NE(out_.str().find("--session ID"), std::string::npos) << out_.str();
}

}  // namespace
}  // namespace cairn::cli
