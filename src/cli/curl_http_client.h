// CurlHttpClient and CurlStreamClient: the CLI's seams (http_client.h) over cairn's one libcurl
// client, net::HttpConnection (net/http_fetch.h).
//
// The server is the user's: any address may be reached, and the environment's proxies are used
// except for loopback (a local `cairn serve`). Redirects are not followed (a 201's Location is
// information, not a redirect).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "cli/http_client.h"
#include "net/http_fetch.h"

namespace cairn::cli {

struct CurlOptions {
  int64_t connect_timeout_ms = 5000;
  int64_t total_timeout_ms = 30000;            // per request, 0 = none
  size_t max_reply_bytes = 256 * 1024 * 1024;  // larger replies are refused, not buffered
  std::string user_agent = "cairn-cli";
};

// HttpClient over one net::HttpConnection, reused for every request of a command, so that
// `cairn list --all` pages over one kept-alive connection. Sends Accept: application/json (and
// Content-Type: application/json with a body) besides the request's headers. Errors: those of
// HttpClient::Send (a request that cannot be sent at all, a bad URL or header, is kUnavailable
// too, with the reason). Not thread-safe (a command is single-threaded).
class CurlHttpClient final : public HttpClient {
 public:
  explicit CurlHttpClient(CurlOptions options = {});

  Result<HttpReply> Send(const HttpRequest& request) override;

 private:
  CurlOptions options_;
  net::HttpConnection connection_;
};

// StreamingHttpClient over net::HttpConnection::Stream: a stop request (StopSignal::fd()) wakes
// the wait for data at once. No total timeout and no low-speed limit (an event stream may be
// quiet for long); the connect timeout applies, and TCP keep-alive is on. Sends Accept:
// text/event-stream and Cache-Control: no-cache besides the request's headers.
class CurlStreamClient final : public StreamingHttpClient {
 public:
  explicit CurlStreamClient(CurlOptions options = {});

  Result<HttpReply> Stream(const HttpRequest& request, const StreamCallbacks& callbacks, StopSignal* stop) override;

  // The body of a non-2xx reply is kept up to this size (the rest is dropped).
  static constexpr size_t kMaxErrorBodyBytes = 1024 * 1024;

 private:
  CurlOptions options_;
  net::HttpConnection connection_;
};

}  // namespace cairn::cli
