#include "exec/tools/live_process.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <climits>

#include "exec/tools/process_launch.h"

namespace cairn::exec {
using namespace process_internal;  // NOLINT: the shared half of the process runner

struct LiveProcess::State {
  LaunchedProcess launched;
};

LiveProcess::LiveProcess(size_t max_log_bytes) : state_(std::make_unique<State>()), max_log_bytes_(max_log_bytes) {}

Result<std::unique_ptr<LiveProcess>> LiveProcess::Start(const ProcessSpec& spec) {
  CAIRN_ASSIGN_OR_RETURN(LaunchedProcess launched, LaunchProcess(spec));
  std::unique_ptr<LiveProcess> process(new LiveProcess(spec.max_log_bytes));
  SetNonBlocking(launched.stdin_write);
  SetNonBlocking(launched.stdout_read);
  SetNonBlocking(launched.stderr_read);
  launched.result_read.Reset();  // fd 3 is not part of the stdio protocol
  process->state_->launched = std::move(launched);
  return process;
}

LiveProcess::~LiveProcess() {
  Stop();
  state_->launched.keeper.reset();  // reaps the keeper: every process of the child is gone
}

void LiveProcess::Stop() {
  if (state_->launched.keeper) state_->launched.keeper->StopRun();
}

std::string LiveProcess::StderrTail() const {
  std::lock_guard lock(log_mu_);
  return stderr_tail_;
}

Status LiveProcess::Write(std::string_view data, std::chrono::milliseconds timeout) {
  std::lock_guard lock(write_mu_);
  const int fd = state_->launched.stdin_write.get();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  size_t offset = 0;
  while (offset < data.size()) {
    const ssize_t n = WriteNoSigpipe(fd, data.data() + offset, data.size() - offset);
    if (n > 0) {
      offset += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN) return Status::Unavailable("the process no longer reads its stdin: " + ErrnoText(errno));
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return Status::Unavailable("the process did not read its stdin within " +
                                                      std::to_string(timeout.count()) + " ms");
    pollfd p{fd, POLLOUT, 0};
    ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), INT_MAX)));
  }
  return Status::Ok();
}

Result<std::optional<std::string>> LiveProcess::ReadLine(size_t max_bytes) {
  Fd& out = state_->launched.stdout_read;
  Fd& err = state_->launched.stderr_read;
  char buffer[64 * 1024];
  while (true) {
    const size_t newline = pending_.find('\n');
    if (newline != std::string::npos) {
      std::string line = pending_.substr(0, newline);
      pending_.erase(0, newline + 1);
      if (skipping_) {
        skipping_ = false;
        return Status::PayloadTooLarge("a line of stdout was longer than " + std::to_string(max_bytes) + " bytes");
      }
      if (line.size() > max_bytes) {
        return Status::PayloadTooLarge("a line of stdout was longer than " + std::to_string(max_bytes) + " bytes");
      }
      return std::optional<std::string>(std::move(line));
    }
    if (pending_.size() > max_bytes) {
      pending_.clear();
      skipping_ = true;
    }
    if (!out.valid()) return std::optional<std::string>();
    pollfd fds[2] = {{out.get(), POLLIN, 0}, {err.valid() ? err.get() : -1, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return Status::Internal("poll failed: " + ErrnoText(errno));
    }
    if (fds[1].revents != 0 && err.valid()) {
      const ssize_t n = ::read(err.get(), buffer, sizeof buffer);
      if (n > 0) {
        std::lock_guard lock(log_mu_);
        stderr_tail_.append(buffer, static_cast<size_t>(n));
        if (stderr_tail_.size() > max_log_bytes_) stderr_tail_.erase(0, stderr_tail_.size() - max_log_bytes_);
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        err.Reset();
      }
    }
    if (fds[0].revents != 0) {
      const ssize_t n = ::read(out.get(), buffer, sizeof buffer);
      if (n > 0) {
        pending_.append(buffer, static_cast<size_t>(n));
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        out.Reset();
      }
    }
  }
}

}  // namespace cairn::exec
