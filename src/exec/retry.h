// Retrying store writes that met a full write queue (kResourceExhausted).
#pragma once

#include <atomic>
#include <chrono>
#include <thread>

#include "base/status.h"

namespace cairn::exec {

// Runs `write` again while it fails with a full write queue (kResourceExhausted), a few times
// with a growing pause: a claim or a response lost to a burst would otherwise wait for a restart.
template <typename Fn>
auto RetryWhenBusy(const std::atomic<bool>& stopping, Fn write) -> decltype(write()) {
  auto result = write();
  for (int attempt = 0; attempt < 6 && !result.ok() && result.status().code() == StatusCode::kResourceExhausted &&
                        !stopping;
       ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20 << attempt));
    result = write();
  }
  return result;
}

}  // namespace cairn::exec
