#include "exec/llm/openai_provider.h"

#include <curl/curl.h>

#include <algorithm>
#include <cstdio>
#include <boost/json/serialize.hpp>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <utility>

#include "base/log.h"
#include "exec/llm/chat_json.h"
#include "exec/llm/stream_assembler.h"

namespace cairn::exec::llm {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr size_t kMaxHeaderBytes = 256 * 1024;
constexpr size_t kMaxErrorBodyBytes = 64 * 1024;  // kept of a non-2xx body, for its message
constexpr milliseconds kPollSlice{20};             // how often cancellation and idleness are checked

void EnsureCurlInit() {
  // curl_global_init is not thread-safe and must run before any other libcurl call. It is
  // reference-counted, so sharing the process with the other libcurl users' own calls is fine.
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct EasyDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct MultiDeleter {
  void operator()(CURLM* m) const { curl_multi_cleanup(m); }
};
struct ListDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

bool IsCancelled(const std::atomic<bool>* cancelled) { return cancelled != nullptr && cancelled->load(); }

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool StartsWithIgnoreCase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() &&
         std::equal(prefix.begin(), prefix.end(), s.begin(), [](char a, char b) { return Lower(a) == Lower(b); });
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

std::string_view ReasonPhrase(long status) {
  switch (status) {
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 413: return "Payload Too Large";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "";
  }
}

// Everything the curl callbacks of one attempt share.
struct Exchange {
  CURL* easy = nullptr;
  bool stream = false;
  StreamAssembler* assembler = nullptr;
  size_t max_body = 0;

  bool body_started = false;
  long http_status = 0;
  bool sse = false;  // a 2xx text/event-stream body, fed to the assembler
  Status feed_error;
  std::string body;  // any other body (bounded)
  bool body_too_large = false;
  size_t header_bytes = 0;
  bool headers_too_large = false;
  std::optional<long> retry_after_seconds;
  Clock::time_point last_activity = Clock::now();
};

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  size_t n = size * count;
  ex->last_activity = Clock::now();
  if (!ex->body_started) {
    ex->body_started = true;
    curl_easy_getinfo(ex->easy, CURLINFO_RESPONSE_CODE, &ex->http_status);
    char* content_type = nullptr;
    curl_easy_getinfo(ex->easy, CURLINFO_CONTENT_TYPE, &content_type);
    // A 2xx answer to a streaming request is read as events unless it says it is JSON: some
    // servers label their streams text/plain or not at all.
    ex->sse = ex->stream && ex->http_status / 100 == 2 &&
              !(content_type != nullptr && StartsWithIgnoreCase(Trim(content_type), "application/json"));
  }
  if (ex->sse) {
    ex->feed_error = ex->assembler->Feed(std::string_view(data, n));
    return ex->feed_error.ok() ? n : 0;  // any count other than n aborts the transfer
  }
  size_t limit = ex->http_status / 100 == 2 ? ex->max_body : kMaxErrorBodyBytes;
  if (n > limit - ex->body.size()) {  // body.size() <= limit always holds
    ex->body_too_large = true;
    ex->body.append(data, limit - ex->body.size());
    return 0;
  }
  ex->body.append(data, n);
  return n;
}

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  size_t n = size * count;
  ex->last_activity = Clock::now();
  std::string_view line(data, n);
  if (line.starts_with("HTTP/")) {  // a new response (after a 100 Continue): keep only the last one
    ex->retry_after_seconds.reset();
    ex->header_bytes = 0;
  }
  ex->header_bytes += n;
  if (ex->header_bytes > kMaxHeaderBytes) {
    ex->headers_too_large = true;
    return 0;
  }
  if (StartsWithIgnoreCase(line, "retry-after:")) {
    std::string_view value = Trim(line.substr(12));
    long seconds = 0;
    bool digits = !value.empty() && value.size() <= 9 &&
                  std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (digits) {
      for (char c : value) seconds = seconds * 10 + (c - '0');
      ex->retry_after_seconds = seconds;
    }
  }
  return n;
}

