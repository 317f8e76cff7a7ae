#include "cli/stop_signal.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

namespace cairn::cli {

namespace {

volatile std::sig_atomic_t g_stop_requested = 0;
volatile int g_wake_fd = -1;

struct sigaction g_old_int;
struct sigaction g_old_term;

extern "C" void OnStopSignal(int) {
  const int saved_errno = errno;
  g_stop_requested = 1;
  const int fd = g_wake_fd;
  if (fd >= 0) {
    const char byte = 1;
    (void)!write(fd, &byte, 1);  // non-blocking; a full pipe is already readable
  }
  errno = saved_errno;
}

}  // namespace

SignalStop::SignalStop() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0) {
    read_fd_ = fds[0];
    write_fd_ = fds[1];
  }
  g_stop_requested = 0;
  g_wake_fd = write_fd_;
  struct sigaction action {};
  action.sa_handler = &OnStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART | SA_RESETHAND;
  sigaction(SIGINT, &action, &g_old_int);
  sigaction(SIGTERM, &action, &g_old_term);
}

SignalStop::~SignalStop() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
  g_wake_fd = -1;
  if (read_fd_ >= 0) close(read_fd_);
  if (write_fd_ >= 0) close(write_fd_);
}

bool SignalStop::stop_requested() const { return g_stop_requested != 0; }

bool SignalStop::WaitFor(std::chrono::milliseconds duration) {
  const auto deadline = std::chrono::steady_clock::now() + duration;
  while (!stop_requested()) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return true;
    pollfd pfd{read_fd_, POLLIN, 0};
    poll(&pfd, read_fd_ >= 0 ? 1 : 0, static_cast<int>(left.count()));  // EINTR: loop and look again
  }
  return false;
}

}  // namespace cairn::cli
