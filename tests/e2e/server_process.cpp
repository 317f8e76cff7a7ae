#include "server_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif

namespace cairn::e2e {
namespace {

using Clock = std::chrono::steady_clock;

std::string ErrnoText(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

int RemainingMs(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left < 0 ? 0 : static_cast<int>(left);
}

// The port written in `path`, or 0 if the file is absent or does not hold a port yet.
int ReadPort(const std::string& path) {
  std::ifstream in(path);
  if (!in) return 0;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t begin = text.find_first_not_of(" \t\r\n");
  size_t end = text.find_last_not_of(" \t\r\n");
  if (begin == std::string::npos) return 0;
  text = text.substr(begin, end - begin + 1);
  if (text.empty() || text.size() > 5) return 0;
  for (char c : text) {
    if (c < '0' || c > '9') return 0;
  }
  int port = std::stoi(text);
  return port > 0 && port < 65536 ? port : 0;
}

int DecodeStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

std::string CairnBinary() {
  if (const char* env = std::getenv("CAIRN_E2E_BINARY"); env != nullptr && *env != '\0') return env;
#ifdef CAIRN_BINARY
  return CAIRN_BINARY;
#else
  return "cairn";
#endif
}

ServerProcess::ServerProcess(std::vector<std::string> extra_args)
    : extra_args_(std::move(extra_args)), root_("cairn-e2e") {
  if (!root_.ok()) {
    error_ = root_.error();
    return;
  }
  root_dir_ = root_.path();
  data_dir_ = root_dir_ + "/data";
  port_file_ = root_dir_ + "/port";
  log_file_ = root_dir_ + "/server.log";
  if (mkdir(data_dir_.c_str(), 0700) != 0) error_ = ErrnoText("mkdir data dir");
}

ServerProcess::~ServerProcess() {
  if (running()) Kill9();
  if (pidfd_ >= 0) close(pidfd_);
}  // root_ goes next: the directory is removed unless CAIRN_E2E_KEEP is set

bool ServerProcess::Start(std::chrono::milliseconds timeout) {
  if (root_dir_.empty()) return false;  // error_ says why
  if (running()) {
    error_ = "already running";
    return false;
  }
  error_.clear();
  port_ = 0;
  unlink(port_file_.c_str());
  unlink((port_file_ + ".tmp").c_str());

  int inotify_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (inotify_fd < 0) {
    error_ = ErrnoText("inotify_init1");
    return false;
  }
  if (inotify_add_watch(inotify_fd, root_dir_.c_str(), IN_MOVED_TO | IN_CLOSE_WRITE | IN_CREATE) < 0) {
    error_ = ErrnoText("inotify_add_watch");
    close(inotify_fd);
    return false;
  }

  // Everything the child needs is prepared before fork: it only calls async-signal-safe functions.
  const std::string binary = CairnBinary();
  std::vector<std::string> args = {binary,       "serve",     "--listen",   "127.0.0.1:0",
                                   "--data-dir", data_dir_,   "--port-file", port_file_,
                                   "--log-level", "warn", "--builtin-tools=false", "--default-agent=false"};
  args.insert(args.end(), extra_args_.begin(), extra_args_.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  int log_fd = open(log_file_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (log_fd < 0 || null_fd < 0) {
    error_ = ErrnoText("open log or /dev/null");
    if (log_fd >= 0) close(log_fd);
    if (null_fd >= 0) close(null_fd);
    close(inotify_fd);
    return false;
  }
  {
    std::string banner = "=== cairn-e2e: starting";
    for (const auto& a : args) banner += " " + a;
    banner += "\n";
    (void)!write(log_fd, banner.data(), banner.size());
  }

  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    error_ = ErrnoText("fork");
    close(log_fd);
    close(null_fd);
    close(inotify_fd);
    return false;
  }
  if (pid == 0) {
    // Child.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    dup2(null_fd, 0);
    dup2(log_fd, 1);
    dup2(log_fd, 2);
    syscall(SYS_close_range, 3U, ~0U, 0U);
    for (const auto& [resource, limit] : limits_) {
      if (setrlimit(resource, &limit) != 0) {
        static const char kLimitMsg[] = "cairn-e2e: setrlimit failed\n";
        (void)!write(2, kLimitMsg, sizeof(kLimitMsg) - 1);
        _exit(127);
      }
    }
    signal(SIGPIPE, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    sigset_t all;
    sigemptyset(&all);
    sigprocmask(SIG_SETMASK, &all, nullptr);
    execv(argv[0], argv.data());
    static const char kMsg[] = "cairn-e2e: execv failed\n";
    (void)!write(2, kMsg, sizeof(kMsg) - 1);
    _exit(127);
  }
  close(log_fd);
  close(null_fd);
  pid_ = pid;
  if (pidfd_ >= 0) close(pidfd_);
  pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));

  const auto deadline = Clock::now() + timeout;
  bool ok = false;
  while (true) {
    if (int port = ReadPort(port_file_); port != 0) {
      port_ = port;
      ok = true;
      break;
    }
    if (Clock::now() >= deadline) {
      error_ = "timed out waiting for the port file " + port_file_;
      break;
    }
    pollfd fds[2] = {{inotify_fd, POLLIN, 0}, {pidfd_, POLLIN, 0}};
    int n = poll(fds, pidfd_ >= 0 ? 2 : 1, RemainingMs(deadline));
    if (n < 0 && errno != EINTR) {
      error_ = ErrnoText("poll");
      break;
    }
    if (n > 0 && (fds[1].revents & POLLIN) != 0) {
      // The child ended before writing its port.
      if (auto code = WaitForExit(std::chrono::milliseconds(0))) {
        error_ = "cairn exited with " + std::to_string(*code) + " before writing its port";
        break;
      }
    }
    if (n > 0 && (fds[0].revents & POLLIN) != 0) {
      alignas(inotify_event) char events[4096];
      while (read(inotify_fd, events, sizeof(events)) > 0) {
        // Drain; the port file is re-read at the top of the loop whatever the events were.
      }
    }
  }
  close(inotify_fd);
  if (!ok) {
    if (running()) Kill9();
    error_ += "\n--- server log ---\n" + LogTail();
  }
  return ok;
}

std::optional<int> ServerProcess::WaitForExit(std::chrono::milliseconds timeout) {
  if (!running()) return last_exit_code_;
  if (pidfd_ >= 0) {
    pollfd fd = {pidfd_, POLLIN, 0};
    const auto deadline = Clock::now() + timeout;
    while (true) {
      int n = poll(&fd, 1, RemainingMs(deadline));
      if (n > 0) break;
      if (n == 0) return std::nullopt;
      if (errno != EINTR) return std::nullopt;
    }
  }
  int status = 0;
  pid_t r;
  do {
    r = waitpid(pid_, &status, 0);
  } while (r < 0 && errno == EINTR);
  if (r != pid_) return std::nullopt;
  pid_ = -1;
  if (pidfd_ >= 0) {
    close(pidfd_);
    pidfd_ = -1;
  }
  last_exit_code_ = DecodeStatus(status);
  return last_exit_code_;
}

int ServerProcess::Stop(int signal_number, std::chrono::milliseconds timeout) {
  if (!running()) return last_exit_code_.value_or(-1);
  kill(pid_, signal_number);
  if (auto code = WaitForExit(timeout)) return *code;
  Kill9();
  last_exit_code_ = -1;
  return -1;
}

void ServerProcess::SetResourceLimit(int resource, rlim_t soft, rlim_t hard) {
  limits_.emplace_back(resource, rlimit{soft, hard});
}

void ServerProcess::Kill9() {
  if (!running()) return;
  kill(pid_, SIGKILL);
  WaitForExit(std::chrono::hours(1));
}

bool ServerProcess::Restart() {
  Stop();
  return Start();
}

std::string ServerProcess::LogTail(size_t max_bytes) const {
  std::ifstream in(log_file_, std::ios::binary);
  if (!in) return {};
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.size() > max_bytes) text = "...\n" + text.substr(text.size() - max_bytes);
  return text;
}

}  // namespace cairn::e2e
