// OpenAiProvider against a loopback HTTP server inside the test.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <functional>
#include <mutex>
#include <thread>

#include "exec/llm/openai_provider.h"
#include "support/loopback_http_server.h"

namespace cairn::exec::llm {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

using Request = test_support::ReceivedRequest;
using Conn = test_support::HttpConnection;

// The loopback server of tests/support; the handler gets the request number (0-based) and writes
// whatever it likes. BaseUrl() is the provider's base URL on it.
class TestServer : public test_support::LoopbackHttpServer {
 public:
  explicit TestServer(Handler handler) : LoopbackHttpServer(std::move(handler)) {}
  std::string BaseUrl() const { return Url("/v1/"); }
};

std::string Http(int status, std::string_view reason, std::string_view body, std::string_view extra_headers = "",
                 std::string_view type = "application/json") {
  return "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) + "\r\nContent-Type: " + std::string(type) +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" + std::string(extra_headers) +
         "Connection: close\r\n\r\n" + std::string(body);
}

// The head of a streamed answer: the body runs until the connection closes.
const std::string kSseHead = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\nConnection: close\r\n\r\n";

std::string Completion(std::string_view content) {
  return R"({"id":"chatcmpl-1","object":"chat.completion","model":"test-model-001","choices":[{"index":0,"message":{"role":"assistant","content":")" +
         std::string(content) + R"("},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}})";
}

std::string Delta(std::string_view content) {
  return R"(data: {"model":"test-model-001","choices":[{"index":0,"delta":{"content":")" + std::string(content) +
         R"("},"finish_reason":null}]})" + "\n\n";
}

const std::string kSseEnd =
    R"(data: {"model":"test-model-001","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})" "\n\n"
    R"(data: {"model":"test-model-001","choices":[],"usage":{"prompt_tokens":4,"completion_tokens":3,"total_tokens":7}})" "\n\n"
    "data: [DONE]\n\n";

const std::string kUnauthorized =
    R"({"error":{"message":"Incorrect API key provided: sk-test-secret-42. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}})";

// A provider for `server` whose waits between attempts are recorded, not slept.
struct Fixture {
  std::vector<std::chrono::milliseconds> waits;
  std::mutex mu;
  OpenAiOptions Options(const TestServer& server) {
    OpenAiOptions o;
    o.name = "openai";
    o.base_url = server.BaseUrl();
    o.api_key = "sk-test-secret-42";
    o.api_key_env = "OPENAI_API_KEY";
    o.max_attempts = 3;
    o.base_backoff = 40ms;
    o.max_backoff = 100ms;
    o.request_timeout = 5s;
    o.stream_idle_timeout = 5s;
    o.jitter = [](std::chrono::milliseconds ceiling) { return ceiling; };
    o.sleep = [this](std::chrono::milliseconds d, const std::atomic<bool>*) {
      std::lock_guard lock(mu);
      waits.push_back(d);
    };
    return o;
  }
};

ChatRequest Ask(bool stream) {
  ChatRequest r;
  r.model = "test-model";
  r.messages = {{"user", "hi", true, {}, {}}};
  r.stream = stream;
  return r;
}

TEST(OpenAiProviderTest, NonStreamingReply) {
  TestServer server([](int, const Request&, Conn& c) { c.Send(Http(200, "OK", Completion("Hello there"))); });
  Fixture f;
  OpenAiProvider provider(f.Options(server));
  auto r = provider.Complete(Ask(false), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->message.content, "Hello there");
  EXPECT_EQ(r->finish_reason, "stop");
  EXPECT_EQ(r->usage.total, 5);
  EXPECT_EQ(r->model, "test-model-001");
  EXPECT_EQ(r->attempts, 1);
  auto seen = server.requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].method, "POST");
  EXPECT_EQ(seen[0].target, "/v1/chat/completions");  // the trailing slash of base_url is dropped
  EXPECT_EQ(seen[0].Header("authorization"), "Bearer sk-test-secret-42");
  EXPECT_EQ(seen[0].Header("content-type"), "application/json");
  auto body = boost::json::parse(seen[0].body);
  EXPECT_EQ(body.at("model"), "test-model");
  EXPECT_EQ(body.at("stream"), false);
  EXPECT_EQ(body.at("messages").at(0).at("content"), "hi");
  EXPECT_TRUE(f.waits.empty());
}

