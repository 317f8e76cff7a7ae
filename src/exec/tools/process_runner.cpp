// fork + execve with pipes, driven by one poll() loop in the calling thread.
//
// The runner lives in a multithreaded program, so between fork() and execve() the child may only
// make async-signal-safe calls (another thread may have held the malloc or ASan allocator lock at
// the moment of fork). Everything the child needs — argv/envp arrays, the resolved program path,
// rlimits, signal sets — is therefore prepared before fork in a ChildPlan.
#include "exec/tools/process_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <string_view>

namespace cairn::exec {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kCancelPollInterval{20};
constexpr milliseconds kExitPollInterval{10};  // only when pidfd_open is unavailable
// After the child exits, how long to keep reading pipes still held open by processes that left
// its process group (their own group was not killed).
constexpr milliseconds kDrainGrace{500};
constexpr size_t kChunk = 64 * 1024;  // the default pipe capacity
constexpr const char* kDefaultPath = "/usr/local/bin:/usr/bin:/bin";

// Thread-safe (unlike strerror).
std::string ErrnoText(int err) {
  const char* text = ::strerrordesc_np(err);
  return text != nullptr ? text : "errno " + std::to_string(err);
}

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
Status OpenPipe(Pipe& pipe) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return Status::ResourceExhausted("cannot create a pipe for the process: " + ErrnoText(errno));
  }
  pipe.read = Fd(fds[0]);
  pipe.write = Fd(fds[1]);
  return Status::Ok();
}

void SetNonBlocking(const Fd& fd) {
  if (fd.valid()) ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) | O_NONBLOCK);
}

// What the child sends through the report pipe when a setup step or execve fails.
enum ChildStage : int { kStageFds = 1, kStageSetpgid, kStageRlimit, kStageChdir, kStageExec };
struct ChildReport {
  int stage = 0;
  int err = 0;
};

struct ChildPlan {
  const char* path = nullptr;
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  const char* cwd = nullptr;  // null: inherit
  int fds[4] = {-1, -1, -1, -1};  // become the child's 0, 1, 2, 3
  int report_fd = -1;  // CLOEXEC: a successful execve closes it, which the parent reads as EOF
  pid_t parent_pid = 0;
  bool set_cpu = false;
  struct rlimit cpu {};
  bool set_as = false;
  struct rlimit as {};
  struct sigaction default_action {};
  sigset_t empty_mask{};
  int fd_limit = 0;  // for the close loop when close_range is unavailable
};

[[noreturn]] void ChildFail(int report_fd, int stage) {
  ChildReport report{stage, errno};
  // Smaller than PIPE_BUF, hence atomic. If it fails, the parent just sees exit status 127.
  ssize_t written = ::write(report_fd, &report, sizeof report);
  (void)written;
  ::_exit(127);
}

// Runs in the child: async-signal-safe calls only, no allocation, no C++ library.
[[noreturn]] void RunChild(const ChildPlan& plan) {
  // Die with the runner instead of living on unsupervised. getppid() catches a runner that died
  // before prctl took effect.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != plan.parent_pid) ::_exit(127);

  // execve resets handlers but keeps ignored signals ignored (the runner may ignore SIGPIPE, which
  // would then break `yes | head` in the tool), and a runner's handler must not run here before
  // exec: so default everything. Fails for SIGKILL/SIGSTOP, which is fine.
  for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &plan.default_action, nullptr);
#if defined(__x86_64__)
  // glibc refuses sigaction for the two real-time signals it reserves (32, 33); a runner started
  // with them ignored would pass that on. The kernel call has no such rule.
  struct KernelSigaction {
    void (*handler)(int);
    unsigned long flags;
    void (*restorer)();
    unsigned long mask;
  } kernel_default{SIG_DFL, 0, nullptr, 0};
  for (int sig = 32; sig < SIGRTMIN; ++sig) ::syscall(SYS_rt_sigaction, sig, &kernel_default, nullptr, sizeof(unsigned long));
