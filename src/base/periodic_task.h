// PeriodicTask: runs a function every `interval` on its own thread until destroyed or Stop()ped.
// Stop() wakes the thread at once rather than waiting out the interval.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace cairn {

class PeriodicTask {
 public:
  PeriodicTask(std::chrono::milliseconds interval, std::function<void()> task);
  ~PeriodicTask();  // Stop()s
  PeriodicTask(const PeriodicTask&) = delete;
  PeriodicTask& operator=(const PeriodicTask&) = delete;

  // Waits for a running task to finish, then ends the thread. Idempotent.
  void Stop();

 private:
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace cairn
