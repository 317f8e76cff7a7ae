// CurlHttpClient: HttpClient over one libcurl easy handle.
//
// The handle is reused for every request of a command, so `cairn list --all` pages over one
// kept-alive connection. Not thread-safe (a command is single-threaded).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "cli/http_client.h"

namespace cairn::cli {

struct CurlOptions {
  int64_t connect_timeout_ms = 5000;
  int64_t total_timeout_ms = 30000;            // per request, 0 = none
  size_t max_reply_bytes = 256 * 1024 * 1024;  // larger replies are refused, not buffered
  std::string user_agent = "cairn-cli";
};

class CurlHttpClient final : public HttpClient {
 public:
  explicit CurlHttpClient(CurlOptions options = {});
  ~CurlHttpClient() override;
  CurlHttpClient(const CurlHttpClient&) = delete;
  CurlHttpClient& operator=(const CurlHttpClient&) = delete;

  Result<HttpReply> Send(const HttpRequest& request) override;

 private:
  CurlOptions options_;
  void* curl_ = nullptr;  // CURL*; void* keeps <curl/curl.h> out of this header
};

// CurlStreamClient: StreamingHttpClient over libcurl's multi interface, so that a stop request
// (StopSignal::fd()) wakes the wait for data at once. No total timeout and no low-speed limit
// (an event stream may be quiet for long); the connect timeout applies, and TCP keep-alive is on.
// Sends Accept: text/event-stream and Cache-Control: no-cache besides the request's headers.
class CurlStreamClient final : public StreamingHttpClient {
 public:
  explicit CurlStreamClient(CurlOptions options = {});

  Result<HttpReply> Stream(const HttpRequest& request, const StreamCallbacks& callbacks, StopSignal* stop) override;

  // The body of a non-2xx reply is kept up to this size (the rest is dropped).
  static constexpr size_t kMaxErrorBodyBytes = 1024 * 1024;

 private:
  CurlOptions options_;
};

}  // namespace cairn::cli