milliseconds DefaultJitter(milliseconds ceiling) {
  if (ceiling.count() <= 1) return ceiling;
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::uniform_int_distribution<int64_t> dist(ceiling.count() / 2, ceiling.count());
  return milliseconds(dist(rng));
}

void DefaultSleep(milliseconds wait, const std::atomic<bool>* cancelled) {
  auto until = Clock::now() + wait;
  while (!IsCancelled(cancelled)) {
    auto now = Clock::now();
    if (now >= until) return;
    std::this_thread::sleep_for(std::min<Clock::duration>(until - now, kPollSlice));
  }
}

}  // namespace

// The outcome of one HTTP attempt.
struct OpenAiProvider::Attempt {
  Status status;  // ok: `response` holds the reply
  ChatResponse response;
  bool retriable = false;
  bool delivered = false;  // content reached on_delta: never retry
  std::optional<milliseconds> retry_after;
};

struct OpenAiProvider::HandlePool {
  std::mutex mu;
  std::vector<std::pair<std::unique_ptr<CURL, EasyDeleter>, std::unique_ptr<CURLM, MultiDeleter>>> idle;
};

namespace {

constexpr size_t kMaxIdleHandles = 64;

}  // namespace

// A handle pair for one attempt: an idle one of the pool (reset, its connection kept) or new
// ones; given back when `reusable`.
struct OpenAiProvider::HandleLease {
  explicit HandleLease(HandlePool& p) : pool(p) {
    {
      std::lock_guard lock(pool.mu);
      if (!pool.idle.empty()) {
        easy = std::move(pool.idle.back().first);
        multi = std::move(pool.idle.back().second);
        pool.idle.pop_back();
      }
    }
    if (easy) {
      curl_easy_reset(easy.get());
    } else {
      easy.reset(curl_easy_init());
      multi.reset(curl_multi_init());
    }
  }
  ~HandleLease() {
    if (!reusable || !easy || !multi) return;
    std::lock_guard lock(pool.mu);
    if (pool.idle.size() < kMaxIdleHandles) pool.idle.emplace_back(std::move(easy), std::move(multi));
  }
  HandlePool& pool;
  std::unique_ptr<CURL, EasyDeleter> easy;
  std::unique_ptr<CURLM, MultiDeleter> multi;
  bool reusable = false;
};

OpenAiProvider::OpenAiProvider(OpenAiOptions options)
    : options_(std::move(options)), pool_(std::make_shared<HandlePool>()) {
  std::string base = options_.base_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  endpoint_ = base + "/chat/completions";
  if (!options_.jitter) options_.jitter = DefaultJitter;
  if (!options_.sleep) options_.sleep = DefaultSleep;
  if (options_.max_attempts < 1) options_.max_attempts = 1;
}

std::string OpenAiProvider::Describe() const { return options_.name + " (" + options_.base_url + ")"; }

std::string OpenAiProvider::Redact(std::string text) const {
  const std::string& key = options_.api_key;
  if (key.size() < 4) return text;
  for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 3)) text.replace(at, key.size(), "***");
  return text;
}

Result<ChatResponse> OpenAiProvider::Complete(const ChatRequest& request, const CallOptions& options) {
  if (options_.api_key.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos) {
    return Status::InvalidArgument("the API key of " + Describe() + " contains a line break or NUL");
  }
  const std::string body = boost::json::serialize(RequestToJson(request));
  for (int attempt = 1;; ++attempt) {
    if (IsCancelled(options.cancelled)) return Status::Unavailable("cancelled");
    Attempt result = Perform(body, request.model, request.stream, options);
    if (result.status.ok()) {
      result.response.attempts = attempt;
      return std::move(result.response);
    }
    if (result.status.message() == "cancelled") return result.status;
    if (result.delivered) {
      return Status::Unavailable(result.status.message() + " (after part of the reply was delivered; not retried)");
    }
    if (!result.retriable) return result.status;
    if (attempt >= options_.max_attempts) {
      std::string suffix = attempt > 1 ? " (gave up after " + std::to_string(attempt) + " attempts)" : "";
      return Status(result.status.code(), result.status.message() + suffix);
    }
    milliseconds ceiling = std::min(options_.max_backoff, options_.base_backoff * (int64_t{1} << std::min(attempt - 1, 30)));
    milliseconds wait = result.retry_after ? std::min(*result.retry_after, options_.max_backoff) : options_.jitter(ceiling);
    CAIRN_LOG_WARN("LLM call attempt {}/{} failed: {}; retrying in {} ms", attempt, options_.max_attempts,
                   result.status.message(), wait.count());
    options_.sleep(wait, options.cancelled);
  }
}

