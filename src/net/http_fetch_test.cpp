#include "net/http_fetch.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <functional>
#include <mutex>
#include <optional>
#include <thread>

namespace cairn::net {
namespace {

using namespace std::chrono_literals;

struct ReceivedRequest {
  std::string method;
  std::string target;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;

  std::optional<std::string> Header(std::string_view name) const {
    for (const auto& [n, v] : headers) {
      if (n == name) return v;
    }
    return std::nullopt;
  }
};

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A tiny HTTP/1.1 server on 127.0.0.1: one connection at a time, one request per connection,
// canned answers from `handler`. A handler returning nullopt never answers: the connection stays
// open until the client gives up or the server is destroyed.
class TestServer {
 public:
  using Handler = std::function<std::optional<std::string>(const ReceivedRequest&)>;

  explicit TestServer(Handler handler) : handler_(std::move(handler)) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    EXPECT_EQ(bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(listen(listen_fd_, 16), 0);
    socklen_t len = sizeof addr;
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Run(); });
  }
  ~TestServer() {
    stop_ = true;
    thread_.join();
    close(listen_fd_);
  }

  std::string Url(std::string_view path) const { return "http://127.0.0.1:" + std::to_string(port_) + std::string(path); }
  std::vector<ReceivedRequest> requests() const {
    std::lock_guard lock(mu_);
    return requests_;
  }

 private:
  // Waits up to 20 ms for `fd` to be readable, so that loops can notice stop_.
  static bool Readable(int fd) {
    pollfd p{fd, POLLIN, 0};
    return poll(&p, 1, 20) > 0;
  }

  void Run() {
    while (!stop_) {
      if (!Readable(listen_fd_)) continue;
      int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      Serve(fd);
      close(fd);
    }
  }

  bool ReadRequest(int fd, ReceivedRequest* req) {
    std::string data;
    size_t head_end = std::string::npos;
    size_t content_length = 0;
    while (!stop_) {
      if (head_end == std::string::npos) {
        head_end = data.find("\r\n\r\n");
        if (head_end != std::string::npos) {
          std::string_view head(data.data(), head_end);
          size_t eol = head.find("\r\n");
          std::string_view line = head.substr(0, eol);
          size_t sp1 = line.find(' ');
          size_t sp2 = line.find(' ', sp1 + 1);
          req->method = std::string(line.substr(0, sp1));
          req->target = std::string(line.substr(sp1 + 1, sp2 - sp1 - 1));
          while (eol != std::string_view::npos) {
            size_t start = eol + 2;
            eol = head.find("\r\n", start);
            std::string_view h = head.substr(start, eol == std::string_view::npos ? std::string_view::npos : eol - start);
            size_t colon = h.find(':');
            std::string value(h.substr(colon + 1));
            while (!value.empty() && value.front() == ' ') value.erase(0, 1);
            req->headers.emplace_back(Lower(std::string(h.substr(0, colon))), value);
          }
          if (auto cl = req->Header("content-length")) content_length = std::stoul(*cl);
        }
      }
      if (head_end != std::string::npos && data.size() >= head_end + 4 + content_length) {
        req->body = data.substr(head_end + 4, content_length);
        return true;
      }
      if (!Readable(fd)) continue;
      char buf[4096];
      ssize_t n = recv(fd, buf, sizeof buf, 0);
      if (n <= 0) return false;
      data.append(buf, static_cast<size_t>(n));
    }
    return false;
  }

  void Serve(int fd) {
    ReceivedRequest req;
    if (!ReadRequest(fd, &req)) return;
    {
      std::lock_guard lock(mu_);
      requests_.push_back(req);
    }
    std::optional<std::string> response = handler_(req);
    if (!response) {
      // Never answer; return once the client hangs up or the test ends.
      char buf[256];
      while (!stop_) {
        if (Readable(fd) && recv(fd, buf, sizeof buf, 0) <= 0) return;
      }
      return;
    }
    size_t sent = 0;
    while (sent < response->size()) {
      // MSG_NOSIGNAL: a client that aborts mid-body must not kill the test with SIGPIPE.
      ssize_t n = send(fd, response->data() + sent, response->size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return;
      sent += static_cast<size_t>(n);
    }
  }

  Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  mutable std::mutex mu_;
  std::vector<ReceivedRequest> requests_;
};

std::string Response(int status, std::string_view reason, const std::vector<std::string>& headers, std::string_view body,
                     bool with_content_length = true) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) + "\r\n";
  for (const std::string& h : headers) out += h + "\r\n";
  if (with_content_length) out += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  out += "Connection: close\r\n\r\n";
  out += body;
  return out;
}

HttpFetchRequest Get(std::string url) {
  HttpFetchRequest request;
  request.url = std::move(url);
  request.timeout = 5s;
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
    return Response(200, "OK", {"Content-Type: text/plain; charset=utf-8", "X-Thing: a", "X-THING:  b "}, "hello");
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
    return Response(201, "Created", {"Content-Type: " + req.Header("content-type").value_or("none")}, req.body);
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
  TestServer server([](const ReceivedRequest&) { return Response(204, "No Content", {}, ""); });
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
  TestServer server([](const ReceivedRequest&) { return Response(200, "OK", {}, "ok"); });
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
  TestServer server([](const ReceivedRequest&) { return Response(500, "Internal Server Error", {}, "boom"); });
  auto response = HttpFetch(Get(server.Url("/")));
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 500);
  EXPECT_EQ(response->body, "boom");
}

TEST(HttpFetchTest, RedirectsAreReturnedUnlessAskedToFollow) {
  TestServer server([](const ReceivedRequest& req) {
    if (req.target == "/a") return Response(302, "Found", {"Location: /b"}, "");
    if (req.target == "/loop") return Response(302, "Found", {"Location: /loop"}, "");
    return Response(200, "OK", {}, "final");
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
    return Response(200, "OK", {}, big, /*with_content_length=*/req.target == "/sized");
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
    return Response(503, "Service Unavailable", {}, big, /*with_content_length=*/req.target == "/sized");
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
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  int port = ntohs(addr.sin_port);
  close(fd);

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
  r.method = "PATCH";
  expect_invalid(r, "PATCH");
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
  EXPECT_LT(elapsed, 5s);  // the progress callback runs at least about once a second
}

TEST(HttpFetchTest, CancelledBeforeStartDoesNotConnect) {
  TestServer server([](const ReceivedRequest&) { return Response(200, "OK", {}, "ok"); });
  std::atomic<bool> cancel{true};
  auto response = HttpFetch(Get(server.Url("/")), &cancel);
  ASSERT_FALSE(response.ok());
  EXPECT_NE(response.status().message().find("cancelled"), std::string::npos);
  EXPECT_TRUE(server.requests().empty());
}

}  // namespace
}  // namespace cairn::net
