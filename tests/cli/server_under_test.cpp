#include "server_under_test.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace cairn::cli_e2e {

namespace {

int RemainingMs(std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return left.count() < 0 ? 0 : static_cast<int>(left.count());
}

int DecodeStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// The port, if the file holds one complete line with a number in 1..65535.
int ReadPort(const std::string& path) {
  std::ifstream in(path);
  int port = 0;
  if (!(in >> port) || port <= 0 || port > 65535) return 0;
  return port;
}

}  // namespace

ServerUnderTest::ServerUnderTest(std::string binary) : binary_(std::move(binary)) {
  std::string pattern = (std::filesystem::temp_directory_path() / "cairn-cli-e2e-XXXXXX").string();
  if (mkdtemp(pattern.data()) != nullptr) dir_ = pattern;
  port_file_ = dir_ + "/port";
  log_file_ = dir_ + "/server.log";
}

ServerUnderTest::~ServerUnderTest() {
  if (pid_ > 0) Stop(std::chrono::seconds(10));
  if (!dir_.empty() && std::getenv("CAIRN_E2E_KEEP") == nullptr) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
}

bool ServerUnderTest::Start(std::chrono::milliseconds timeout) {
  error_.clear();
  if (dir_.empty()) {
    error_ = "mkdtemp failed";
    return false;
  }
  std::filesystem::remove(port_file_);

  // Watch before starting, so the rename cannot happen unseen.
  const int inotify = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (inotify < 0 || inotify_add_watch(inotify, dir_.c_str(), IN_MOVED_TO | IN_CLOSE_WRITE) < 0) {
    error_ = std::string("inotify: ") + std::strerror(errno);
    if (inotify >= 0) close(inotify);
    return false;
  }

  std::vector<std::string> args = {binary_,      "serve",    "--listen",  "127.0.0.1:0", "--data-dir", dir_ + "/data",
                                   "--port-file", port_file_, "--log-level", "warn"};
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const int log_fd = open(log_file_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  const pid_t parent = getpid();

  pid_ = fork();
  if (pid_ < 0) {
    error_ = std::string("fork: ") + std::strerror(errno);
    close(inotify);
    return false;
  }
  if (pid_ == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // no server outlives a crashed test
    if (getppid() != parent) _exit(127);
    const int null_fd = open("/dev/null", O_RDONLY);
    dup2(null_fd, 0);
    dup2(log_fd, 1);
    dup2(log_fd, 2);
    execv(argv[0], argv.data());
    const char message[] = "exec of the cairn binary failed\n";
    (void)!write(2, message, sizeof message - 1);
    _exit(127);
  }
  close(log_fd);
  pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid_, 0));  // readable when the child exits

  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    port_ = ReadPort(port_file_);
    if (port_ != 0) break;
    pollfd fds[2] = {{inotify, POLLIN, 0}, {pidfd_, POLLIN, 0}};
    const int remaining = RemainingMs(deadline);
    // Without pidfd (old kernel) an early exit is noticed once a second instead of at once.
    const int ready = poll(fds, 2, pidfd_ >= 0 ? remaining : std::min(remaining, 1000));
    if (ready < 0 && errno != EINTR) {
      error_ = std::string("poll: ") + std::strerror(errno);
      break;
    }
    if (fds[0].revents != 0) {
      char events[4096];
      while (read(inotify, events, sizeof events) > 0) {
      }
    }
    int exit_code = 0;
    if (WaitForExit(std::chrono::milliseconds(0), &exit_code)) {
      error_ = "cairn serve exited with " + std::to_string(exit_code) + " before listening:\n" + LogTail();
      break;
    }
    if (RemainingMs(deadline) == 0) {
      error_ = "cairn serve did not write its port file within " + std::to_string(timeout.count()) + " ms:\n" + LogTail();
      break;
    }
  }
  close(inotify);
  if (port_ == 0) {
    if (pid_ > 0) Stop(std::chrono::seconds(5));
    return false;
  }
  return true;
}

bool ServerUnderTest::WaitForExit(std::chrono::milliseconds timeout, int* exit_code) {
  if (pid_ <= 0) return true;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    int status = 0;
    const pid_t done = waitpid(pid_, &status, WNOHANG);
    if (done == pid_ || (done < 0 && errno == ECHILD)) {
      *exit_code = done == pid_ ? DecodeStatus(status) : -1;
      pid_ = -1;
      if (pidfd_ >= 0) close(pidfd_);
      pidfd_ = -1;
      return true;
    }
    const int remaining = RemainingMs(deadline);
    if (remaining == 0) return false;
    pollfd fd = {pidfd_, POLLIN, 0};
    poll(&fd, 1, pidfd_ >= 0 ? remaining : std::min(remaining, 100));
  }
}

int ServerUnderTest::Stop(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  int exit_code = -1;
  if (!WaitForExit(timeout, &exit_code)) {
    kill(pid_, SIGKILL);
    WaitForExit(std::chrono::seconds(30), &exit_code);
    exit_code = -1;
  }
  return exit_code;
}

std::string ServerUnderTest::LogTail(size_t max_bytes) const {
  std::ifstream in(log_file_, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  std::string all = text.str();
  return all.size() <= max_bytes ? all : all.substr(all.size() - max_bytes);
}

}  // namespace cairn::cli_e2e
