// GET /events/stream with ephemeral events (agent.token), and the session stream's own views
// (GET /sessions/{id}/events, session_handlers.h), in process: a real HttpServer on port 0 with a
// scripted bus and an EphemeralHub, read by a raw-socket client.
//
// Waiting is always for bytes from the socket (a blocking read with a deadline), never for time.
// To prove a stream received nothing else, each check ends with a "sentinel" that the stream does
// match, published after the events it must not get: hub deliveries and bus wake-ups are posted
// to the stream's strand in the order they happen, so anything wrongly delivered would arrive
// before the sentinel.
#include "server/sse_stream.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/json/parse.hpp>
#include <chrono>
#include <mutex>
#include <thread>

#include "base/time_format.h"
#include "server/event_handlers.h"
#include "server/http_server.h"
#include "server/session_handlers.h"
#include "sessions/session_service.h"
#include "support/fakes.h"

namespace cairn::server {
namespace {

namespace json = boost::json;

constexpr int64_t kStoredAt = 1'800'000'000'000'000;

// A bus whose events the test appends; wakes its subscribers on each append.
class ScriptedBus final : public bus::EventBus {
 public:
  Result<std::vector<bus::EventPtr>> Read(int64_t after_seq, size_t limit) override {
    std::lock_guard lock(mu_);
    std::vector<bus::EventPtr> out;
    for (const auto& event : events_) {
      if (event->seq > after_seq && out.size() < limit) out.push_back(event);
    }
    return out;
  }
  bool InWindow(int64_t) const override { return true; }
  int64_t LastSeq() const override {
    std::lock_guard lock(mu_);
    return events_.empty() ? 0 : events_.back()->seq;
  }
  Result<store::EventLogBounds> Bounds() override { return store::EventLogBounds{1, LastSeq()}; }
  std::unique_ptr<bus::Subscription> Subscribe(std::function<void()> wake) override {
    std::lock_guard lock(mu_);
    uint64_t id = next_id_++;
    wakes_.emplace_back(id, std::move(wake));
    return std::make_unique<Handle>(this, id);
  }

  // Commits a breadcrumb.created event with the next seq (breadcrumb id "b<seq>", at kStoredAt +
  // seq); returns the seq.
  int64_t Append(const std::vector<std::string>& tags, const std::string& schema = "note.v1",
                 const std::string& owner = "default", json::object context = {}) {
    auto event = std::make_shared<model::Event>();
    event->type = "breadcrumb.created";
    event->breadcrumb_id = "b";
    event->version = 1;
    event->schema_name = schema;
    event->title = "stored";
    event->tags = tags;
    event->owner_id = owner;
    event->created_by = "test";
    event->context = std::move(context);
    std::lock_guard lock(mu_);
    event->seq = events_.empty() ? 1 : events_.back()->seq + 1;
    event->breadcrumb_id = "b" + std::to_string(event->seq);
    event->at = kStoredAt + event->seq;
    events_.push_back(event);
    for (auto& [id, wake] : wakes_) wake();
    return event->seq;
  }

  size_t subscriber_count() const {
    std::lock_guard lock(mu_);
    return wakes_.size();
  }

 private:
  class Handle final : public bus::Subscription {
   public:
    Handle(ScriptedBus* bus, uint64_t id) : bus_(bus), id_(id) {}
    ~Handle() override {
      std::lock_guard lock(bus_->mu_);
      std::erase_if(bus_->wakes_, [this](const auto& entry) { return entry.first == id_; });
    }

   private:
    ScriptedBus* bus_;
    uint64_t id_;
  };

  mutable std::mutex mu_;
  std::vector<bus::EventPtr> events_;
  uint64_t next_id_ = 1;
  std::vector<std::pair<uint64_t, std::function<void()>>> wakes_;
};

// One SSE frame as received: its `id:` (empty if none) and its data line.
struct Frame {
  std::string id;
  std::string data;
  std::string raw;
  json::object Json() const {
    json::value v = json::parse(data);
    return v.is_object() ? v.as_object() : json::object{};
  }
};

// A raw-socket client of GET /events/stream (or of another stream at `path`).
class StreamClient {
 public:
  StreamClient(uint16_t port, const std::string& query, const std::string& path = "/events/stream",
               const std::string& extra_headers = "") {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    timeval timeout{20, 0};  // a read that waits longer than this fails the test
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    std::string request = "GET " + path + (query.empty() ? "" : "?" + query) +
                          " HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n" + extra_headers + "\r\n";
    if (connected_) connected_ = send(fd_, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size());
  }
  ~StreamClient() { Close(); }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