TEST(OpenAiProviderTest, StreamingDeliversDeltas) {
  TestServer server([](int, const Request&, Conn& c) {
    c.Send(kSseHead);
    for (std::string_view piece : {"Hel", "lo", " wor", "ld"}) {
      c.Send(Delta(piece));
      c.Pause(5ms);
    }
    c.Send(kSseEnd);
  });
  Fixture f;
  OpenAiOptions options = f.Options(server);
  options.api_key = "";  // no key: no Authorization header
  OpenAiProvider provider(options);
  std::vector<std::string> deltas;
  CallOptions call;
  call.on_delta = [&deltas](std::string_view d) { deltas.emplace_back(d); };
  auto r = provider.Complete(Ask(true), call);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(deltas, (std::vector<std::string>{"Hel", "lo", " wor", "ld"}));
  EXPECT_EQ(r->message.content, "Hello world");
  EXPECT_EQ(r->finish_reason, "stop");
  EXPECT_EQ(r->usage.prompt, 4);
  EXPECT_EQ(r->usage.total, 7);
  EXPECT_EQ(r->attempts, 1);
  auto seen = server.requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_FALSE(seen[0].Header("authorization").has_value());
  EXPECT_EQ(seen[0].Header("accept"), "text/event-stream");
  auto body = boost::json::parse(seen[0].body);
  EXPECT_EQ(body.at("stream"), true);
  EXPECT_EQ(body.at("stream_options").at("include_usage"), true);
}

TEST(OpenAiProviderTest, ServerErrorIsRetried) {
  TestServer server([](int n, const Request&, Conn& c) {
    c.Send(n == 0 ? Http(500, "Internal Server Error", R"({"error":{"message":"boom"}})") : Http(200, "OK", Completion("ok")));
  });
  Fixture f;
  OpenAiProvider provider(f.Options(server));
  auto r = provider.Complete(Ask(false), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->attempts, 2);
  EXPECT_EQ(r->message.content, "ok");
  EXPECT_EQ(server.requests().size(), 2u);
  EXPECT_EQ(f.waits, (std::vector<std::chrono::milliseconds>{40ms}));  // base_backoff before attempt 2
}

TEST(OpenAiProviderTest, RateLimitHonoursRetryAfterCappedAtMaxBackoff) {
  TestServer server([](int n, const Request&, Conn& c) {
    if (n == 0) c.Send(Http(429, "Too Many Requests", R"({"error":{"message":"slow down"}})", "Retry-After: 0\r\n"));
    if (n == 1) c.Send(Http(429, "Too Many Requests", "", "Retry-After: 30\r\n"));
    if (n >= 2) c.Send(Http(200, "OK", Completion("finally")));
  });
  Fixture f;
  OpenAiProvider provider(f.Options(server));
  auto r = provider.Complete(Ask(false), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->attempts, 3);
  EXPECT_EQ(f.waits, (std::vector<std::chrono::milliseconds>{0ms, 100ms}));
}

