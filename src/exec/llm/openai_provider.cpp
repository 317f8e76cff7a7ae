#include "exec/llm/openai_provider.h"

#include <algorithm>
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
#include "net/http_fetch.h"

namespace cairn::exec::llm {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr size_t kMaxErrorBodyBytes = 64 * 1024;  // kept of a non-2xx body, for its message
constexpr milliseconds kPollSlice{20};             // how often cancellation and idleness are checked

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

// The Retry-After header in whole seconds; nullopt for none or an HTTP date.
std::optional<long> RetryAfterSeconds(const std::vector<std::pair<std::string, std::string>>& headers) {
  std::string value = net::HeaderValue(headers, "retry-after");
  bool digits = !value.empty() && value.size() <= 9 &&
                std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits) return std::nullopt;
  long seconds = 0;
  for (char c : value) seconds = seconds * 10 + (c - '0');
  return seconds;
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

OpenAiProvider::OpenAiProvider(OpenAiOptions options)
    : options_(std::move(options)) {
  std::string base = options_.base_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  endpoint_ = std::make_shared<net::OperatorEndpoint>(base + "/chat/completions", options_.api_key);
  if (!options_.jitter) options_.jitter = DefaultJitter;
  if (!options_.sleep) options_.sleep = DefaultSleep;
  if (options_.max_attempts < 1) options_.max_attempts = 1;
}

std::string OpenAiProvider::Describe() const { return options_.name + " (" + options_.base_url + ")"; }

Result<ChatResponse> OpenAiProvider::Complete(const ChatRequest& request, const CallOptions& options) {
  const std::string& key = options.api_key ? *options.api_key : options_.api_key;
  if (key.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos) {
    return Status::InvalidArgument("the API key of " + Describe() +
                                   (options.api_key ? " (" + options.api_key_source + ")" : std::string()) +
                                   " contains a line break or NUL");
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
  Attempt out;
  net::HttpFetchRequest request = endpoint_->NewRequest(body, options.api_key ? &*options.api_key : nullptr);
  // The endpoint's key, and this call's when it brings one, are masked in every message.
  SecretRedactor redact = endpoint_->redactor();
  if (options.api_key && options.api_key->size() >= 4) redact.Add(*options.api_key, "***");
  request.headers.emplace_back("Accept", stream ? "text/event-stream" : "application/json");
  request.connect_timeout = options_.connect_timeout;
  request.timeout = stream ? milliseconds(0) : options_.request_timeout;  // a stream is bounded by idleness instead
  request.max_response_bytes = kMaxErrorBodyBytes;  // what is kept of a non-2xx body

  StreamLimits limits;
  limits.max_assembled_bytes = options_.max_response_bytes;
  StreamAssembler assembler(options.on_delta, limits);
  bool sse = false;  // a 2xx text/event-stream body, fed to the assembler
  Status feed_error;
  std::string reply_body;  // any other 2xx body (bounded)
  bool body_too_large = false;
  Clock::time_point last_activity = Clock::now();
  net::HttpStreamHandler handler;
  handler.on_head = [&](const net::HttpFetchResponse& head) {
    last_activity = Clock::now();
    // A 2xx answer to a streaming request is read as events unless it says it is JSON: some
    // servers label their streams text/plain or not at all.
    sse = stream && head.status / 100 == 2 && !StartsWithIgnoreCase(Trim(head.content_type), "application/json");
    return true;
  };
  handler.on_body = [&](std::string_view chunk) {
    last_activity = Clock::now();
    if (sse) {
      feed_error = assembler.Feed(chunk);
      return feed_error.ok();
    }
    if (chunk.size() > options_.max_response_bytes - reply_body.size()) {  // reply_body.size() <= max always holds
      body_too_large = true;
      return false;
    }
    reply_body.append(chunk);
    return true;
  };
  // Cancellation and idleness are both checked every kPollSlice; `idle` says which ended it.
  bool idle = false;
  net::HttpCancel cancel;
  cancel.poll_interval = kPollSlice;
  cancel.requested = [&] {
    if (IsCancelled(options.cancelled)) return true;
    idle = stream && Clock::now() - last_activity > options_.stream_idle_timeout;
    return idle;
  };

  Result<net::HttpFetchResponse> fetched = [&] {
    net::OperatorEndpoint::Lease lease(*endpoint_);
    return lease.connection().Stream(request, handler, cancel);
  }();
  out.delivered = assembler.delivered_content();
  const std::string where = Describe();

  if (!fetched.ok() && IsCancelled(options.cancelled)) {
    out.status = Status::Unavailable("cancelled");
    return out;
  }
  if (!fetched.ok() && idle) {
    out.status = Status::Unavailable(where + ": no data for " + std::to_string(options_.stream_idle_timeout.count()) +
                                     " ms while streaming (stream_idle_timeout)");
    out.retriable = true;
    return out;
  }
  if (!feed_error.ok()) {
    out.status = Status(feed_error.code(), where + ": " + redact(feed_error.message()));
    out.retriable = feed_error.code() == StatusCode::kUnavailable;
    return out;
  }
  if (body_too_large) {
    out.status = Status::Internal(where + ": reply larger than " + std::to_string(options_.max_response_bytes) + " bytes");
    return out;
  }
  if (!fetched.ok()) {
    const Status& failure = fetched.status();
    out.retriable = true;
    switch (failure.code()) {
      case StatusCode::kInvalidArgument:  // a URL curl cannot use
        out.status = Status::InvalidArgument(where + ": invalid base URL: " + failure.message());
        out.retriable = false;
        break;
      case StatusCode::kPayloadTooLarge:  // the headers
        out.status = Status::Internal(where + ": " + failure.message());
        out.retriable = false;
        break;
      default:
        if (failure.message().starts_with("cannot ")) {  // cannot resolve host / cannot connect to
          out.status = Status::Unavailable(where + ": cannot connect: " + failure.message() +
                                           " — check the base URL and that the server is running");
        } else {
          out.status = Status::Unavailable(where + ": " + failure.message());
        }
    }
    return out;
  }
  const long http_status = fetched->status;
  const std::string& error_body = fetched->body;
  if (http_status >= 300) {
    std::string text = ErrorBodyText(redact(error_body));  // redact before cutting: no key prefix survives
    std::string reason(ReasonPhrase(http_status));
    std::string head = where + " answered " + std::to_string(http_status) + (reason.empty() ? "" : " " + reason) +
                       (text.empty() ? "" : ": " + text);
    const std::string& env = options.api_key ? options.api_key_source : options_.api_key_env;
    if (http_status == 401 || http_status == 403) {
      std::string hint = (options.api_key ? *options.api_key : options_.api_key).empty()
                             ? (env.empty() ? " — no API key is configured for it" : " — no API key is set: set " + env)
                             : (env.empty() ? " — check the API key" : " — check the API key (" + env + ")");
      if (http_status == 403) hint += " and its access to model " + model;
      out.status = Status::FailedPrecondition(head + hint);
    } else if (http_status == 404) {
      out.status = Status::InvalidArgument(head + " — check the model name (" + model + ") and the base URL (requests go to " +
                                           endpoint_->url() + ")");
    } else if (http_status == 408 || http_status == 429 || http_status >= 500) {
      out.status = Status::Unavailable(head);
      out.retriable = true;
      if (auto seconds = RetryAfterSeconds(fetched->headers)) out.retry_after = milliseconds(*seconds * 1000);
    } else if (http_status < 400) {
      std::string location = net::HeaderValue(fetched->headers, "location");
      out.status = Status::InvalidArgument(head + " — check the base URL" +
                                           (location.empty() ? "" : " (it redirects to " + location + ")"));
    } else {
      out.status = Status::InvalidArgument(head + " — check the model name (" + model + ") and the request");
    }
    return out;
  }
  if (sse) {
    Result<ChatResponse> reply = assembler.Finish();
    if (!reply.ok()) {
      out.status = Status(reply.status().code(), where + ": " + redact(reply.status().message()));
      out.retriable = reply.status().code() == StatusCode::kUnavailable;
      return out;
    }
    out.response = std::move(reply).value();
    return out;
  }
  Result<ChatResponse> reply = ParseCompletion(reply_body);
  if (!reply.ok()) {
    out.status = Status(reply.status().code(), where + ": " + redact(reply.status().message()));
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
