#include "net/http_fetch.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "support/loopback_http_server.h"
#include "support/outbound_policy.h"

namespace cairn::net {
namespace {

using namespace std::chrono_literals;
using test_support::Policy;
using test_support::ReceivedRequest;
using TestServer = test_support::LoopbackHttpServer;
using test_support::HttpResponse;

// The test servers listen on loopback, which the default policy refuses: the tests of the client
// itself allow it (http_fetch_policy_test.cpp tests the policy at connect time).
HttpFetchRequest Get(std::string url) {
  HttpFetchRequest request;
  request.url = std::move(url);
  request.timeout = 5s;
  request.policy = Policy("127.0.0.0/8");
  return request;
}

bool HasHeader(const HttpFetchResponse& r, std::string_view name, std::string_view value) {
  for (const auto& [n, v] : r.headers) {
    if (n == name && v == value) return true;
  }
  return false;
}

TEST(HttpFetchTest, GetReturnsStatusHeadersAndBody) {
  TestServer server([](const ReceivedRequest&) {
    return HttpResponse(200, "OK", {"Content-Type: text/plain; charset=utf-8", "X-Thing: a", "X-THING:  b "}, "hello");
  });
  HttpFetchRequest request = Get(server.Url("/greet?x=1"));
  request.headers = {{"X-Request-Id", "42"}, {"Accept", "text/plain"}};
  auto response = HttpFetch(request);
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "hello");
  EXPECT_EQ(response->content_type, "text/plain; charset=utf-8");
  EXPECT_TRUE(HasHeader(*response, "x-thing", "a"));
  EXPECT_TRUE(HasHeader(*response, "x-thing", "b"));  // repeated, lower-cased, trimmed
  EXPECT_TRUE(HasHeader(*response, "content-length", "5"));
  EXPECT_GE(response->duration_ms, 0);

  auto seen = server.requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].method, "GET");
  EXPECT_EQ(seen[0].target, "/greet?x=1");
  EXPECT_EQ(seen[0].Header("x-request-id"), "42");
  EXPECT_EQ(seen[0].Header("accept"), "text/plain");
  EXPECT_EQ(seen[0].Header("user-agent"), "cairn/0.1");
  EXPECT_FALSE(seen[0].Header("content-type").has_value());
}

TEST(HttpFetchTest, PostBodyIsSentAndEchoed) {
  TestServer server([](const ReceivedRequest& req) {
    return HttpResponse(201, "Created", {"Content-Type: " + req.Header("content-type").value_or("none")}, req.body);
  });
  HttpFetchRequest request = Get(server.Url("/echo"));
  request.method = "POST";
  request.body = R"({"a":1})";
  request.headers = {{"Content-Type", "application/json"}};
  auto response = HttpFetch(request);
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 201);
  EXPECT_EQ(response->body, R"({"a":1})");
  EXPECT_EQ(response->content_type, "application/json");
  auto seen = server.requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].method, "POST");
  EXPECT_EQ(seen[0].Header("content-length"), "7");
  EXPECT_FALSE(seen[0].Header("expect").has_value());
}

TEST(HttpFetchTest, PostWithoutContentTypeSendsNone) {
  TestServer server([](const ReceivedRequest&) { return HttpResponse(204, "No Content", {}, ""); });
  HttpFetchRequest request = Get(server.Url("/"));
  request.method = "post";  // any letter case
  request.body = "a=b";
  auto response = HttpFetch(request);
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 204);
  auto seen = server.requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].body, "a=b");
  EXPECT_FALSE(seen[0].Header("content-type").has_value());  // not curl's form-urlencoded default
}

TEST(HttpFetchTest, PutAndDeleteUseTheirVerbs) {
  TestServer server([](const ReceivedRequest&) { return HttpResponse(200, "OK", {}, "ok"); });
  HttpFetchRequest put = Get(server.Url("/item/1"));
  put.method = "PUT";
  put.body = "new";
  ASSERT_TRUE(HttpFetch(put).ok());
  HttpFetchRequest del = Get(server.Url("/item/1"));
  del.method = "DELETE";
  ASSERT_TRUE(HttpFetch(del).ok());
  auto seen = server.requests();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].method, "PUT");
  EXPECT_EQ(seen[0].body, "new");
  EXPECT_EQ(seen[1].method, "DELETE");
  EXPECT_EQ(seen[1].body, "");
}

