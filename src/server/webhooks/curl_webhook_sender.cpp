#include "server/webhooks/curl_webhook_sender.h"

#include <curl/curl.h>

#include <memory>
#include <mutex>
#include <string_view>

#include "server/webhooks/delivery_policy.h"

namespace cairn::server::webhooks {
namespace {

struct Exchange {
  size_t max_body = 0;
  size_t body_bytes = 0;
  bool body_truncated = false;
  std::optional<int64_t> retry_after;
  const std::atomic<bool>* cancel = nullptr;
};

size_t OnBody(char* /*data*/, size_t size, size_t count, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  size_t n = size * count;
  ex->body_bytes += n;
  if (ex->body_bytes > ex->max_body) {
    ex->body_truncated = true;
    return 0;  // aborts the transfer; the status line has been read already
  }
  return n;
}

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  std::string_view line(data, size * count);
  constexpr std::string_view kName = "retry-after:";
  if (line.size() > kName.size()) {
    bool match = true;
    for (size_t i = 0; i < kName.size() && match; ++i) {
      char c = line[i];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      match = c == kName[i];
    }
    if (match) ex->retry_after = ParseRetryAfter(line.substr(kName.size()));
  }
  return size * count;
}

int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* ex = static_cast<Exchange*>(user);
  return ex->cancel && ex->cancel->load() ? 1 : 0;  // non-zero aborts
}

struct EasyDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct ListDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

}  // namespace

CurlWebhookSender::CurlWebhookSender(size_t max_response_bytes) : max_response_bytes_(max_response_bytes) {
  // curl_global_init is not thread-safe and must run once before any handle exists.
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

WebhookResponse CurlWebhookSender::Send(const WebhookRequest& request, const std::atomic<bool>* cancel) {
  WebhookResponse response;
  std::unique_ptr<CURL, EasyDeleter> curl(curl_easy_init());
  if (!curl) {
    response.error = "cannot create an HTTP handle";
    return response;
  }
  curl_slist* raw_headers = nullptr;
  for (const auto& [name, value] : request.headers) {
    std::string line = name + ": " + value;
    raw_headers = curl_slist_append(raw_headers, line.c_str());
  }
  raw_headers = curl_slist_append(raw_headers, "Expect:");  // no 100-continue round trip
  std::unique_ptr<curl_slist, ListDeleter> headers(raw_headers);
  Exchange ex;
  ex.max_body = max_response_bytes_;
  ex.cancel = cancel;
  long timeout_ms = static_cast<long>(std::max<int64_t>(1, request.timeout.count()));
  CURL* h = curl.get();
  curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_POST, 1L);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body.data());
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(h, CURLOPT_USERAGENT, "cairn-webhooks/0.1");
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &ex);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &ex);
  curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, OnProgress);
  curl_easy_setopt(h, CURLOPT_XFERINFODATA, &ex);
  char error_buffer[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error_buffer);

  CURLcode rc = curl_easy_perform(h);
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  response.retry_after_seconds = ex.retry_after;
  // A body over the limit aborts the read, but the status line already decided the outcome.
  if (rc == CURLE_OK || (rc == CURLE_WRITE_ERROR && ex.body_truncated && status > 0)) {
    response.status = static_cast<int>(status);
    if (status < 200 || status >= 300) response.error = "HTTP " + std::to_string(status);
    return response;
  }
  if (rc == CURLE_ABORTED_BY_CALLBACK) {
    response.error = "cancelled";
  } else {
    response.error = error_buffer[0] != '\0' ? std::string(error_buffer) : std::string(curl_easy_strerror(rc));
  }
  return response;
}

}  // namespace cairn::server::webhooks
