// RateLimiter: token buckets by key (a principal, a tenant). Each bucket holds at most `burst`
// tokens and refills at `per_minute` / 60 tokens a second; a request takes one. Memory is bounded:
// beyond `max_keys` buckets, the ones that have refilled completely (idle keys, indistinguishable
// from new ones) are dropped. Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "base/clock.h"

namespace cairn::auth {

class RateLimiter {
 public:
  // `per_minute` 0 disables the limiter (Take always succeeds).
  RateLimiter(int64_t per_minute, int64_t burst, const Clock& clock, size_t max_keys = 100'000);

  // Takes a token of `key`'s bucket: nullopt when one was there, else the whole seconds (at least
  // 1) until one will be.
  std::optional<int64_t> Take(const std::string& key);

  bool enabled() const { return per_minute_ > 0; }

 private:
  struct Bucket {
    double tokens = 0;
    int64_t updated_micros = 0;
  };
  double Refilled(const Bucket& bucket, int64_t now) const;

  int64_t per_minute_;
  double burst_;
  const Clock& clock_;
  size_t max_keys_;
  std::mutex mu_;
  std::unordered_map<std::string, Bucket> buckets_;
};

}  // namespace cairn::auth