OpenAiProvider::Attempt OpenAiProvider::Perform(const std::string& body, const std::string& model, bool stream,
                                                const CallOptions& options) const {
  EnsureCurlInit();
  Attempt out;
  HandleLease lease(*pool_);
  auto& easy = lease.easy;
  auto& multi = lease.multi;
  if (!easy || !multi) {
    out.status = Status::Internal("cannot create an HTTP handle");
    return out;
  }
  curl_slist* raw = nullptr;
  raw = curl_slist_append(raw, "Content-Type: application/json");
  raw = curl_slist_append(raw, stream ? "Accept: text/event-stream" : "Accept: application/json");
  raw = curl_slist_append(raw, "Expect:");
  if (!options_.api_key.empty()) raw = curl_slist_append(raw, ("Authorization: Bearer " + options_.api_key).c_str());
  std::unique_ptr<curl_slist, ListDeleter> headers(raw);

  StreamLimits limits;
  limits.max_assembled_bytes = options_.max_response_bytes;
  StreamAssembler assembler(options.on_delta, limits);
  Exchange ex;
  ex.easy = easy.get();
  ex.stream = stream;
  ex.assembler = &assembler;
  ex.max_body = options_.max_response_bytes;
  char error_buffer[CURL_ERROR_SIZE] = {0};

  CURL* h = easy.get();
  curl_easy_setopt(h, CURLOPT_URL, endpoint_.c_str());
#if LIBCURL_VERSION_NUM >= 0x075500  // 7.85: the string form; the bitmask is deprecated
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#else
  curl_easy_setopt(h, CURLOPT_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(h, CURLOPT_USERAGENT, "cairn/0.1");
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options_.connect_timeout.count()));
  if (!stream) curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.request_timeout.count()));
  curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &ex);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &ex);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error_buffer);

  // The multi interface lets this thread wake every kPollSlice to notice cancellation and an idle
  // stream, instead of relying on curl's progress callback (about once a second when idle).
  curl_multi_add_handle(multi.get(), h);
  CURLcode rc = CURLE_OK;
  bool cancelled = false;
  bool idle = false;
  for (;;) {
    int running = 0;
    if (CURLMcode mc = curl_multi_perform(multi.get(), &running); mc != CURLM_OK) {
      rc = CURLE_FAILED_INIT;
      snprintf(error_buffer, sizeof error_buffer, "%s", curl_multi_strerror(mc));
      break;
    }
    if (running == 0) {
      int queued = 0;
      while (CURLMsg* msg = curl_multi_info_read(multi.get(), &queued)) {
        if (msg->msg == CURLMSG_DONE) rc = msg->data.result;
      }
      break;
    }
    if (IsCancelled(options.cancelled)) {
      cancelled = true;
      break;
    }
    if (stream && Clock::now() - ex.last_activity > options_.stream_idle_timeout) {
      idle = true;
      break;
    }
    curl_multi_poll(multi.get(), nullptr, 0, static_cast<int>(kPollSlice.count()), nullptr);
  }
  curl_multi_remove_handle(multi.get(), h);
  // A transfer that ended normally leaves its connection reusable; anything else closes it.
  lease.reusable = !cancelled && !idle && rc == CURLE_OK;
  long http_status = ex.http_status;
  if (http_status == 0) curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &http_status);
  out.delivered = assembler.delivered_content();
  const std::string where = Describe();

  if (cancelled) {
    out.status = Status::Unavailable("cancelled");
    return out;
  }
  if (idle) {
    out.status = Status::Unavailable(where + ": no data for " + std::to_string(options_.stream_idle_timeout.count()) +
                                     " ms while streaming (stream_idle_timeout)");
    out.retriable = true;
    return out;
  }
  if (!ex.feed_error.ok()) {
    out.status = Status(ex.feed_error.code(), where + ": " + Redact(ex.feed_error.message()));
    out.retriable = ex.feed_error.code() == StatusCode::kUnavailable;
    return out;
  }
  if (ex.headers_too_large) {
    out.status = Status::Internal(where + ": response headers larger than " + std::to_string(kMaxHeaderBytes) + " bytes");
    return out;
  }
  if (http_status / 100 == 2 && ex.body_too_large) {
    out.status = Status::Internal(where + ": reply larger than " + std::to_string(options_.max_response_bytes) + " bytes");
    return out;
  }
  if (http_status >= 300) {
    std::string text = ErrorBodyText(Redact(std::string(ex.body)));  // redact before cutting: no key prefix survives
    std::string reason(ReasonPhrase(http_status));
    std::string head = where + " answered " + std::to_string(http_status) + (reason.empty() ? "" : " " + reason) +
                       (text.empty() ? "" : ": " + text);
    const std::string& env = options_.api_key_env;
    if (http_status == 401 || http_status == 403) {
      std::string hint = options_.api_key.empty()
                             ? (env.empty() ? " — no API key is configured for it" : " — no API key is set: set " + env)
                             : (env.empty() ? " — check the API key" : " — check the API key (" + env + ")");
      if (http_status == 403) hint += " and its access to model " + model;
      out.status = Status::FailedPrecondition(head + hint);
    } else if (http_status == 404) {
      out.status = Status::InvalidArgument(head + " — check the model name (" + model + ") and the base URL (requests go to " +
                                           endpoint_ + ")");
    } else if (http_status == 408 || http_status == 429 || http_status >= 500) {
      out.status = Status::Unavailable(head);
      out.retriable = true;
      if (ex.retry_after_seconds) out.retry_after = milliseconds(*ex.retry_after_seconds * 1000);
    } else if (http_status < 400) {
      char* location = nullptr;
      curl_easy_getinfo(h, CURLINFO_REDIRECT_URL, &location);
      out.status = Status::InvalidArgument(head + " — check the base URL" +
                                           (location != nullptr ? std::string(" (it redirects to ") + location + ")" : ""));
    } else {
      out.status = Status::InvalidArgument(head + " — check the model name (" + model + ") and the request");
    }
    return out;
  }
  if (rc != CURLE_OK) {
    std::string detail = error_buffer[0] != '\0' ? std::string(error_buffer) : std::string(curl_easy_strerror(rc));
    out.retriable = true;
    switch (rc) {
      case CURLE_OPERATION_TIMEDOUT:
        out.status = Status::Unavailable(where + ": timed out (" + detail + ")");
        break;
      case CURLE_COULDNT_RESOLVE_HOST:
      case CURLE_COULDNT_CONNECT:
        out.status = Status::Unavailable(where + ": cannot connect: " + detail +
                                         " — check the base URL and that the server is running");
        break;
      case CURLE_URL_MALFORMAT:
      case CURLE_UNSUPPORTED_PROTOCOL:
        out.status = Status::InvalidArgument(where + ": invalid base URL: " + detail);
        out.retriable = false;
        break;
      default:
        out.status = Status::Unavailable(where + ": request failed: " + detail);
    }
    return out;
  }
  if (ex.sse) {
    Result<ChatResponse> reply = assembler.Finish();
    if (!reply.ok()) {
      out.status = Status(reply.status().code(), where + ": " + Redact(reply.status().message()));
      out.retriable = reply.status().code() == StatusCode::kUnavailable;
      return out;
    }
    out.response = std::move(reply).value();
    return out;
  }
  Result<ChatResponse> reply = ParseCompletion(ex.body);
  if (!reply.ok()) {
    out.status = Status(reply.status().code(), where + ": " + Redact(reply.status().message()));
    out.retriable = reply.status().code() == StatusCode::kUnavailable;
    return out;
  }
  out.response = std::move(reply).value();
  if (stream && options.on_delta && out.response.message.has_content && !out.response.message.content.empty()) {
    options.on_delta(out.response.message.content);  // a server that ignored stream: true
  }
  return out;
}

}  // namespace cairn::exec::llm
