#include "server/webhooks/delivery_policy.h"

#include <algorithm>

namespace cairn::server::webhooks {

AttemptVerdict Classify(int http_status) {
  if (http_status >= 200 && http_status < 300) return AttemptVerdict::kDelivered;
  if (http_status == 0 || http_status == 408 || http_status == 429 || http_status >= 500) return AttemptVerdict::kRetry;
  return AttemptVerdict::kPermanent;
}

std::chrono::milliseconds BackoffDelay(const RetryPolicy& policy, int failed_attempts,
                                       std::optional<int64_t> retry_after_seconds, double random01) {
  const int64_t max_ms = std::max<int64_t>(0, policy.max_backoff.count());
  if (retry_after_seconds) {
    int64_t wanted = std::clamp<int64_t>(*retry_after_seconds, 0, max_ms / 1000 + 1);
    return std::chrono::milliseconds(std::min(wanted * 1000, max_ms));
  }
  // Doubling stops at the cap, so the shift never overflows however many attempts are allowed.
  int64_t delay = std::max<int64_t>(0, policy.base_backoff.count());
  for (int i = 1; i < failed_attempts && delay < max_ms; ++i) delay *= 2;
  delay = std::min(delay, max_ms);
  double r = std::clamp(random01, 0.0, 1.0);
  return std::chrono::milliseconds(delay / 2 + static_cast<int64_t>(r * static_cast<double>(delay - delay / 2)));
}

std::optional<int64_t> ParseRetryAfter(std::string_view value) {
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t' || value.back() == '\r' || value.back() == '\n')) {
    value.remove_suffix(1);
  }
  if (value.empty() || value.size() > 9) return std::nullopt;
  int64_t seconds = 0;
  for (char c : value) {
    if (c < '0' || c > '9') return std::nullopt;
    seconds = seconds * 10 + (c - '0');
  }
  return seconds;
}

}  // namespace cairn::server::webhooks
