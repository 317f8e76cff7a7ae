// Starting a process under its keeper (process_keeper.h), shared by RunProcess (one run to
// completion, process_runner.h) and LiveProcess (a long-lived child spoken to over its stdin and
// stdout, live_process.h). Internal to src/exec/tools: the descriptors and the keeper handle that
// both drive.
#pragma once

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <memory>
#include <string>
#include <utility>

#include "base/status.h"
#include "exec/tools/process_keeper.h"
#include "exec/tools/process_runner.h"

namespace cairn::exec::process_internal {

// Thread-safe (unlike strerror).
std::string ErrnoText(int err);

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      Reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  ~Fd() { Reset(); }
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void Reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

struct Pipe {
  Fd read;
  Fd write;
};

// O_CLOEXEC from the start: another thread may fork at any moment, and its child must not keep
// our pipe ends open (we would never see EOF).
Status OpenPipe(Pipe& pipe);
void SetNonBlocking(const Fd& fd);

// The keeper of one run, as the runner sees it. Asking it to stop and reaping it are the only
// ways this file ends a run; the destructor does both on every early return, so no path leaves a
// zombie or a process of the run behind.
class KeeperHandle {
 public:
  KeeperHandle(pid_t pid, Fd control) : pid_(pid), control_(std::move(control)) {}
  KeeperHandle(const KeeperHandle&) = delete;
  KeeperHandle& operator=(const KeeperHandle&) = delete;
  ~KeeperHandle() {
    if (reaped_) return;
    control_.Reset();  // EOF: the keeper kills everything and exits
    Reap();
  }
  // The keeper kills every process of the run, then exits. Idempotent.
  void StopRun();
  // Waits for the keeper; its own wait status (-1 if it was taken elsewhere).
  int Reap() {
    int status = 0;
    pid_t r;
    do {
      r = ::waitpid(pid_, &status, 0);
    } while (r < 0 && errno == EINTR);
    reaped_ = true;
    return r == pid_ ? status : -1;
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_;
  Fd control_;
  bool reaped_ = false;
};

// Writing to a pipe whose reader is gone raises SIGPIPE, which kills the whole runner unless it
// ignores SIGPIPE, and pipes cannot use MSG_NOSIGNAL: this write blocks SIGPIPE in the calling
// thread and consumes it if it raised it. Returns what write(2) returns (errno EPIPE then).
ssize_t WriteNoSigpipe(int fd, const char* data, size_t len);

// Reads one KeeperReport from `fd`; kNone at EOF (the keeper died without reporting).
KeeperReport ReadReport(int fd);

// A started process: its keeper, our ends of its pipes (stdin's write end, stdout's, stderr's and
// fd 3's read ends, the keeper's status pipe), the program's pid and when it started.
struct LaunchedProcess {
  std::unique_ptr<KeeperHandle> keeper;
  Fd stdin_write;
  Fd stdout_read;
  Fd stderr_read;
  Fd result_read;
  Fd status_read;
  pid_t tool_pid = 0;
  std::chrono::steady_clock::time_point start;
};

// Validates `spec`, starts its program under a keeper and waits for the keeper's first report.
// The errors are RunProcess's (process_runner.h). spec.stdin_data is not written here.
Result<LaunchedProcess> LaunchProcess(const ProcessSpec& spec);

}  // namespace cairn::exec::process_internal