TEST(HttpFetchTest, ServerErrorIsASuccessfulFetch) {
  TestServer server([](const ReceivedRequest&) { return HttpResponse(500, "Internal Server Error", {}, "boom"); });
  auto response = HttpFetch(Get(server.Url("/")));
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 500);
  EXPECT_EQ(response->body, "boom");
}

TEST(HttpFetchTest, RedirectsAreReturnedUnlessAskedToFollow) {
  TestServer server([](const ReceivedRequest& req) {
    if (req.target == "/a") return HttpResponse(302, "Found", {"Location: /b"}, "");
    if (req.target == "/loop") return HttpResponse(302, "Found", {"Location: /loop"}, "");
    return HttpResponse(200, "OK", {}, "final");
  });
  auto response = HttpFetch(Get(server.Url("/a")));
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 302);
  EXPECT_TRUE(HasHeader(*response, "location", "/b"));

  HttpFetchRequest follow = Get(server.Url("/a"));
  follow.max_redirects = 1;
  response = HttpFetch(follow);
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "final");
  for (const auto& [name, value] : response->headers) EXPECT_NE(name, "location") << "headers of the final response only";

  HttpFetchRequest loop = Get(server.Url("/loop"));
  loop.max_redirects = 2;
  response = HttpFetch(loop);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(response.status().message().find("redirects"), std::string::npos) << response.status().message();
}

TEST(HttpFetchTest, BodyOverTheCapIsPayloadTooLarge) {
  const std::string big(2 << 20, 'x');
  TestServer server([&big](const ReceivedRequest& req) {
    // With a Content-Length curl refuses up front; without one the write callback must stop it.
    return HttpResponse(200, "OK", {}, big, /*with_content_length=*/req.target == "/sized");
  });
  for (const char* path : {"/sized", "/unsized"}) {
    HttpFetchRequest request = Get(server.Url(path));
    request.max_response_bytes = 1024;
    auto response = HttpFetch(request);
    ASSERT_FALSE(response.ok()) << path;
    EXPECT_EQ(response.status().code(), StatusCode::kPayloadTooLarge) << path << ": " << response.status().ToString();
    EXPECT_EQ(response.status().message(), "response larger than 1024 bytes");
  }
  HttpFetchRequest exact = Get(server.Url("/unsized"));
  exact.max_response_bytes = big.size();
  auto response = HttpFetch(exact);
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->body.size(), big.size());
}

TEST(HttpFetchTest, TruncatedBodyKeepsTheStatus) {
  const std::string big(2 << 20, 'x');
  TestServer server([&big](const ReceivedRequest& req) {
    return HttpResponse(503, "Service Unavailable", {}, big, /*with_content_length=*/req.target == "/sized");
  });
  for (const char* path : {"/sized", "/unsized"}) {
    HttpFetchRequest request = Get(server.Url(path));
    request.max_response_bytes = 1024;
    request.truncate_body = true;
    auto response = HttpFetch(request);
    ASSERT_TRUE(response.ok()) << path << ": " << response.status().ToString();
    EXPECT_EQ(response->status, 503) << path;
    EXPECT_TRUE(response->body_truncated) << path;
    EXPECT_LE(response->body.size(), 1024u) << path;
  }
}

TEST(HttpFetchTest, ServerThatNeverAnswersTimesOut) {
  TestServer server([](const ReceivedRequest&) { return std::nullopt; });
  HttpFetchRequest request = Get(server.Url("/slow"));
  request.timeout = 300ms;
  auto start = std::chrono::steady_clock::now();
  auto response = HttpFetch(request);
  auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(response.status().message().find("timed out after 300 ms"), std::string::npos) << response.status().message();
  EXPECT_NE(response.status().message().find("127.0.0.1"), std::string::npos);
  EXPECT_GE(elapsed, 250ms);
  EXPECT_LT(elapsed, 3s);
}