  // Reads the response head and the ": stream open" comment; false (and the bytes in `error`) otherwise.
  bool Open(std::string* error) {
    if (!connected_) {
      *error = "cannot connect";
      return false;
    }
    while (buffer_.find("\r\n\r\n") == std::string::npos) {
      if (!ReadMore()) break;
    }
    size_t head_end = buffer_.find("\r\n\r\n");
    if (head_end == std::string::npos || !buffer_.starts_with("HTTP/1.1 200")) {
      *error = "no 200 head: " + buffer_;
      return false;
    }
    buffer_.erase(0, head_end + 4);
    auto first = NextRawFrame();
    if (!first || *first != ": stream open") {
      *error = "no stream-open comment: " + first.value_or("<none>");
      return false;
    }
    return true;
  }

  // The next frame that is not a comment or a ping; nullopt when the connection ends or the read
  // times out.
  std::optional<Frame> Next() {
    while (auto raw = NextRawFrame()) {
      if (raw->starts_with(":")) continue;
      Frame frame;
      frame.raw = *raw;
      size_t start = 0;
      while (start <= raw->size()) {
        size_t end = std::min(raw->find('\n', start), raw->size());
        std::string_view line = std::string_view(*raw).substr(start, end - start);
        if (line.starts_with("id: ")) frame.id = std::string(line.substr(4));
        if (line.starts_with("data: ")) frame.data = std::string(line.substr(6));
        start = end + 1;
      }
      if (frame.data.find("\"type\":\"ping\"") != std::string::npos) continue;
      return frame;
    }
    return std::nullopt;
  }

 private:
  bool ReadMore() {
    char chunk[4096];
    ssize_t n = recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<size_t>(n));
    return true;
  }
  std::optional<std::string> NextRawFrame() {
    while (buffer_.find("\n\n") == std::string::npos) {
      if (!ReadMore()) return std::nullopt;
    }
    size_t end = buffer_.find("\n\n");
    std::string raw = buffer_.substr(0, end);
    buffer_.erase(0, end + 2);
    return raw;
  }

  int fd_ = -1;
  bool connected_ = false;
  std::string buffer_;
};

bus::EphemeralPtr Token(const std::string& delta, std::vector<std::string> tags = {"session:s1"},
                        const std::string& owner = "default", const std::string& agent = "a1") {
  auto event = std::make_shared<bus::EphemeralEvent>();
  event->type = "agent.token";
  event->owner_id = owner;
  event->tags = std::move(tags);
  event->at = 1'800'000'000'123'456;
  event->data = {{"execution_id", "x1"}, {"agent_id", agent}, {"delta", delta}};
  return event;
}

class SseEphemeralTest : public ::testing::Test {
 protected:
  SseEphemeralTest() {
    AddEventRoutes(router_, bus_, store_, model::Limits{});
    // The session stream as GET /sessions/{id}/events builds it, minus the session lookup (the
    // route itself is tested in session_handlers_test.cpp).
    router_.Add("GET", "/sessions/{id}/events", Dispatch::kWorker, [this](const HttpRequest& req) -> Result<HttpResponse> {
      CAIRN_ASSIGN_OR_RETURN(int64_t after_seq, StreamResumePoint(req, bus_));
      HttpResponse response;
      response.event_stream = SessionStreamSpec("default", req.path_params[0], after_seq);
      return response;
    });
    HttpServerOptions options;
    options.port = 0;
    options.io_threads = 2;
    options.worker_threads = 2;
    options.sse_heartbeat_ms = 600'000;  // no pings in the way
    server_ = std::make_unique<HttpServer>(options, router_, metrics_, &bus_, &hub_);
    auto port = server_->Listen();
    EXPECT_TRUE(port.ok()) << port.status().ToString();
    port_ = port.ok() ? *port : 0;
    thread_ = std::thread([this] { server_->Run(); });
  }
  ~SseEphemeralTest() override {
    server_->Stop();
    thread_.join();
  }

  std::unique_ptr<StreamClient> Open(const std::string& query) {
    auto client = std::make_unique<StreamClient>(port_, query);
    std::string error;
    EXPECT_TRUE(client->Open(&error)) << query << ": " << error;
    return client;
  }
  std::unique_ptr<StreamClient> OpenSession(const std::string& session_id, const std::string& query = "",
                                            const std::string& headers = "") {
    auto client = std::make_unique<StreamClient>(port_, query, "/sessions/" + session_id + "/events", headers);
    std::string error;
    EXPECT_TRUE(client->Open(&error)) << session_id << ": " << error;
    return client;
  }
  // A session message as the sessions facade stores it.
  int64_t AppendMessage(const std::string& session_id, json::object context) {
    std::string role = context.contains("role") ? std::string(context.at("role").as_string()) : "user";
    return bus_.Append({"session:" + session_id, "role:" + role}, std::string(sessions::kMessageSchema), "default",
                       std::move(context));
  }

