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

}  // namespace cairn::cli