#endif

  // The pipe ends may have any numbers, including 0..3 if the runner had those closed, so first
  // move them (and the report pipe) above 3; then no dup2 below can overwrite an end still needed.
  const int report_fd = ::fcntl(plan.report_fd, F_DUPFD_CLOEXEC, 4);
  if (report_fd < 0) ::_exit(127);
  int high[4];
  for (int i = 0; i < 4; ++i) {
    high[i] = ::fcntl(plan.fds[i], F_DUPFD_CLOEXEC, 4);
    if (high[i] < 0) ChildFail(report_fd, kStageFds);
  }
  for (int i = 0; i < 4; ++i) {
    if (::dup2(high[i], i) < 0) ChildFail(report_fd, kStageFds);  // the copy is not CLOEXEC
  }
  // Everything from 4 up (the runner's descriptors, our pipe copies) closes at exec. Marking
  // instead of closing keeps report_fd usable until then.
  if (::close_range(4, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
    for (int fd = 4; fd < plan.fd_limit; ++fd) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  }

  if (::setpgid(0, 0) != 0) ChildFail(report_fd, kStageSetpgid);
  if (plan.set_cpu && ::setrlimit(RLIMIT_CPU, &plan.cpu) != 0) ChildFail(report_fd, kStageRlimit);
  if (plan.set_as && ::setrlimit(RLIMIT_AS, &plan.as) != 0) ChildFail(report_fd, kStageRlimit);
  if (plan.cwd != nullptr && ::chdir(plan.cwd) != 0) ChildFail(report_fd, kStageChdir);
  // The runner blocked all signals around fork; the program starts with none blocked.
  ::sigprocmask(SIG_SETMASK, &plan.empty_mask, nullptr);
  ::execve(plan.path, plan.argv, plan.envp);
  ChildFail(report_fd, kStageExec);
}

// Kills and reaps the child on every early return, so no path leaves a zombie or a running child.
class ChildReaper {
 public:
  explicit ChildReaper(pid_t pid) : pid_(pid) {}
  ChildReaper(const ChildReaper&) = delete;
  ChildReaper& operator=(const ChildReaper&) = delete;
  ~ChildReaper() {
    if (reaped_) return;
    KillGroup();
    Reap(nullptr);
  }
  void KillGroup() const {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);  // in case the group was never formed
  }
  // Waits for the child and records how it ended. If the status was taken elsewhere (SIGCHLD
  // ignored), the result keeps exit_code -1 and term_signal 0.
  void Reap(ProcessResult* result) {
    int status = 0;
    pid_t r;
    do {
      r = ::waitpid(pid_, &status, 0);
    } while (r < 0 && errno == EINTR);
    reaped_ = true;
    if (result == nullptr || r != pid_) return;
    if (WIFEXITED(status)) result->exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) result->term_signal = WTERMSIG(status);
  }

 private:
  pid_t pid_;
  bool reaped_ = false;
};

