// Watchdog: sets a run's cancel flag when its deadline passes, from one timer thread for all runs.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <thread>

namespace cairn::exec {

class Watchdog {
 public:
  using Clock = std::chrono::steady_clock;

  Watchdog();
  ~Watchdog();  // Stop()s

  // Sets `*flag` to true at `deadline` unless Disarm()ed first. `flag` must stay valid until
  // Disarm returns. Returns a token for Disarm.
  uint64_t Arm(Clock::time_point deadline, std::atomic<bool>* flag);
  // After it returns the flag is no longer touched. Returns whether the deadline had passed.
  bool Disarm(uint64_t token);

  // Sets every armed flag (shutdown) and ends the thread.
  void Stop();

 private:
  void Loop();

  struct Entry {
    Clock::time_point deadline;
    std::atomic<bool>* flag;
  };
  std::mutex mu_;
  std::condition_variable wake_;
  std::map<uint64_t, Entry> armed_;
  uint64_t next_token_ = 1;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace cairn::exec
