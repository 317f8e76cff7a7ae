// The retry policy of webhook deliveries: which outcomes are retried and how long to wait.
// Pure functions (randomness is passed in), so the schedule is unit-tested exactly.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

namespace cairn::server::webhooks {

struct RetryPolicy {
  int max_attempts = 6;                          // attempts per event before dead-lettering (>= 1)
  std::chrono::milliseconds base_backoff{1000};  // the wait after the first failed attempt (before jitter)
  std::chrono::milliseconds max_backoff{300000};  // no wait is longer (Retry-After included)
};

enum class AttemptVerdict {
  kDelivered,  // 2xx
  kRetry,      // no response (connection error, timeout), 408, 429 or 5xx
  kPermanent,  // any other status (1xx, 3xx, other 4xx): retrying would not help
};

// `http_status` 0 means there was no HTTP response.
AttemptVerdict Classify(int http_status);

// The wait before the next attempt after `failed_attempts` (>= 1) failures. Without Retry-After:
// d = min(base * 2^(failed_attempts-1), max), then "equal jitter": d/2 + random01 * d/2, with
// `random01` in [0, 1]. With Retry-After (seconds) the server's wish wins, capped at max_backoff.
std::chrono::milliseconds BackoffDelay(const RetryPolicy& policy, int failed_attempts,
                                       std::optional<int64_t> retry_after_seconds, double random01);

// A Retry-After value in delta-seconds ("120"); nullopt for anything else (HTTP dates are not
// honoured; the backoff applies instead).
std::optional<int64_t> ParseRetryAfter(std::string_view value);

}  // namespace cairn::server::webhooks