// Writing to a pipe whose reader is gone raises SIGPIPE, which kills the whole runner unless it
// ignores SIGPIPE, and pipes cannot use MSG_NOSIGNAL. So SIGPIPE is blocked in this thread for the
// write and, if the write raised it (it is thread-directed), consumed before unblocking.
ssize_t WriteNoSigpipe(int fd, const char* data, size_t len) {
  sigset_t pipe_set, old_mask, pending;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  sigpending(&pending);
  const bool was_pending = sigismember(&pending, SIGPIPE) == 1;
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);
  const ssize_t n = ::write(fd, data, len);
  const int err = errno;
  if (n < 0 && err == EPIPE && !was_pending) {
    const struct timespec zero {};
    while (::sigtimedwait(&pipe_set, nullptr, &zero) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  errno = err;
  return n;
}

// Keeps the last `cap` bytes. Trims only when twice the cap is buffered, so appends stay amortised
// O(1); the caller trims the remainder at the end.
void AppendTail(std::string& tail, const char* data, size_t n, size_t cap) {
  if (cap == 0) return;
  if (n >= cap) {
    tail.assign(data + n - cap, cap);
    return;
  }
  tail.append(data, n);
  if (tail.size() >= 2 * cap) tail.erase(0, tail.size() - cap);
}

void TrimTail(std::string& tail, size_t cap) {
  if (tail.size() > cap) tail.erase(0, tail.size() - cap);
}

Status ValidateSpec(const ProcessSpec& spec) {
  auto has_nul = [](const std::string& s) { return s.find('\0') != std::string::npos; };
  if (spec.argv.empty() || spec.argv[0].empty()) {
    return Status::InvalidArgument("process spec: argv is empty");
  }
  for (const std::string& arg : spec.argv) {
    if (has_nul(arg)) return Status::InvalidArgument("process spec: an argument of " + spec.argv[0] + " contains NUL");
  }
  for (const auto& [name, value] : spec.env) {
    if (name.empty() || name.find('=') != std::string::npos || has_nul(name) || has_nul(value)) {
      return Status::InvalidArgument("process spec: invalid environment variable \"" + name + "\"");
    }
  }
  if (has_nul(spec.cwd)) return Status::InvalidArgument("process spec: cwd contains NUL");
  if (spec.wall_timeout.count() < 0 || spec.cpu_seconds < 0 || spec.memory_bytes < 0) {
    return Status::InvalidArgument("process spec: limits must not be negative");
  }
  return Status::Ok();
}

// The path to execve, resolved before fork so that the child does no string work.
Result<std::string> ResolveProgram(const ProcessSpec& spec) {
  const std::string& program = spec.argv[0];
  if (program.find('/') != std::string::npos) return program;
  std::string path_list;
  bool from_env = false;
  for (const auto& [name, value] : spec.env) {
    if (name == "PATH") {  // the first one, as getenv() in the child would see it
      path_list = value;
      from_env = true;
      break;
    }
  }
  if (!from_env) {
    const char* own = ::getenv("PATH");
    path_list = own != nullptr ? own : kDefaultPath;
  }
  size_t begin = 0;
  while (begin <= path_list.size()) {
    size_t end = path_list.find(':', begin);
    if (end == std::string::npos) end = path_list.size();
    std::string_view dir(path_list.data() + begin, end - begin);
    begin = end + 1;
    // Relative entries would be resolved against the runner's cwd, not the child's: skip them.
    if (dir.empty() || dir.front() != '/') continue;
    std::string candidate(dir);
    candidate += '/';
    candidate += program;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return Status::NotFound("program not found in PATH: " + program);
}

Status StartFailure(const ChildReport& report, const ProcessSpec& spec, const std::string& path) {
  const std::string& program = spec.argv[0];
  const std::string why = ErrnoText(report.err);
  if (report.stage == kStageChdir) {
    if (report.err == ENOENT || report.err == ENOTDIR) {
      return Status::NotFound("working directory does not exist: " + spec.cwd);
    }
    return Status::InvalidArgument("cannot use working directory " + spec.cwd + ": " + why);
  }
  if (report.stage != kStageExec) {
    return Status::Internal("cannot set up the process for " + program + " (stage " +
                            std::to_string(report.stage) + "): " + why);
  }
  struct stat st {};
  switch (report.err) {
    case ENOENT:
      // The file exists but execve says ENOENT: its "#!" interpreter or dynamic loader is missing.
      if (::stat(path.c_str(), &st) == 0) {
        return Status::NotFound("interpreter of program not found: " + program);
      }
      return Status::NotFound("program not found: " + program);
    case ENOMEM:
    case EAGAIN:
      return Status::ResourceExhausted("cannot start " + program + ": " + why +
                                       (spec.memory_bytes > 0 ? " (memory limit too small?)" : ""));
    default:
      return Status::InvalidArgument("cannot execute " + program + ": " + why);
  }
}

// Clamps a requested limit to the runner's hard limit: raising it would fail with EPERM, and the
// runner's own limit applies anyway.
struct rlimit ClampedLimit(int resource, rlim_t soft, rlim_t hard) {
  struct rlimit current {};
  if (::getrlimit(resource, &current) == 0 && current.rlim_max != RLIM_INFINITY) {
    hard = std::min(hard, current.rlim_max);
    soft = std::min(soft, hard);
  }
  return {soft, hard};
}

bool MentionsAllocationFailure(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (std::string_view marker : {"memoryerror", "out of memory", "cannot allocate memory", "bad_alloc",
                                  "failed to allocate", "allocation failed"}) {
    if (lower.find(marker) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

Result<ProcessResult> RunProcess(const ProcessSpec& spec, const std::atomic<bool>* cancel) {
  CAIRN_RETURN_IF_ERROR(ValidateSpec(spec));
  CAIRN_ASSIGN_OR_RETURN(const std::string path, ResolveProgram(spec));

  std::vector<char*> argv;
  for (const std::string& arg : spec.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (const auto& [name, value] : spec.env) env_strings.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (std::string& entry : env_strings) envp.push_back(entry.data());
  envp.push_back(nullptr);

  Pipe in, out, err, res, report;
  for (Pipe* pipe : {&in, &out, &err, &res, &report}) {
    CAIRN_RETURN_IF_ERROR(OpenPipe(*pipe));
  }

  ChildPlan plan;
  plan.path = path.c_str();
  plan.argv = argv.data();
  plan.envp = envp.data();
  plan.cwd = spec.cwd.empty() ? nullptr : spec.cwd.c_str();
  plan.fds[0] = in.read.get();
  plan.fds[1] = out.write.get();
  plan.fds[2] = err.write.get();
  plan.fds[3] = res.write.get();
  plan.report_fd = report.write.get();
  plan.parent_pid = ::getpid();
  if (spec.cpu_seconds > 0) {
    // SIGXCPU at the soft limit, SIGKILL a second later for programs that catch SIGXCPU.
    const auto seconds = static_cast<rlim_t>(spec.cpu_seconds);
    plan.set_cpu = true;
    plan.cpu = ClampedLimit(RLIMIT_CPU, seconds, seconds + 1);
  }
  if (spec.memory_bytes > 0) {
    const auto bytes = static_cast<rlim_t>(spec.memory_bytes);
    plan.set_as = true;
    plan.as = ClampedLimit(RLIMIT_AS, bytes, bytes);
  }
  plan.default_action.sa_handler = SIG_DFL;
  sigemptyset(&plan.default_action.sa_mask);
  sigemptyset(&plan.empty_mask);
  struct rlimit nofile {};
  plan.fd_limit = ::getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur != RLIM_INFINITY
                      ? static_cast<int>(std::min<rlim_t>(nofile.rlim_cur, INT_MAX))
                      : 65536;

  // All signals stay blocked from fork until the child has reset their dispositions, so no
  // handler of the runner ever runs in the child.
  sigset_t all, saved;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &saved);
  const auto start = Clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) RunChild(plan);
  const int fork_errno = errno;
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  if (pid < 0) return Status::ResourceExhausted("cannot fork to run " + spec.argv[0] + ": " + ErrnoText(fork_errno));

  ChildReaper child(pid);
  // Also done in the child; whichever runs first wins, so kill(-pid) below always reaches the
  // group. Fails harmlessly (EACCES) once the child has exec'd.
  ::setpgid(pid, pid);
  // Without closing our copies of the child's ends, EOF would never come.
  in.read.Reset();
  out.write.Reset();
  err.write.Reset();
  res.write.Reset();
  report.write.Reset();

  ChildReport failure;
  size_t got = 0;
  while (got < sizeof failure) {
    const ssize_t n = ::read(report.read.get(), reinterpret_cast<char*>(&failure) + got, sizeof failure - got);
    if (n > 0) {
      got += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;  // EOF: execve succeeded
    }
  }
  report.read.Reset();
  if (got == sizeof failure) {
    child.Reap(nullptr);
    return StartFailure(failure, spec, path);
  }

  // A pidfd becomes readable when the child exits, so the poll loop needs no SIGCHLD handling.
  Fd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  for (const Fd* fd : {&in.write, &out.read, &err.read, &res.read}) SetNonBlocking(*fd);
  if (spec.stdin_data.empty()) in.write.Reset();

  ProcessResult result;
  size_t stdin_offset = 0;
  const bool has_deadline = spec.wall_timeout.count() > 0;
  // Clamped so that absurd timeouts cannot overflow the time_point arithmetic.
  const auto deadline = start + std::min<milliseconds>(spec.wall_timeout, std::chrono::hours(24 * 365));
  bool exited = false;
  Clock::time_point drain_until;
  std::vector<char> buffer(kChunk);

  // Reads one chunk (so a chatty child cannot starve the timeout check); closes `fd` at EOF.
  auto read_chunk = [&](Fd& fd) -> size_t {
    const ssize_t n = ::read(fd.get(), buffer.data(), buffer.size());
    if (n > 0) return static_cast<size_t>(n);
    if (n == 0 || (errno != EAGAIN && errno != EINTR)) fd.Reset();
    return 0;
  };

  while (true) {
    const auto now = Clock::now();
    const bool killed = result.timed_out || result.cancelled || result.result_truncated;
    if (!exited && !killed) {
      if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) {
        result.cancelled = true;
        child.KillGroup();
      } else if (has_deadline && now >= deadline) {
        result.timed_out = true;
        child.KillGroup();
      }
    }
    if (exited && ((!out.read.valid() && !err.read.valid() && !res.read.valid()) || now >= drain_until)) break;

    pollfd fds[5];
    nfds_t count = 0;
    auto add = [&](const Fd& fd, short events) -> int {
      if (!fd.valid()) return -1;
      fds[count] = {fd.get(), events, 0};
      return static_cast<int>(count++);
    };
    const int in_index = add(in.write, POLLOUT);
    const int out_index = add(out.read, POLLIN);
    const int err_index = add(err.read, POLLIN);
    const int res_index = add(res.read, POLLIN);
    const int pid_index = exited ? -1 : add(pidfd, POLLIN);

    auto wait = Clock::duration::max();
    if (exited) {
      wait = drain_until - now;
    } else {
      // Once killed, only the exit (pidfd) is awaited.
      if (has_deadline && !killed) wait = std::min(wait, Clock::duration(deadline - now));
      if (cancel != nullptr && !killed) wait = std::min<Clock::duration>(wait, kCancelPollInterval);
      if (!pidfd.valid()) wait = std::min<Clock::duration>(wait, kExitPollInterval);
    }
    int timeout_ms = -1;
    if (wait != Clock::duration::max()) {
      const auto ms = std::chrono::ceil<milliseconds>(std::max(wait, Clock::duration::zero())).count();
      timeout_ms = static_cast<int>(std::min<int64_t>(ms, INT_MAX));
    }
    if (::poll(fds, count, timeout_ms) < 0) {
      if (errno == EINTR) continue;
      return Status::Internal("poll failed while running " + spec.argv[0] + ": " + ErrnoText(errno));
    }

    if (in_index >= 0 && fds[in_index].revents != 0) {
      // Until the pipe is full; EPIPE means the child closed stdin unread, which is its business.
      while (stdin_offset < spec.stdin_data.size()) {
        const size_t len = std::min(spec.stdin_data.size() - stdin_offset, kChunk);
        const ssize_t n = WriteNoSigpipe(in.write.get(), spec.stdin_data.data() + stdin_offset, len);
        if (n > 0) {
          stdin_offset += static_cast<size_t>(n);
        } else if (n < 0 && errno == EINTR) {
          continue;
        } else {
          if (n < 0 && errno == EAGAIN) break;
          stdin_offset = spec.stdin_data.size();
        }
      }
      if (stdin_offset == spec.stdin_data.size()) in.write.Reset();
    }
    if (out_index >= 0 && fds[out_index].revents != 0) {
      const size_t n = read_chunk(out.read);
      AppendTail(result.stdout_tail, buffer.data(), n, spec.max_log_bytes);
    }
    if (err_index >= 0 && fds[err_index].revents != 0) {
      const size_t n = read_chunk(err.read);
      AppendTail(result.stderr_tail, buffer.data(), n, spec.max_log_bytes);
    }
    if (res_index >= 0 && fds[res_index].revents != 0) {
      const size_t n = read_chunk(res.read);
      const size_t room = spec.max_result_bytes - result.result.size();
      result.result.append(buffer.data(), std::min(n, room));
      if (n > room) {
        result.result_truncated = true;
        // Kill before closing: a child whose write failed with EPIPE first could exit on its own
        // (status 1 with SIGPIPE ignored) and the result would not read as killed.
        if (!exited) child.KillGroup();
        res.read.Reset();
      }
    }

    bool leader_done = false;
    if (!exited && pidfd.valid()) {
      leader_done = pid_index >= 0 && (fds[pid_index].revents & POLLIN) != 0;
    } else if (!exited) {
      siginfo_t info{};
      const int rc = ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
      leader_done = (rc == 0 && info.si_pid == pid) || (rc < 0 && errno == ECHILD);
    }
    if (leader_done) {
      exited = true;
      // Kill background leftovers of the group before reaping: the zombie leader keeps the group
      // id from being reused until then.
      ::kill(-pid, SIGKILL);
      child.Reap(&result);
      result.duration_ms = std::chrono::duration_cast<milliseconds>(Clock::now() - start).count();
      in.write.Reset();
      drain_until = Clock::now() + kDrainGrace;
    }
  }

  TrimTail(result.stdout_tail, spec.max_log_bytes);
  TrimTail(result.stderr_tail, spec.max_log_bytes);
  return result;
}

std::string DescribeFailure(const ProcessResult& result, const ProcessSpec& spec) {
  if (result.timed_out) return "timed out after " + std::to_string(spec.wall_timeout.count()) + " ms";
  if (result.cancelled) return "cancelled";
  if (result.result_truncated) {
    return "result exceeded " + std::to_string(spec.max_result_bytes) + " bytes; process killed";
  }
  if (result.term_signal == SIGXCPU) {
    return spec.cpu_seconds > 0 ? "cpu time limit exceeded (" + std::to_string(spec.cpu_seconds) + " s)"
                                : "cpu time limit exceeded (SIGXCPU)";
  }
  const std::string memory_hint =
      spec.memory_bytes > 0 ? "; memory limit of " + std::to_string(spec.memory_bytes) + " bytes may have been hit" : "";
  if (result.term_signal != 0) {
    const char* abbrev = ::sigabbrev_np(result.term_signal);
    std::string text = "killed by signal " + std::to_string(result.term_signal) + " (" +
                       (abbrev != nullptr ? "SIG" + std::string(abbrev) : std::string("unknown")) + ")";
    // The CPU hard limit (one second past the soft one) is enforced with SIGKILL.
    if (result.term_signal == SIGKILL && spec.cpu_seconds > 0) {
      text += "; cpu time limit of " + std::to_string(spec.cpu_seconds) + " s may have been hit";
    }
    return text + memory_hint;
  }
  if (result.exit_code == 0) return "";
  if (result.exit_code < 0) return "exit status unknown";
  std::string text = "exited with status " + std::to_string(result.exit_code);
  // Exiting non-zero is the normal way to fail, so blame the limit only on evidence.
  if (spec.memory_bytes > 0 && MentionsAllocationFailure(result.stderr_tail)) text += memory_hint;
  return text;
}

}  // namespace cairn::exec
