// Routes added with Router::AddAsync (Dispatch::kAsync), in process: a real HttpServer on port 0
// whose handlers reply later, from another thread, as a write's handler replies from the store's
// writer thread. Driven by the e2e HTTP client over loopback.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <string>
#include <thread>

#include "http_client.h"
#include "server/http_server.h"
#include "server/router.h"

namespace cairn::server {
namespace {

using namespace std::chrono_literals;

// Replies handed to it, answered by its own thread when the test says so: a writer thread that
// commits on demand.
class LaterReplies {
 public:
  LaterReplies() : thread_([this] { Loop(); }) {}
  ~LaterReplies() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  void Hold(Reply reply, std::string body) {
    std::lock_guard lock(mu_);
    held_.push_back({std::move(reply), std::move(body)});
    cv_.notify_all();
  }
  // Waits until `count` replies are held.
  bool WaitHeld(size_t count) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, 10s, [&] { return held_.size() >= count; });
  }
  // Answers every held reply on this object's thread.
  void ReleaseAll() {
    std::lock_guard lock(mu_);
    release_ = true;
    cv_.notify_all();
  }

 private:
  void Loop() {
    std::unique_lock lock(mu_);
    while (true) {
      cv_.wait(lock, [this] { return stopping_ || (release_ && !held_.empty()); });
      if (release_ && !held_.empty()) {
        auto [reply, body] = std::move(held_.front());
        held_.pop_front();
        lock.unlock();
        reply([body = std::move(body)]() -> Result<HttpResponse> { return HttpResponse::Json(201, body); });
        lock.lock();
        continue;
      }
      if (stopping_) return;
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<Reply, std::string>> held_;
  bool release_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

std::string ThreadName() {
  std::string name(16, '\0');
  pthread_getname_np(pthread_self(), name.data(), name.size());
  name.resize(name.find('\0'));
  return name;
}

class AsyncRouteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Echoes the body's length, answered later from another thread.
    router_.AddAsync("POST", "/later", [this](const HttpRequest& req, Reply reply) {
      later_.Hold(std::move(reply), "{\"bytes\":" + std::to_string(req.body.size()) + "}");
    });
    router_.AddAsync("POST", "/refuse", [](const HttpRequest&, Reply reply) {
      reply([]() -> Result<HttpResponse> { return Status::Validation("title", "must be a string"); });
    });
    router_.AddAsync("POST", "/twice", [](const HttpRequest&, Reply reply) {
      reply([]() -> Result<HttpResponse> { return HttpResponse::Json(201, "{\"first\":true}"); });
      reply([]() -> Result<HttpResponse> { return HttpResponse::Json(500, "{\"second\":true}"); });
    });
    router_.AddAsync("POST", "/forget", [](const HttpRequest&, Reply) {});
    router_.AddAsync("POST", "/throw", [](const HttpRequest&, Reply) { throw std::runtime_error("handler bug"); });
    router_.AddAsync("POST", "/throw-later", [](const HttpRequest&, Reply reply) {
      std::thread([reply] { reply([]() -> Result<HttpResponse> { throw std::runtime_error("builder bug"); }); }).detach();
    });
    // Which threads ran the handler and built the answer: for large bodies, the worker pool.
    router_.AddAsync("POST", "/thread", [](const HttpRequest&, Reply reply) {
      reply([handler = ThreadName()]() -> Result<HttpResponse> {
        return HttpResponse::Json(200, "{\"handler\":\"" + handler + "\",\"builder\":\"" + ThreadName() + "\"}");
      });
    });
    HttpServerOptions options;
    options.port = 0;
    options.io_threads = 2;
    options.worker_threads = 2;
    options.shutdown_grace_ms = 100;
    server_ = std::make_unique<HttpServer>(options, router_, metrics_, nullptr);
    auto port = server_->Listen();
    ASSERT_TRUE(port.ok()) << port.status().ToString();
    port_ = *port;
    thread_ = std::thread([this] { server_->Run(); });
  }
  void TearDown() override {
    if (server_ && thread_.joinable()) {
      server_->Stop();
      thread_.join();
    }
  }

  Router router_;
  LaterReplies later_;
  MetricsRegistry metrics_;
  std::unique_ptr<HttpServer> server_;
  int port_ = 0;
  std::thread thread_;
};

TEST_F(AsyncRouteTest, RepliesFromAnotherThreadReachTheirOwnConnections) {
  constexpr int kClients = 8;
  std::vector<std::future<e2e::Response>> answers;
  for (int i = 0; i < kClients; ++i) {
    answers.push_back(std::async(std::launch::async, [this, i] {
      e2e::HttpClient client(port_);
      return client.Post("/later", std::string(static_cast<size_t>(i + 1), 'x'));
    }));
  }
  // Every handler returned without its answer: all eight wait at once, none holds a thread.
  ASSERT_TRUE(later_.WaitHeld(kClients));
  later_.ReleaseAll();
  for (int i = 0; i < kClients; ++i) {
    e2e::Response r = answers[static_cast<size_t>(i)].get();
    ASSERT_EQ(r.status, 201) << r.Describe();
    EXPECT_EQ(r.Json().at("bytes").as_int64(), i + 1) << "an answer reached another connection";
  }
}

TEST_F(AsyncRouteTest, AKeptAliveConnectionGoesOnAfterAnAsyncAnswer) {
  e2e::HttpClient client(port_);
  later_.ReleaseAll();
  for (int i = 0; i < 3; ++i) {
    e2e::Response r = client.Post("/later", "abc");
    ASSERT_EQ(r.status, 201) << r.Describe();
  }
  EXPECT_EQ(client.Post("/refuse", "{}").status, 422);
}

TEST_F(AsyncRouteTest, AnErrorIsAnsweredAsAJsonError) {
  e2e::HttpClient client(port_);
  e2e::Response r = client.Post("/refuse", "{}");
  EXPECT_EQ(r.status, 422) << r.Describe();
  EXPECT_EQ(r.Json().at("error").at("field").as_string(), "title") << r.Describe();
}

TEST_F(AsyncRouteTest, TheFirstReplyStands) {
  e2e::HttpClient client(port_);
  e2e::Response r = client.Post("/twice", "{}");
  EXPECT_EQ(r.status, 201) << r.Describe();
  EXPECT_TRUE(r.Json().as_object().contains("first")) << r.Describe();
  // The connection was answered once: the next request on it gets its own answer.
  EXPECT_EQ(client.Post("/refuse", "{}").status, 422);
}

TEST_F(AsyncRouteTest, AReplyDroppedOrAHandlerThatThrowsIsA500) {
  e2e::HttpClient client(port_);
  for (const char* path : {"/forget", "/throw", "/throw-later"}) {
    e2e::Response r = client.Post(path, "{}");
    EXPECT_EQ(r.status, 500) << path << ": " << r.Describe();
  }
  // The server is still serving.
  EXPECT_EQ(client.Post("/refuse", "{}").status, 422);
}

TEST_F(AsyncRouteTest, ALargeBodyIsParsedAndAnsweredOffTheIoThreads) {
  e2e::HttpClient client(port_);
  e2e::Response small = client.Post("/thread", std::string(100, 'x'));
  ASSERT_EQ(small.status, 200) << small.Describe();
  EXPECT_EQ(small.Json().at("handler").as_string(), "http-io");
  EXPECT_EQ(small.Json().at("builder").as_string(), "http-io");
  e2e::Response large = client.Post("/thread", std::string(200 * 1024, 'x'));
  ASSERT_EQ(large.status, 200) << large.Describe();
  EXPECT_EQ(large.Json().at("handler").as_string(), "http-worker");
  EXPECT_EQ(large.Json().at("builder").as_string(), "http-worker");
}

TEST_F(AsyncRouteTest, ShutdownWaitsForAnswersStillToComeAndStopsAfterThem) {
  auto answer = std::async(std::launch::async, [this] {
    e2e::HttpClient client(port_);
    return client.Post("/later", "pending");
  });
  ASSERT_TRUE(later_.WaitHeld(1));
  server_->Stop();
  // Past the grace period Run() still waits: the held reply owns its connection, which must not
  // outlive the server's I/O contexts.
  auto stopped = std::async(std::launch::async, [this] { thread_.join(); });
  EXPECT_EQ(stopped.wait_for(300ms), std::future_status::timeout) << "Run() returned with an answer outstanding";
  later_.ReleaseAll();
  stopped.get();
  server_.reset();  // what the process does next: its connections close
  e2e::Response r = answer.get();
  EXPECT_NE(r.status, 201) << "answered after the I/O stopped: " << r.Describe();
}

TEST(AsyncRouter, TheBlockingFormWaitsForTheReply) {
  Router router;
  std::thread replier;
  router.AddAsync("POST", "/later", [&replier](const HttpRequest& req, Reply reply) {
    replier = std::thread([reply, body = req.body] {
      reply([body]() -> Result<HttpResponse> { return HttpResponse::Json(201, body); });
    });
  });
  Router::Match match = router.Find("POST", "/later");
  ASSERT_NE(match.route, nullptr);
  EXPECT_EQ(match.route->dispatch, Dispatch::kAsync);
  HttpRequest request;
  request.body = "{\"n\":1}";
  auto response = match.route->handler(request);
  replier.join();
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 201);
  EXPECT_EQ(response->body, "{\"n\":1}");
}

}  // namespace
}  // namespace cairn::server
