// UUIDv7 identifiers (RFC 9562): 48 bits of Unix milliseconds, then a counter and random bits, so
// ids sort by creation time. Ids made by one generator are strictly increasing, even within a
// millisecond or when the wall clock steps back.
#pragma once

#include <cstdint>
#include <mutex>
#include <random>
#include <string>
#include <string_view>

#include "base/clock.h"

namespace cairn {

class UuidV7Generator {
 public:
  // `clock` must outlive the generator. `seed` fixes the random bits (tests); 0 seeds from the OS.
  explicit UuidV7Generator(const Clock& clock, uint64_t seed = 0);

  // The next id as a lowercase canonical string "xxxxxxxx-xxxx-7xxx-yxxx-xxxxxxxxxxxx". Thread-safe.
  std::string Next();

 private:
  const Clock& clock_;
  std::mutex mu_;
  std::mt19937_64 rng_;
  int64_t last_ms_ = 0;
  uint32_t counter_ = 0;  // 12 bits in rand_a
};

// True if `text` is a canonical lowercase or uppercase UUID string (any version).
bool IsUuidString(std::string_view text);

}  // namespace cairn
