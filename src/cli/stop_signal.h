// StopSignal: how a long-running command (tail) learns that it should end, made injectable.
//
// SignalStop is the real one: SIGINT and SIGTERM request the stop (the handler sets a flag and
// writes to a self-pipe, so a poll() on fd() wakes at once). Tests use a scripted fake.
#pragma once

#include <chrono>

namespace cairn::cli {

class StopSignal {
 public:
  virtual ~StopSignal() = default;
  virtual bool stop_requested() const = 0;
  // A file descriptor that becomes readable once a stop is requested (for poll), or -1.
  virtual int fd() const = 0;
  // Waits for `duration` unless a stop is requested first. Returns false if one was (before or
  // during the wait), true if the whole duration passed.
  virtual bool WaitFor(std::chrono::milliseconds duration) = 0;
};

// Installs handlers for SIGINT and SIGTERM for its lifetime (the previous ones are restored by
// the destructor). A handler fires once (SA_RESETHAND): a second Ctrl-C ends the process the
// default way, should the first not be noticed. At most one instance may exist at a time.
class SignalStop final : public StopSignal {
 public:
  SignalStop();
  ~SignalStop() override;
  SignalStop(const SignalStop&) = delete;
  SignalStop& operator=(const SignalStop&) = delete;

  bool stop_requested() const override;
  int fd() const override { return read_fd_; }
  bool WaitFor(std::chrono::milliseconds duration) override;

 private:
  int read_fd_ = -1;
  int write_fd_ = -1;
};

}  // namespace cairn::cli
