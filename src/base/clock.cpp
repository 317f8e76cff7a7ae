#include "base/clock.h"

#include <chrono>

namespace cairn {

int64_t SystemClock::NowMicros() const {
  using namespace std::chrono;
  return duration_cast<microseconds>(system_clock::now().time_since_epoch()).count();
}

const Clock& SystemClock::Instance() {
  static const SystemClock* clock = new SystemClock();
  return *clock;
}

}  // namespace cairn
