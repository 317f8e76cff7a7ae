#include "subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace cairn::e2e {
using Clock = std::chrono::steady_clock;

Subprocess::Subprocess(std::vector<std::string> argv, std::vector<std::string> env)
    : argv_(std::move(argv)), env_(std::move(env)) {}

Subprocess::~Subprocess() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  if (out_fd_ >= 0) ::close(out_fd_);
  if (err_fd_ >= 0) ::close(err_fd_);
}

bool Subprocess::Start() {
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
    error_ = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  std::vector<char*> args;
  for (auto& a : argv_) args.push_back(a.data());
  args.push_back(nullptr);
  pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) {
    error_ = std::string("fork: ") + std::strerror(errno);
    return false;
  }
  if (pid_ == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) _exit(127);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    for (auto& e : env_) ::putenv(e.data());
    ::execvp(args[0], args.data());
    std::string msg = "exec " + argv_[0] + ": " + std::strerror(errno) + "\n";
    (void)!::write(2, msg.data(), msg.size());
    _exit(127);
  }
  ::close(out[1]);
  ::close(err[1]);
  out_fd_ = out[0];
  err_fd_ = err[0];
  return true;
}

bool Subprocess::ReadUntil(const std::function<bool(const Subprocess&)>& done, std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  while (!done(*this)) {
    pollfd fds[2];
    int n = 0;
    int* which[2];
    std::string* sink[2];
    if (out_fd_ >= 0) fds[n] = {out_fd_, POLLIN, 0}, which[n] = &out_fd_, sink[n] = &out_, ++n;
    if (err_fd_ >= 0) fds[n] = {err_fd_, POLLIN, 0}, which[n] = &err_fd_, sink[n] = &err_, ++n;
    if (n == 0) return done(*this);
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    int r = ::poll(fds, n, static_cast<int>(left));
    if (r < 0 && errno != EINTR) return false;
    for (int i = 0; i < n && r > 0; ++i) {
      if (fds[i].revents == 0) continue;
      char buf[65536];
      ssize_t got = ::read(*which[i], buf, sizeof buf);
      if (got > 0) {
        sink[i]->append(buf, static_cast<size_t>(got));
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        ::close(*which[i]);
        *which[i] = -1;
      }
    }
  }
  return true;
}

int Subprocess::Wait(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return -1;
  bool eof = ReadUntil([](const Subprocess& s) { return s.out_fd_ < 0 && s.err_fd_ < 0; }, timeout);
  if (!eof) Kill(SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);  // pipes closed: the child has exited (or was just killed)
  pid_ = -1;
  if (!eof) return -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

void Subprocess::Kill(int signal) {
  if (pid_ > 0) ::kill(pid_, signal);
}

std::vector<std::string> Subprocess::OutLines() const {
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t nl; (nl = out_.find('\n', start)) != std::string::npos; start = nl + 1) {
    lines.push_back(out_.substr(start, nl - start));
  }
  return lines;
}

}  // namespace cairn::e2e
