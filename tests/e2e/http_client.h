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
// for malformed requests and oversized headers that curl would not send.
#pragma once

#include <boost/json/value.hpp>
#include <chrono>
#include <optional>
#include <string>
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

// Sends `bytes` on a new connection to host:port, then reads one response (headers and a
// Content-Length body, or everything until the server closes) within `timeout`.
Response RawExchange(int port, const std::string& bytes,
                     std::chrono::milliseconds timeout = std::chrono::seconds(30),
                     const std::string& host = "127.0.0.1");

}  // namespace cairn::e2e