TEST(OpenAiProviderTest, RetriesRunOut) {
  TestServer server([](int, const Request&, Conn& c) { c.Send(Http(503, "Service Unavailable", "upstream down")); });
  Fixture f;
  OpenAiProvider provider(f.Options(server));
  auto r = provider.Complete(Ask(false), {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(r.status().message(), "openai (" + server.BaseUrl() +
                                      ") answered 503 Service Unavailable: upstream down (gave up after 3 attempts)");
  EXPECT_EQ(server.requests().size(), 3u);
  EXPECT_EQ(f.waits, (std::vector<std::chrono::milliseconds>{40ms, 80ms}));
}

TEST(OpenAiProviderTest, UnauthorizedIsNotRetriedAndNamesTheKeyVariable) {
  TestServer server([](int, const Request&, Conn& c) { c.Send(Http(401, "Unauthorized", kUnauthorized)); });
  Fixture f;
  OpenAiProvider provider(f.Options(server));
  auto r = provider.Complete(Ask(true), {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  const std::string& m = r.status().message();
  EXPECT_TRUE(m.starts_with("openai (" + server.BaseUrl() + ") answered 401 Unauthorized: Incorrect API key provided: ***."))
      << m;
  EXPECT_TRUE(m.ends_with("— check the API key (OPENAI_API_KEY)")) << m;
  EXPECT_EQ(m.find("sk-test-secret-42"), std::string::npos) << m;  // an echoed key is masked
  EXPECT_EQ(server.requests().size(), 1u);
}

// A per-call key (a tenant's secret) replaces the provider's and is masked like it.
TEST(OpenAiProviderTest, APerCallKeyIsSentAndMasked) {
  const std::string echoed =
      R"({"error":{"message":"Incorrect API key provided: tenant-key-7f3a9c. base64: dGVuYW50LWtleS03ZjNhOWM="}})";
  TestServer server([&echoed](int, const Request&, Conn& c) { c.Send(Http(401, "Unauthorized", echoed)); });
  Fixture f;
  OpenAiProvider provider(f.Options(server));
  CallOptions call;
  call.api_key = "tenant-key-7f3a9c";
  call.api_key_source = "secret LLM_KEY of tenant acme";
  auto r = provider.Complete(Ask(false), call);
  ASSERT_FALSE(r.ok());
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(server.requests()[0].Header("authorization"), "Bearer tenant-key-7f3a9c");
  const std::string& m = r.status().message();
  EXPECT_EQ(m.find("tenant-key-7f3a9c"), std::string::npos) << m;
  EXPECT_EQ(m.find("dGVuYW50LWtleS03ZjNhOWM"), std::string::npos) << m;
  EXPECT_TRUE(m.ends_with("— check the API key (secret LLM_KEY of tenant acme)")) << m;
}

TEST(OpenAiProviderTest, ClientErrorsAreInvalidArgument) {
  TestServer server([](int n, const Request&, Conn& c) {
    if (n == 0) c.Send(Http(404, "Not Found", R"({"error":{"message":"The model `test-model` does not exist"}})"));
    if (n == 1) c.Send(Http(400, "Bad Request", R"({"error":{"message":"max_tokens is too large"}})"));
  });
  Fixture f;
  OpenAiProvider provider(f.Options(server));
  auto r = provider.Complete(Ask(false), {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("answered 404 Not Found: The model `test-model` does not exist — check the model "
                                      "name (test-model) and the base URL (requests go to " + server.BaseUrl() +
                                      "chat/completions)"),
            std::string::npos)
      << r.status().message();
  r = provider.Complete(Ask(false), {});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("400 Bad Request: max_tokens is too large"), std::string::npos) << r.status().message();
  EXPECT_EQ(server.requests().size(), 2u);  // neither was retried
}

TEST(OpenAiProviderTest, StreamErrorBeforeContentIsRetried) {
  TestServer server([](int n, const Request&, Conn& c) {
    c.Send(kSseHead);
    if (n == 0) {
      c.Send(": OPENROUTER PROCESSING\n\ndata: {\"error\":{\"message\":\"Provider overloaded\",\"code\":502}}\n\n");
      return;
    }
    c.Send(Delta("fine") + kSseEnd);
  });
  Fixture f;
  OpenAiProvider provider(f.Options(server));
  auto r = provider.Complete(Ask(true), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->message.content, "fine");
  EXPECT_EQ(r->attempts, 2);
}

TEST(OpenAiProviderTest, FailureAfterContentIsNotRetried) {
  TestServer server([](int, const Request&, Conn& c) {
    c.Send(kSseHead + Delta("partial"));  // then the connection closes without finish_reason or [DONE]
  });
  Fixture f;
  OpenAiProvider provider(f.Options(server));
  std::string seen;
  CallOptions call;
  call.on_delta = [&seen](std::string_view d) { seen += d; };
  auto r = provider.Complete(Ask(true), call);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("not retried"), std::string::npos) << r.status().message();
  EXPECT_EQ(seen, "partial");
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST(OpenAiProviderTest, PlainJsonAnswerToAStreamingRequest) {
  TestServer server([](int, const Request&, Conn& c) { c.Send(Http(200, "OK", Completion("whole"))); });
  Fixture f;
  OpenAiProvider provider(f.Options(server));
  std::vector<std::string> deltas;
  CallOptions call;
  call.on_delta = [&deltas](std::string_view d) { deltas.emplace_back(d); };
  auto r = provider.Complete(Ask(true), call);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(deltas, (std::vector<std::string>{"whole"}));
}

TEST(OpenAiProviderTest, StreamLabelledTextPlainIsStillAStream) {
  TestServer server([](int, const Request&, Conn& c) {
    c.Send("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n" + Delta("x") + kSseEnd);
  });
  Fixture f;
  OpenAiProvider provider(f.Options(server));
  auto r = provider.Complete(Ask(true), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->message.content, "x");
  EXPECT_EQ(r->usage.total, 7);
}

TEST(OpenAiProviderTest, CancelDuringASlowStreamReturnsPromptly) {
  TestServer server([](int, const Request&, Conn& c) {
    c.Send(kSseHead + Delta("first"));
    c.Pause(10s);  // returns when the client hangs up
  });
  Fixture f;
  OpenAiProvider provider(f.Options(server));
  std::atomic<bool> cancel{false};
  CallOptions call;
  call.cancelled = &cancel;
  std::atomic<bool> got_delta{false};
  call.on_delta = [&got_delta](std::string_view) { got_delta = true; };
  std::thread canceller([&] {
    while (!got_delta) std::this_thread::sleep_for(1ms);
    std::this_thread::sleep_for(50ms);
    cancel = true;
  });
  auto start = Clock::now();
  auto r = provider.Complete(Ask(true), call);
  auto elapsed = Clock::now() - start;
  canceller.join();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(r.status().message(), "cancelled");
  EXPECT_LT(elapsed, 1s);
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST(OpenAiProviderTest, CancelBetweenRetriesStopsWaiting) {
  TestServer server([](int, const Request&, Conn& c) { c.Send(Http(503, "Service Unavailable", "")); });
  Fixture f;
  OpenAiOptions options = f.Options(server);
  options.sleep = nullptr;  // the real, sliced sleep
  options.base_backoff = 10s;
  options.max_backoff = 10s;
  OpenAiProvider provider(options);
  std::atomic<bool> cancel{false};
  CallOptions call;
  call.cancelled = &cancel;
  std::thread canceller([&] {
    std::this_thread::sleep_for(100ms);
    cancel = true;
  });
  auto start = Clock::now();
  auto r = provider.Complete(Ask(false), call);
  auto elapsed = Clock::now() - start;
  canceller.join();
  EXPECT_EQ(r.status().message(), "cancelled");
  EXPECT_LT(elapsed, 1s);
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST(OpenAiProviderTest, StreamIdleTimeout) {
  TestServer server([](int n, const Request&, Conn& c) {
    if (n == 0) c.Pause(3s);  // not even a status line: retried
    if (n == 1) {
      c.Send(kSseHead + Delta("a"));
      c.Pause(3s);  // a stall after content: not retried
    }
  });
  Fixture f;
  OpenAiOptions options = f.Options(server);
  options.stream_idle_timeout = 150ms;
  OpenAiProvider provider(options);
  auto start = Clock::now();
  auto r = provider.Complete(Ask(true), {});
  auto elapsed = Clock::now() - start;
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("no data for 150 ms while streaming"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("not retried"), std::string::npos) << r.status().message();
  EXPECT_EQ(server.requests().size(), 2u);
  EXPECT_GE(elapsed, 300ms);
  EXPECT_LT(elapsed, 2s);
}

TEST(OpenAiProviderTest, OversizedReplyAndConnectionRefused) {
  TestServer server([](int, const Request&, Conn& c) { c.Send(Http(200, "OK", Completion(std::string(5000, 'x')))); });
  Fixture f;
  OpenAiOptions options = f.Options(server);
  options.max_response_bytes = 1000;
  auto r = OpenAiProvider(options).Complete(Ask(false), {});
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
  EXPECT_NE(r.status().message().find("reply larger than 1000 bytes"), std::string::npos) << r.status().message();

  // A port that was just bound and released: nothing listens there.
  int port = test_support::FreeLoopbackPort();
  ASSERT_NE(port, 0);
  options.base_url = "http://127.0.0.1:" + std::to_string(port) + "/v1";
  f.waits.clear();
  r = OpenAiProvider(options).Complete(Ask(false), {});
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("cannot connect"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("gave up after 3 attempts"), std::string::npos) << r.status().message();
  EXPECT_EQ(f.waits.size(), 2u);
}

TEST(OpenAiProviderTest, ConcurrentCalls) {
  TestServer server([](int, const Request& req, Conn& c) {
    auto body = boost::json::parse(req.body);
    std::string text(body.at("messages").at(0).at("content").as_string());
    c.Send(Http(200, "OK", Completion("re: " + text)));
  });
  Fixture f;
  OpenAiProvider provider(f.Options(server));
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&provider, &good, t] {
      for (int i = 0; i < 3; ++i) {
        ChatRequest request = Ask(false);
        request.messages[0].content = std::to_string(t) + "-" + std::to_string(i);
        auto r = provider.Complete(request, {});
        if (r.ok() && r->message.content == "re: " + request.messages[0].content) ++good;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(good, 12);
}

}  // namespace
}  // namespace cairn::exec::llm
