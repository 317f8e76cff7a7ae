// Clock: the source of time for everything that stores or compares timestamps. Injectable so that
// tests of TTL and ordering do not depend on the wall clock.
#pragma once

#include <atomic>
#include <cstdint>

namespace cairn {

class Clock {
 public:
  virtual ~Clock() = default;
  // Microseconds since the Unix epoch, UTC.
  virtual int64_t NowMicros() const = 0;
};

// The real wall clock (std::chrono::system_clock).
class SystemClock final : public Clock {
 public:
  int64_t NowMicros() const override;
  // A process-wide instance; never destroyed.
  static const Clock& Instance();
};

// A clock tests set by hand. Thread-safe.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(int64_t start_micros) : now_(start_micros) {}
  int64_t NowMicros() const override { return now_.load(); }
  void Advance(int64_t micros) { now_ += micros; }
  void Set(int64_t micros) { now_ = micros; }

 private:
  std::atomic<int64_t> now_;
};

}  // namespace cairn