TEST(HttpFetchTest, ConnectionRefusedNamesTheHost) {
  // A port that was just bound and released: nothing listens there.
  int port = test_support::FreeLoopbackPort();
  ASSERT_NE(port, 0);

  auto response = HttpFetch(Get("http://127.0.0.1:" + std::to_string(port) + "/"));
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(response.status().message().find("127.0.0.1:" + std::to_string(port)), std::string::npos)
      << response.status().message();
}

TEST(HttpFetchTest, UnresolvableHostNamesTheHost) {
  HttpFetchRequest request = Get("http://cairn-test.invalid/");  // .invalid never resolves (RFC 2606)
  request.timeout = 3s;
  auto response = HttpFetch(request);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(response.status().message().find("cairn-test.invalid"), std::string::npos) << response.status().message();
}

TEST(HttpFetchTest, BadRequestsAreInvalidArgument) {
  auto expect_invalid = [](HttpFetchRequest request, std::string_view why) {
    auto response = HttpFetch(request);
    ASSERT_FALSE(response.ok()) << why;
    EXPECT_EQ(response.status().code(), StatusCode::kInvalidArgument) << why << ": " << response.status().ToString();
  };
  HttpFetchRequest r = Get("http://127.0.0.1:1/");
  r.method = "TRACE";
  expect_invalid(r, "TRACE");
  r.method = "";
  expect_invalid(r, "empty method");
  for (const char* url : {"ftp://127.0.0.1/x", "file:///etc/passwd", "gopher://127.0.0.1/", "not a url", "", "127.0.0.1/x"}) {
    expect_invalid(Get(url), url);
  }
  r = Get("http://127.0.0.1:1/");
  r.headers = {{"Bad Name", "x"}};
  expect_invalid(r, "header name with a space");
  r.headers = {{"X-Ok", "a\r\nX-Injected: 1"}};
  expect_invalid(r, "header value with CRLF");
  r.headers = {{"Content-Length", "3"}};
  expect_invalid(r, "Content-Length header");
  r.headers = {};
  r.timeout = 0ms;
  expect_invalid(r, "zero timeout");
  r.timeout = 1s;
  r.max_redirects = -1;
  expect_invalid(r, "negative max_redirects");
}

TEST(HttpFetchTest, CancelAbortsTheTransfer) {
  TestServer server([](const ReceivedRequest&) { return std::nullopt; });
  std::atomic<bool> cancel{false};
  HttpFetchRequest request = Get(server.Url("/slow"));
  request.timeout = 10s;
  std::thread canceller([&cancel] {
    std::this_thread::sleep_for(200ms);
    cancel = true;
  });
  auto start = std::chrono::steady_clock::now();
  auto response = HttpFetch(request, &cancel);
  auto elapsed = std::chrono::steady_clock::now() - start;
  canceller.join();
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(response.status().message().find("cancelled"), std::string::npos) << response.status().message();
  EXPECT_LT(elapsed, 5s);  // the cancel flag is polled every 20 ms
}

TEST(HttpFetchTest, CancelledBeforeStartDoesNotConnect) {
  TestServer server([](const ReceivedRequest&) { return HttpResponse(200, "OK", {}, "ok"); });
  std::atomic<bool> cancel{true};
  auto response = HttpFetch(Get(server.Url("/")), &cancel);
  ASSERT_FALSE(response.ok());
  EXPECT_NE(response.status().message().find("cancelled"), std::string::npos);
  EXPECT_TRUE(server.requests().empty());
}

// ---- HttpConnection::Stream ----

TEST(HttpConnectionTest, StreamHandsOverTheHeadThenTheBody) {
  TestServer server([](const ReceivedRequest&) {
    return HttpResponse(200, "OK", {"Content-Type: text/event-stream"}, "data: a\n\ndata: b\n\n");
  });
  std::vector<std::string> seen;
  HttpStreamHandler handler;
  handler.on_head = [&](const HttpFetchResponse& head) {
    EXPECT_TRUE(head.body.empty());
    seen.push_back("head " + std::to_string(head.status) + " " + head.content_type);
    return true;
  };
  std::string body;
  handler.on_body = [&](std::string_view chunk) {
    if (body.empty()) seen.push_back("body");
    body.append(chunk);
    return true;
  };
  HttpConnection connection;
  auto response = connection.Stream(Get(server.Url("/events")), handler);
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(seen, (std::vector<std::string>{"head 200 text/event-stream", "body"}));
  EXPECT_EQ(body, "data: a\n\ndata: b\n\n");
  EXPECT_EQ(response->status, 200);
  EXPECT_TRUE(response->body.empty()) << "a 2xx body goes to the handler only";
  EXPECT_FALSE(response->stopped);
}

