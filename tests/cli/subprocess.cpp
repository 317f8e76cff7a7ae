#include "subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

extern char** environ;

namespace cairn::cli_e2e {

namespace {

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

// Forks and execs `argv` with the pipes as its stdin/stdout/stderr. Returns the child's pid, or -1
// with `error` set (then the six descriptors are closed). Everything the child needs is prepared
// before fork: only async-signal-safe calls happen after it.
pid_t Spawn(const std::vector<std::string>& argv, const ProcessOptions& options, const int in_pipe[2],
            const int out_pipe[2], const int err_pipe[2], std::string& error) {
  std::vector<std::string> args = argv;
  std::vector<std::string> env = ChildEnvironment(options);
  std::vector<char*> c_args = CStrings(args);
  std::vector<char*> c_env = CStrings(env);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    error = std::string("fork: ") + std::strerror(errno);
    for (int fd : {in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) close(fd);
    return -1;
  }
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive a crashed test
    if (getppid() != parent) _exit(127);
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    execve(c_args[0], c_args.data(), c_env.data());
    const char message[] = "exec failed\n";
    (void)!write(2, message, sizeof message - 1);
    _exit(127);
  }
  return pid;
}

}  // namespace

ProcessResult RunProcess(const std::vector<std::string>& argv, const ProcessOptions& options) {
  ProcessResult result;
  int in_pipe[2];
  int out_pipe[2];
  int err_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0 || pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
    result.err = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  const pid_t pid = Spawn(argv, options, in_pipe, out_pipe, err_pipe, result.err);
  if (pid < 0) return result;
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  signal(SIGPIPE, SIG_IGN);  // a child that does not read its stdin must not kill the test
  fcntl(in_pipe[1], F_SETFL, O_NONBLOCK);

  int in_fd = in_pipe[1];
  size_t written = 0;
  if (options.stdin_text.empty()) {
    close(in_fd);
    in_fd = -1;
  }
  int fds[2] = {out_pipe[0], err_pipe[0]};
  std::string* sinks[2] = {&result.out, &result.err};
  const auto deadline = std::chrono::steady_clock::now() + options.timeout;
  bool timed_out = false;
  while (fds[0] >= 0 || fds[1] >= 0 || in_fd >= 0) {
    pollfd pfds[3];
    int n = 0;
    for (int fd : fds) pfds[n++] = {fd, POLLIN, 0};  // a negative fd is ignored by poll
    pfds[n++] = {in_fd, POLLOUT, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    if (poll(pfds, n, static_cast<int>(left.count())) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i] < 0 || pfds[i].revents == 0) continue;
      char buffer[65536];
      const ssize_t got = read(fds[i], buffer, sizeof buffer);
      if (got > 0) {
        sinks[i]->append(buffer, static_cast<size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        close(fds[i]);
        fds[i] = -1;
      }
    }
    if (in_fd >= 0 && pfds[2].revents != 0) {
      const ssize_t put = write(in_fd, options.stdin_text.data() + written, options.stdin_text.size() - written);
      if (put > 0) written += static_cast<size_t>(put);
      if (put < 0 && errno != EAGAIN && errno != EINTR) written = options.stdin_text.size();  // reader gone
      if (written == options.stdin_text.size()) {
        close(in_fd);
        in_fd = -1;
      }
    }
  }
  if (timed_out) kill(pid, SIGKILL);
  for (int fd : fds) {
    if (fd >= 0) close(fd);
  }
  if (in_fd >= 0) close(in_fd);

  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.exit_code = 128 + WTERMSIG(status);
  if (timed_out) result.err += "\n[killed: timed out]";
  return result;
}

StreamingProcess::StreamingProcess(const std::vector<std::string>& argv, const ProcessOptions& options) {
  int in_pipe[2];
  int out_pipe[2];
  int err_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0 || pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
    err_ = std::string("pipe: ") + std::strerror(errno);
    return;
  }
  const pid_t pid = Spawn(argv, options, in_pipe, out_pipe, err_pipe, err_);
  if (pid < 0) return;
  pid_ = pid;
  close(in_pipe[0]);
  close(in_pipe[1]);  // an empty stdin
  close(out_pipe[1]);
  close(err_pipe[1]);
  fds_[0] = out_pipe[0];
  fds_[1] = err_pipe[0];
}

StreamingProcess::~StreamingProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  for (int fd : fds_) {
    if (fd >= 0) close(fd);
  }
}

bool StreamingProcess::WaitFor(const std::function<bool(const std::string&, const std::string&)>& done,
                               std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string* sinks[2] = {&out_, &err_};
  while (!done(out_, err_)) {
    if (fds_[0] < 0 && fds_[1] < 0) return false;  // the child closed both: nothing more will come
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd pfds[2] = {{fds_[0], POLLIN, 0}, {fds_[1], POLLIN, 0}};  // a negative fd is ignored
    if (poll(pfds, 2, static_cast<int>(left.count())) < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds_[i] < 0 || pfds[i].revents == 0) continue;
      char buffer[65536];
      const ssize_t got = read(fds_[i], buffer, sizeof buffer);
      if (got > 0) {
        sinks[i]->append(buffer, static_cast<size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        close(fds_[i]);
        fds_[i] = -1;
      }
    }
  }
  return true;
}

bool StreamingProcess::WaitForLines(size_t count, std::chrono::milliseconds timeout) {
  return WaitFor(
      [count](const std::string& out, const std::string&) {
        return static_cast<size_t>(std::count(out.begin(), out.end(), '\n')) >= count;
      },
      timeout);
}

bool StreamingProcess::WaitForErr(const std::string& text, std::chrono::milliseconds timeout) {
  return WaitFor([&text](const std::string&, const std::string& err) { return err.find(text) != std::string::npos; },
                 timeout);
}

void StreamingProcess::Signal(int signal) {
  if (pid_ > 0) kill(pid_, signal);
}

ProcessResult StreamingProcess::Finish(std::chrono::milliseconds timeout) {
  ProcessResult result;
  // Read until the child closes its outputs (it exits), or the timeout.
  const bool ended = WaitFor([](const std::string&, const std::string&) { return false; }, timeout) ||
                     (fds_[0] < 0 && fds_[1] < 0);
  if (pid_ > 0) {
    if (!ended) kill(pid_, SIGKILL);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) result.exit_code = 128 + WTERMSIG(status);
    pid_ = -1;
  }
  result.out = out_;
  result.err = err_;
  if (!ended) result.err += "\n[killed: timed out]";
  return result;
}

}  // namespace cairn::cli_e2e