  ScriptedBus bus_;
  bus::EphemeralHub hub_;
  test_support::NullStore store_;
  Router router_;
  MetricsRegistry metrics_;
  std::unique_ptr<HttpServer> server_;
  uint16_t port_ = 0;
  std::thread thread_;
};

TEST_F(SseEphemeralTest, ATokensOnlyStreamGetsMatchingTokensWithoutAnIdLine) {
  auto stream = Open("types=agent.token&any_tags=session:s1");
  EXPECT_EQ(hub_.subscriber_count(), 1u);
  EXPECT_EQ(bus_.subscriber_count(), 0u);  // it selects no stored type: it does not read the bus

  hub_.Publish(Token("other tenant", {"session:s1"}, "acme"));
  hub_.Publish(Token("other session", {"session:s2"}));
  bus_.Append({"session:s1"});  // stored: not selected
  hub_.Publish(Token("Hel", {"session:s1", "agent:a1"}));

  auto frame = stream->Next();
  ASSERT_TRUE(frame.has_value());
  EXPECT_EQ(frame->id, "");
  EXPECT_TRUE(frame->raw.starts_with("data: {")) << frame->raw;  // the data line only
  EXPECT_EQ(frame->raw.find('\n'), std::string::npos) << frame->raw;
  json::object event = frame->Json();
  EXPECT_EQ(event.at("type"), "agent.token");
  EXPECT_EQ(event.at("owner_id"), "default");
  EXPECT_EQ(event.at("tags"), (json::array{"session:s1", "agent:a1"}));
  EXPECT_EQ(event.at("at"), json::value(FormatRfc3339Micros(1'800'000'000'123'456)));
  EXPECT_EQ(event.at("execution_id"), "x1");
  EXPECT_EQ(event.at("agent_id"), "a1");
  EXPECT_EQ(event.at("delta"), "Hel");
  EXPECT_FALSE(event.contains("seq"));

  hub_.Publish(Token("lo"));
  frame = stream->Next();
  ASSERT_TRUE(frame.has_value());
  EXPECT_EQ(frame->Json().at("delta"), "lo") << frame->raw;
}

TEST_F(SseEphemeralTest, AStreamNamingBothTypesGetsBothInOrder) {
  auto stream = Open("types=breadcrumb.created,agent.token&any_tags=session:s1");
  int64_t first = bus_.Append({"session:s1"});
  auto frame = stream->Next();
  ASSERT_TRUE(frame.has_value());
  EXPECT_EQ(frame->id, std::to_string(first));
  EXPECT_EQ(frame->Json().at("type"), "breadcrumb.created");

  hub_.Publish(Token("tok"));
  frame = stream->Next();
  ASSERT_TRUE(frame.has_value());
  EXPECT_EQ(frame->id, "");
  EXPECT_EQ(frame->Json().at("delta"), "tok");

  bus_.Append({"session:s2"});  // not this session
  int64_t third = bus_.Append({"session:s1"});
  frame = stream->Next();
  ASSERT_TRUE(frame.has_value());
  EXPECT_EQ(frame->id, std::to_string(third));
}

TEST_F(SseEphemeralTest, AStreamThatDoesNotNameAgentTokenGetsNone) {
  auto stream = Open("any_tags=session:s1");
  EXPECT_EQ(hub_.subscriber_count(), 0u);
  hub_.Publish(Token("not for you"));
  int64_t seq = bus_.Append({"session:s1"});
  auto frame = stream->Next();
  ASSERT_TRUE(frame.has_value());
  EXPECT_EQ(frame->id, std::to_string(seq)) << frame->raw;
}

TEST_F(SseEphemeralTest, ContextMatchAppliesToTheDataAndSchemaOrPathNeverMatch) {
  // context_match={"path":"$.agent_id","value":"a2"}
  auto by_agent = Open("types=agent.token&context_match=%7B%22path%22%3A%22%24.agent_id%22%2C%22value%22%3A%22a2%22%7D");
  auto by_schema = Open("types=breadcrumb.created,agent.token&schema_name=note.v1");
  hub_.Publish(Token("from a1", {"session:s1"}, "default", "a1"));
  hub_.Publish(Token("from a2", {"session:s1"}, "default", "a2"));
  auto frame = by_agent->Next();
  ASSERT_TRUE(frame.has_value());
  EXPECT_EQ(frame->Json().at("delta"), "from a2") << frame->raw;

  int64_t seq = bus_.Append({"session:s1"}, "note.v1");  // the sentinel of by_schema
  frame = by_schema->Next();
  ASSERT_TRUE(frame.has_value());
  EXPECT_EQ(frame->id, std::to_string(seq)) << frame->raw;  // no token before it
}

TEST_F(SseEphemeralTest, AnUnknownTypeIsStillRefused) {
  auto bad = std::make_unique<StreamClient>(port_, "types=agent.tokens");
  std::string error;
  EXPECT_FALSE(bad->Open(&error));
  EXPECT_NE(error.find("400"), std::string::npos) << error;
}

TEST_F(SseEphemeralTest, AClosedStreamUnsubscribesFromTheHub) {
  auto stream = Open("types=agent.token");
  EXPECT_EQ(hub_.subscriber_count(), 1u);
  stream->Close();
  // The server notices the disconnect on its own schedule: poll, with a deadline.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (hub_.subscriber_count() != 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(hub_.subscriber_count(), 0u);
  hub_.Publish(Token("after close"));  // nothing to deliver to, nothing to crash on
}

TEST_F(SseEphemeralTest, TheSessionStreamSendsMessagesAsSessionPayloadsWithTheirSeq) {
  auto stream = OpenSession("s1");
  int64_t seq = AppendMessage("s1", {{"id", "m1"}, {"session_id", "s1"}, {"role", "user"}, {"content", "Find me a train"},
                                     {"agent_execution_id", "x1"}, {"metadata", {{"k", "v"}}}});
  auto frame = stream->Next();
  ASSERT_TRUE(frame.has_value());
  EXPECT_EQ(frame->id, std::to_string(seq));
  EXPECT_TRUE(frame->raw.starts_with("id: " + std::to_string(seq) + "\ndata: {")) << frame->raw;
  EXPECT_EQ(frame->Json(), (json::object{{"session_id", "s1"},
                                         {"message_id", "m1"},
                                         {"execution_id", "x1"},
                                         {"parent_execution_id", nullptr},
                                         {"event_type", "message.created"},
                                         {"role", "user"},
                                         {"content", "Find me a train"},
                                         {"metadata", {{"k", "v"}}},
                                         {"timestamp", kStoredAt + seq}}))
      << frame->raw;

  seq = AppendMessage("s1", {{"role", "info"}, {"content", "Execution queued"}, {"agent_execution_id", "x1"},
                             {"metadata", {{"event_type", "execution.queued"}}}});
  frame = stream->Next();
  ASSERT_TRUE(frame.has_value());
  EXPECT_EQ(frame->id, std::to_string(seq));
  EXPECT_EQ(frame->Json().at("event_type"), "execution.queued") << frame->raw;
  EXPECT_EQ(frame->Json().at("role"), "info") << frame->raw;
}

TEST_F(SseEphemeralTest, TheSessionStreamSendsTokensAsSessionPayloadsWithoutId) {
  auto stream = OpenSession("s1");
  auto token = std::make_shared<bus::EphemeralEvent>(*Token("Hel", {"session:s1", "execution:x1"}));
  token->data["step"] = 2;
  hub_.Publish(token);
  auto frame = stream->Next();
  ASSERT_TRUE(frame.has_value());
  EXPECT_EQ(frame->id, "");
  EXPECT_TRUE(frame->raw.starts_with("data: {")) << frame->raw;
  EXPECT_EQ(frame->Json(), (json::object{{"session_id", "s1"},
                                         {"message_id", ""},
                                         {"execution_id", "x1"},
                                         {"parent_execution_id", nullptr},
                                         {"agent_id", "a1"},
                                         {"event_type", "agent.token"},
                                         {"role", "assistant"},
                                         {"content", "Hel"},
                                         {"metadata", {{"step", 2}}},
                                         {"timestamp", 1'800'000'000'123'456}}))
      << frame->raw;
}

TEST_F(SseEphemeralTest, TheSessionStreamSendsOnlyItsOwnSessionsMessages) {
  auto stream = OpenSession("s1");
  AppendMessage("s2", {{"role", "user"}, {"content", "another session"}});
  hub_.Publish(Token("another session", {"session:s2"}));
  hub_.Publish(Token("another tenant", {"session:s1"}, "acme"));
  bus_.Append({"session:s1"}, std::string(sessions::kSessionSchema));    // the session record
  bus_.Append({"session:s1"}, std::string(sessions::kExecutionSchema));  // an execution
  bus_.Append({"session:s1"}, std::string(sessions::kMessageSchema), "acme", {{"role", "user"}});
  int64_t sentinel = AppendMessage("s1", {{"role", "user"}, {"content", "mine"}});
  auto frame = stream->Next();
  ASSERT_TRUE(frame.has_value());
  EXPECT_EQ(frame->id, std::to_string(sentinel)) << frame->raw;
  EXPECT_EQ(frame->Json().at("content"), "mine") << frame->raw;
}

TEST_F(SseEphemeralTest, TheSessionStreamResumesAfterLastEventIdOrSince) {
  int64_t first = AppendMessage("s1", {{"role", "user"}, {"content", "one"}});
  int64_t second = AppendMessage("s1", {{"role", "assistant"}, {"content", "two"}});
  auto by_header = OpenSession("s1", "since=0", "Last-Event-ID: " + std::to_string(first) + "\r\n");
  auto frame = by_header->Next();
  ASSERT_TRUE(frame.has_value());
  EXPECT_EQ(frame->id, std::to_string(second)) << frame->raw;
  auto by_since = OpenSession("s1", "since=0");
  frame = by_since->Next();
  ASSERT_TRUE(frame.has_value());
  EXPECT_EQ(frame->id, std::to_string(first)) << frame->raw;
  EXPECT_EQ(frame->Json().at("content"), "one");
}

TEST_F(SseEphemeralTest, RawAndSessionStreamsOfTheSameEventGetTheirOwnFrames) {
  // The shared frame cache holds raw event views; a session stream never takes from or adds to it.
  auto raw = Open("any_tags=session:s1");
  auto session = OpenSession("s1");
  int64_t seq = AppendMessage("s1", {{"role", "user"}, {"content", "both"}});
  auto raw_frame = raw->Next();
  auto session_frame = session->Next();
  ASSERT_TRUE(raw_frame.has_value() && session_frame.has_value());
  EXPECT_EQ(raw_frame->id, std::to_string(seq));
  EXPECT_EQ(raw_frame->Json().at("type"), "breadcrumb.created") << raw_frame->raw;
  EXPECT_EQ(session_frame->id, std::to_string(seq));
  EXPECT_EQ(session_frame->Json().at("event_type"), "message.created") << session_frame->raw;
  // Opened after both frames were built: still the raw view from the cache.
  auto late_raw = Open("any_tags=session:s1&since=" + std::to_string(seq - 1));
  auto late_frame = late_raw->Next();
  ASSERT_TRUE(late_frame.has_value());
  EXPECT_EQ(late_frame->Json().at("type"), "breadcrumb.created") << late_frame->raw;
}

TEST(EphemeralFrameTest, OneDataLineWithTheEnvelopeFirst) {
  bus::EphemeralEvent event;
  event.type = "agent.token";
  event.owner_id = "default";
  event.tags = {"session:s1"};
  event.at = 0;
  event.data = {{"type", "spoofed"}, {"delta", "line one\nline two"}, {"owner_id", "someone"}};
  std::string frame = EphemeralFrame(event);
  ASSERT_TRUE(frame.starts_with("data: ")) << frame;
  ASSERT_TRUE(frame.ends_with("\n\n")) << frame;
  std::string data = frame.substr(6, frame.size() - 8);
  EXPECT_EQ(data.find('\n'), std::string::npos) << frame;
  json::object parsed = json::parse(data).as_object();
  EXPECT_EQ(parsed.at("type"), "agent.token");
  EXPECT_EQ(parsed.at("owner_id"), "default");
  EXPECT_EQ(parsed.at("delta"), "line one\nline two");
  EXPECT_EQ(parsed.at("at"), "1970-01-01T00:00:00.000000Z");
}

TEST(EphemeralMatchesTest, OwnerAndSelector) {
  SseSpec spec;
  spec.owner_id = "default";
  spec.selector = *model::ParseSelectorQuery({{"types", "agent.token"}, {"all_tags", "session:s1"}}, {}, {});
  EXPECT_TRUE(EphemeralMatches(spec, *Token("x")));
  EXPECT_FALSE(EphemeralMatches(spec, *Token("x", {"session:s1"}, "acme")));
  EXPECT_FALSE(EphemeralMatches(spec, *Token("x", {"session:s2"})));
  spec.selector.types = {"breadcrumb.created"};
  EXPECT_FALSE(EphemeralMatches(spec, *Token("x")));
}

}  // namespace
}  // namespace cairn::server