TEST(HttpConnectionTest, StreamCollectsAnErrorBodyUpToTheBound) {
  TestServer server([](const ReceivedRequest&) { return HttpResponse(503, "Service Unavailable", {}, "overloaded, try later"); });
  bool body_handed_over = false;
  int heads = 0;
  HttpStreamHandler handler;
  handler.on_head = [&](const HttpFetchResponse& head) {
    ++heads;
    EXPECT_EQ(head.status, 503);
    return true;
  };
  handler.on_body = [&](std::string_view) {
    body_handed_over = true;
    return true;
  };
  HttpFetchRequest request = Get(server.Url("/"));
  request.max_response_bytes = 10;
  auto response = HttpConnection().Stream(request, handler);
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(heads, 1);
  EXPECT_FALSE(body_handed_over);
  EXPECT_EQ(response->status, 503);
  EXPECT_EQ(response->body, "overloaded");
  EXPECT_TRUE(response->body_truncated);
}

TEST(HttpConnectionTest, AHandlerThatSaysStopEndsTheTransferWithoutAnError) {
  TestServer server([](const ReceivedRequest&) { return HttpResponse(200, "OK", {}, "0123456789"); });
  HttpStreamHandler handler;
  handler.on_head = [](const HttpFetchResponse&) { return false; };
  bool body_seen = false;
  handler.on_body = [&](std::string_view) {
    body_seen = true;
    return true;
  };
  auto response = HttpConnection().Stream(Get(server.Url("/")), handler);
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_TRUE(response->stopped);
  EXPECT_EQ(response->status, 200);
  EXPECT_FALSE(body_seen);
}

TEST(HttpConnectionTest, CancelEndsAStreamThatNeverAnswers) {
  TestServer server([](const ReceivedRequest&) { return std::nullopt; });
  HttpFetchRequest request = Get(server.Url("/quiet"));
  request.timeout = 0ms;  // a stream: no overall limit
  std::atomic<int> polls{0};
  HttpCancel cancel;
  cancel.poll_interval = 5ms;
  cancel.requested = [&polls] { return ++polls > 3; };  // the first poll is before the request
  auto start = std::chrono::steady_clock::now();
  auto response = HttpConnection().Stream(request, HttpStreamHandler{}, cancel);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(response.status().message().find("cancelled"), std::string::npos) << response.status().message();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST(HttpConnectionTest, OneConnectionServesConsecutiveRequests) {
  TestServer server([](const ReceivedRequest& r) { return HttpResponse(200, "OK", {}, r.target); });
  HttpConnection connection;
  for (std::string path : {"/one", "/two"}) {
    auto response = connection.Fetch(Get(server.Url(path)));
    ASSERT_TRUE(response.ok()) << response.status().ToString();
    EXPECT_EQ(response->body, path) << "no option of the previous request is left over";
  }
  HttpFetchRequest patch = Get(server.Url("/three"));
  patch.method = "PATCH";
  patch.body = "{}";
  ASSERT_TRUE(connection.Fetch(patch).ok());
  ASSERT_EQ(server.requests().size(), 3u);
  EXPECT_EQ(server.requests()[2].method, "PATCH");
  EXPECT_EQ(server.requests()[2].body, "{}");
}

TEST(HttpConnectionTest, EnvironmentProxiesNeedAnUnrestrictedPolicy) {
  HttpFetchRequest request = Get("http://127.0.0.1:1/");
  request.environment_proxy = true;
  auto refused = HttpConnection().Fetch(request);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  request.policy = std::make_shared<const OutboundPolicy>(OutboundPolicy::Unrestricted());
  auto allowed = HttpConnection().Fetch(request);  // nothing listens on port 1
  ASSERT_FALSE(allowed.ok());
  EXPECT_EQ(allowed.status().code(), StatusCode::kUnavailable) << allowed.status().ToString();
}

}  // namespace
}  // namespace cairn::net
