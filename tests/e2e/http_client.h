// HttpClient: a small blocking HTTP/1.1 client for end-to-end tests.
//
//   HttpClient client(server.port());
//   Response r = client.Post("/breadcrumbs", R"({"title":"t"})", {{"X-Cairn-Actor", "me"}});
//   r.status;                 // 201
//   r.Header("etag");         // case-insensitive; std::nullopt if absent
//   r.Json();                 // the body parsed with Boost.JSON (null if it is not JSON)
//
// Requests go through libcurl (one easy handle per client, so one client per thread). A body is
// sent byte for byte, with `Content-Type: application/json` unless the request sets its own
// Content-Type header or sets `content_type` to std::nullopt (then no Content-Type at all).
// curl's own `Expect: 100-continue` is suppressed.
//
// RawExchange() writes arbitrary bytes on a fresh TCP connection and parses whatever comes back,
// for malformed requests and oversized headers that curl would not send. RawConnection keeps the
// connection: several requests and responses on it (keep-alive, pipelining, HEAD then GET), and
// whether the server closed it.
#pragma once

#include <boost/json/value.hpp>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cairn::e2e {

using Headers = std::vector<std::pair<std::string, std::string>>;

struct Response {
  long status = 0;    // 0: no response (transport_error says why)
  Headers headers;    // in order received, names as sent by the server
  std::string body;
  std::string transport_error;
  bool connection_closed = false;  // raw mode: the server closed the connection

  // The first header named `name` (case-insensitive).
  std::optional<std::string> Header(std::string_view name) const;
  // The body as JSON; a null value if it does not parse (ParseError() says why).
  boost::json::value Json() const;
  std::string ParseError() const;
  // A one-line description for assertion messages: "HTTP 422 {...body...}".
  std::string Describe() const;
};

struct Request {
  std::string method = "GET";
  std::string target = "/";  // path and query, already encoded
  Headers headers;
  std::optional<std::string> body;
  std::optional<std::string> content_type = std::string("application/json");
};

class HttpClient {
 public:
  explicit HttpClient(int port, std::string host = "127.0.0.1");
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  Response Send(const Request& request);

  Response Get(const std::string& target, const Headers& headers = {});
  Response Delete(const std::string& target, const Headers& headers = {});
  Response Post(const std::string& target, const std::string& body, const Headers& headers = {});
  Response Patch(const std::string& target, const std::string& body, const Headers& headers = {});

  int port() const { return port_; }
  void set_timeout(std::chrono::milliseconds timeout) { timeout_ = timeout; }

 private:
  std::string host_;
  int port_;
  void* curl_ = nullptr;  // CURL*
  std::chrono::milliseconds timeout_{30000};
};

// Percent-encodes `text` for a query string value.
std::string UrlEncode(std::string_view text);

// One plain TCP connection to the server, driven byte by byte:
//
//   RawConnection c;
//   ASSERT_TRUE(c.Connect(port)) << c.error();
//   c.Send("HEAD /health HTTP/1.1\r\nHost: x\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n");
//   Response head = c.ReadResponse(/*head_only=*/true);      // no body read after it
//   Response get = c.ReadResponse();                         // must start right after the head
//   EXPECT_TRUE(c.WaitClosed(5s));                           // the server closed (EOF or reset)
//
// Reads keep what follows a response for the next one, so bytes that should not be there (a body
// after the head of a HEAD answer) make the next response unparseable. Not thread-safe.
class RawConnection {
 public:
  RawConnection() = default;
  ~RawConnection();
  RawConnection(RawConnection&& other) noexcept;
  RawConnection& operator=(RawConnection&& other) noexcept;

  // False (with error()) if the connection could not be made.
  bool Connect(int port, const std::string& host = "127.0.0.1");
  // Writes all of `bytes` within `timeout`; false if the server closed or the time ran out
  // (what it answered may still be read).
  bool Send(std::string_view bytes, std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Reads the next response: its head, then a Content-Length body; without Content-Length,
  // everything until the server closes. `head_only`: no body is read (an answer to HEAD, or the
  // head of an event stream that stays open); nor for a 1xx/204/304. status 0 (transport_error
  // says why) when no complete head arrived within `timeout`.
  Response ReadResponse(bool head_only = false, std::chrono::milliseconds timeout = std::chrono::seconds(30));
  // Waits until the server closes the connection (EOF or reset); false if it is still open after
  // `timeout`. Anything the server sends meanwhile is kept in pending().
  bool WaitClosed(std::chrono::milliseconds timeout);
  // Bytes received and not part of a response read so far.
  const std::string& pending() const { return buffer_; }
  bool closed() const { return closed_; }
  const std::string& error() const { return error_; }
  void Close();

 private:
  // Receives once (within `deadline`) into buffer_; false on timeout, EOF or error (closed_ set
  // for the last two).
  bool Receive(std::chrono::steady_clock::time_point deadline);

  int fd_ = -1;
  std::string buffer_;
  bool closed_ = false;
  std::string error_;
};

// Sends `bytes` on a new connection to host:port, then reads one response (headers and a
// Content-Length body, or everything until the server closes) within `timeout`.
Response RawExchange(int port, const std::string& bytes,
                     std::chrono::milliseconds timeout = std::chrono::seconds(30),
                     const std::string& host = "127.0.0.1");

}  // namespace cairn::e2e
