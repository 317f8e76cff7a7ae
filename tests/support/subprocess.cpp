#include "support/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace cairn::test_support {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> ChildEnvironment(const ProcessOptions& options) {
  auto name_of = [](const std::string& entry) { return entry.substr(0, entry.find('=')); };
  std::vector<std::string> env;
  for (char** p = environ; *p != nullptr; ++p) {
    const std::string entry = *p;
    bool drop = false;
    for (const auto& name : options.unset_env) drop = drop || name_of(entry) == name;
    for (const auto& set : options.set_env) drop = drop || name_of(entry) == name_of(set);
    if (!drop) env.push_back(entry);
  }
  for (const auto& set : options.set_env) env.push_back(set);
  return env;
}

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

int ExitCode(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

void CloseFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

Subprocess::Subprocess(std::vector<std::string> argv, ProcessOptions options)
    : argv_(std::move(argv)), options_(std::move(options)) {}

Subprocess::~Subprocess() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  CloseFd(in_fd_);
  CloseFd(out_fd_);
  CloseFd(err_fd_);
}

bool Subprocess::Start() {
  auto failed = [this](std::string why) {
    error_ = std::move(why);
    err_ += error_;
    return false;
  };
  if (argv_.empty()) return failed("no program to run");
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) != 0) return failed(std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(out, O_CLOEXEC) != 0) {
    for (int fd : in) ::close(fd);
    return failed(std::string("pipe: ") + std::strerror(errno));
  }
  if (::pipe2(err, O_CLOEXEC) != 0) {
    for (int fd : {in[0], in[1], out[0], out[1]}) ::close(fd);
    return failed(std::string("pipe: ") + std::strerror(errno));
  }
  // Everything the child needs is prepared before fork: only async-signal-safe calls after it.
  std::vector<std::string> args = argv_;
  std::vector<std::string> env = ChildEnvironment(options_);
  std::vector<char*> c_args = CStrings(args);
  std::vector<char*> c_env = CStrings(env);
  const std::string exec_failed = "exec " + argv_[0] + " failed\n";
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) {
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) ::close(fd);
    return failed(std::string("fork: ") + std::strerror(errno));
  }
  if (pid_ == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive a crashed test
    if (::getppid() != parent) _exit(127);
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    ::execvpe(c_args[0], c_args.data(), c_env.data());
    (void)!::write(2, exec_failed.data(), exec_failed.size());
    _exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  out_fd_ = out[0];
  err_fd_ = err[0];
  in_fd_ = in[1];
  ::signal(SIGPIPE, SIG_IGN);  // a child that does not read its stdin must not kill the test
  if (options_.stdin_text.empty()) {
    CloseFd(in_fd_);
  } else {
    ::fcntl(in_fd_, F_SETFL, O_NONBLOCK);
  }
  return true;
}

bool Subprocess::ReadUntil(const std::function<bool(const Subprocess&)>& done, std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  while (!done(*this)) {
    if (out_fd_ < 0 && err_fd_ < 0) return done(*this);  // the child closed both: nothing more will come
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd fds[3] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}, {in_fd_, POLLOUT, 0}};  // negative fds are ignored
    if (::poll(fds, 3, static_cast<int>(left)) < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    int* which[2] = {&out_fd_, &err_fd_};
    std::string* sink[2] = {&out_, &err_};
    for (int i = 0; i < 2; ++i) {
      if (*which[i] < 0 || fds[i].revents == 0) continue;
      char buf[65536];
      ssize_t got = ::read(*which[i], buf, sizeof buf);
      if (got > 0) {
        sink[i]->append(buf, static_cast<size_t>(got));
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        CloseFd(*which[i]);
      }
    }
    if (in_fd_ >= 0 && fds[2].revents != 0) {
      const std::string& text = options_.stdin_text;
      ssize_t put = ::write(in_fd_, text.data() + written_, text.size() - written_);
      if (put > 0) written_ += static_cast<size_t>(put);
      if (put < 0 && errno != EAGAIN && errno != EINTR) written_ = text.size();  // the reader is gone
      if (written_ == text.size()) CloseFd(in_fd_);
    }
  }
  return true;
}

bool Subprocess::WaitForLines(size_t count, std::chrono::milliseconds timeout) {
  return ReadUntil(
      [count](const Subprocess& p) {
        return static_cast<size_t>(std::count(p.out().begin(), p.out().end(), '\n')) >= count;
      },
      timeout);
}

bool Subprocess::WaitForErr(const std::string& text, std::chrono::milliseconds timeout) {
  return ReadUntil([&text](const Subprocess& p) { return p.err().find(text) != std::string::npos; }, timeout);
}

ProcessResult Subprocess::Finish(std::chrono::milliseconds timeout) {
  ProcessResult result;
  bool ended = ReadUntil([](const Subprocess& p) { return p.out_fd_ < 0 && p.err_fd_ < 0; }, timeout);
  CloseFd(in_fd_);
  if (pid_ > 0) {
    if (!ended) ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    result.exit_code = ExitCode(status);
    pid_ = -1;
  }
  result.out = out_;
  result.err = err_;
  if (!ended) {
    result.exit_code = -1;
    result.err += "\n[killed: timed out]";
  }
  return result;
}

int Subprocess::Wait(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return -1;
  return Finish(timeout).exit_code;
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

std::string FindOnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string candidate = dirs.substr(start, end - start) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

ProcessResult RunProcess(const std::vector<std::string>& argv, const ProcessOptions& options) {
  Subprocess process(argv, options);
  if (!process.Start()) return ProcessResult{-1, "", process.err()};
  return process.Finish(options.timeout);
}

}  // namespace cairn::test_support
