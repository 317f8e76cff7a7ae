#include "auth/rate_limiter.h"

#include <algorithm>
#include <cmath>

namespace cairn::auth {

RateLimiter::RateLimiter(int64_t per_minute, int64_t burst, const Clock& clock, size_t max_keys)
    : per_minute_(per_minute), burst_(static_cast<double>(std::max<int64_t>(burst, 1))), clock_(clock), max_keys_(max_keys) {}

double RateLimiter::Refilled(const Bucket& bucket, int64_t now) const {
  double elapsed = static_cast<double>(std::max<int64_t>(now - bucket.updated_micros, 0)) / 1e6;
  return std::min(burst_, bucket.tokens + elapsed * static_cast<double>(per_minute_) / 60.0);
}

std::optional<int64_t> RateLimiter::Take(const std::string& key) {
  if (!enabled()) return std::nullopt;
  int64_t now = clock_.NowMicros();
  std::lock_guard lock(mu_);
  auto found = buckets_.find(key);
  if (found == buckets_.end()) {
    if (buckets_.size() >= max_keys_) {
      std::erase_if(buckets_, [&](const auto& entry) { return Refilled(entry.second, now) >= burst_; });
    }
    found = buckets_.emplace(key, Bucket{burst_, now}).first;
  }
  Bucket& bucket = found->second;
  bucket.tokens = Refilled(bucket, now);
  bucket.updated_micros = now;
  if (bucket.tokens >= 1.0) {
    bucket.tokens -= 1.0;
    return std::nullopt;
  }
  double wait = (1.0 - bucket.tokens) * 60.0 / static_cast<double>(per_minute_);
  return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(wait)));
}

}  // namespace cairn::auth
