// fork + execve with pipes, driven by one poll() loop in the calling thread.
//
// The runner forks a keeper per run (process_keeper.h), which forks the program and cleans up
// after it; this file is the runner's side: it prepares the KeeperPlan (argv/envp arrays, the
// resolved program path, rlimits, ids, signal sets) before fork, feeds stdin, collects the pipes,
// enforces the timeout, cancellation and the result cap by asking the keeper to kill the run,
// and reads the keeper's reports.
#include "exec/tools/process_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <initializer_list>
#include <string_view>

#include "exec/tools/process_keeper.h"

namespace cairn::exec {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kCancelPollInterval{20};
constexpr milliseconds kExitPollInterval{10};  // only when pidfd_open is unavailable
// After the keeper exits, how long to keep reading pipes still held open: only processes the
// keeper could not reach (it was killed, or /proc lists no children) can still hold them.
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

void KeeperHandle::StopRun() {
  if (!control_.valid()) return;
  const char byte = 'k';
  // A full pipe cannot happen (one byte, once); EPIPE means the keeper is already gone.
  ssize_t n;
  do {
    n = WriteNoSigpipe(control_.get(), &byte, 1);
  } while (n < 0 && errno == EINTR);
}

// Reads one KeeperReport from `fd`; kNone at EOF (the keeper died without reporting).
KeeperReport ReadReport(int fd) {
  KeeperReport report;
  size_t got = 0;
  while (got < sizeof report) {
    const ssize_t n = ::read(fd, reinterpret_cast<char*>(&report) + got, sizeof report - got);
    if (n > 0) {
      got += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;
    }
  }
  if (got != sizeof report) return KeeperReport{};
  return report;
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
  if (spec.wall_timeout.count() < 0 || spec.cpu_seconds < 0 || spec.memory_bytes < 0 || spec.max_processes < 0) {
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

Status StartFailure(const KeeperReport& report, const ProcessSpec& spec, const std::string& path) {
  const std::string& program = spec.argv[0];
  const std::string why = ErrnoText(report.err);
  switch (report.stage) {
    case kStageChdir:
      if (report.err == ENOENT || report.err == ENOTDIR) {
        return Status::NotFound("working directory does not exist: " + spec.cwd);
      }
      return Status::InvalidArgument("cannot use working directory " + spec.cwd + ": " + why);
    case kStageFork:
      return Status::ResourceExhausted("cannot fork to run " + program + ": " + why);
    case kStageUser:
      return Status::Internal("cannot run " + program + " as uid " +
                              std::to_string(spec.run_as ? spec.run_as->uid : ::getuid()) + ": " + why);
    case kStageExec:
      break;
    default:
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
    case EAGAIN:
      // execve after a change of user refuses when that user is over RLIMIT_NPROC.
      if (spec.max_processes > 0 && spec.run_as) {
        return Status::ResourceExhausted("cannot start " + program + ": the process limit of " +
                                         std::to_string(spec.max_processes) + " is reached (counted per user)");
      }
      [[fallthrough]];
    case ENOMEM:
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

bool Mentions(std::string_view text, std::initializer_list<std::string_view> markers) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (std::string_view marker : markers) {
    if (lower.find(marker) != std::string::npos) return true;
  }
  return false;
}

bool MentionsAllocationFailure(std::string_view text) {
  return Mentions(text, {"memoryerror", "out of memory", "cannot allocate memory", "bad_alloc", "failed to allocate",
                         "allocation failed", "xmalloc: cannot allocate"});
}

// What shells and runtimes print when fork/clone/pthread_create fails with EAGAIN.
bool MentionsForkFailure(std::string_view text) {
  return Mentions(text, {"cannot fork", "can't fork", "fork: retry", "fork failed", "resource temporarily unavailable",
                         "blockingioerror", "can't start new thread"});
}

// "64 MiB" when whole mebibytes, else bytes.
std::string Bytes(int64_t bytes) {
  if (bytes > 0 && bytes % (1024 * 1024) == 0) return std::to_string(bytes / (1024 * 1024)) + " MiB";
  return std::to_string(bytes) + " bytes";
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

  Pipe in, out, err, res, status, control;
  for (Pipe* pipe : {&in, &out, &err, &res, &status, &control}) {
    CAIRN_RETURN_IF_ERROR(OpenPipe(*pipe));
  }

  KeeperPlan plan;
  plan.path = path.c_str();
  plan.argv = argv.data();
  plan.envp = envp.data();
  plan.cwd = spec.cwd.empty() ? nullptr : spec.cwd.c_str();
  plan.fds[0] = in.read.get();
  plan.fds[1] = out.write.get();
  plan.fds[2] = err.write.get();
  plan.fds[3] = res.write.get();
  plan.status_fd = status.write.get();
  plan.control_fd = control.read.get();
  if (spec.cpu_seconds > 0) {
    // SIGXCPU at the soft limit, SIGKILL a second later for programs that catch SIGXCPU.
    const auto seconds = static_cast<rlim_t>(spec.cpu_seconds);
    plan.set_cpu = true;
    plan.cpu = ClampedLimit(RLIMIT_CPU, seconds, seconds + 1);
  }
  if (spec.memory_bytes > 0) {
    const auto bytes = static_cast<rlim_t>(spec.memory_bytes);
    plan.set_data = true;
    plan.data = ClampedLimit(RLIMIT_DATA, bytes, bytes);
  }
  if (spec.max_processes > 0) {
    const auto count = static_cast<rlim_t>(spec.max_processes);
    plan.set_nproc = true;
    plan.nproc = ClampedLimit(RLIMIT_NPROC, count, count);
  }
  if (spec.run_as) {
    plan.set_user = true;
    plan.uid = spec.run_as->uid;
    plan.gid = spec.run_as->gid;
    plan.groups = spec.run_as->groups.data();
    plan.group_count = spec.run_as->groups.size();
  }
  plan.default_action.sa_handler = SIG_DFL;
  sigemptyset(&plan.default_action.sa_mask);
  sigemptyset(&plan.empty_mask);
  struct rlimit nofile {};
  plan.fd_limit = ::getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur != RLIM_INFINITY
                      ? static_cast<int>(std::min<rlim_t>(nofile.rlim_cur, INT_MAX))
                      : 65536;

  // All signals stay blocked from fork on in the keeper (it reads SIGCHLD from a signalfd), and
  // in the program until it has reset their dispositions, so no handler of the runner ever runs
  // in either.
  sigset_t all, saved;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &saved);
  const auto start = Clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) RunKeeper(plan);
  const int fork_errno = errno;
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  if (pid < 0) return Status::ResourceExhausted("cannot fork to run " + spec.argv[0] + ": " + ErrnoText(fork_errno));

  KeeperHandle keeper(pid, std::move(control.write));
  // Without closing our copies of the child's ends, EOF would never come.
  in.read.Reset();
  out.write.Reset();
  err.write.Reset();
  res.write.Reset();
  status.write.Reset();
  control.read.Reset();

  const KeeperReport first = ReadReport(status.read.get());
  if (first.kind != KeeperReport::kStarted) {
    const int keeper_status = keeper.Reap();
    if (first.kind == KeeperReport::kStartFailed) return StartFailure(first, spec, path);
    return Status::Internal("the process keeper for " + spec.argv[0] + " ended before starting it (wait status " +
                            std::to_string(keeper_status) + ")");
  }
  const pid_t tool_pid = first.tool_pid;

  // A pidfd becomes readable when the keeper exits, so the poll loop needs no SIGCHLD handling.
  Fd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  for (const Fd* fd : {&in.write, &out.read, &err.read, &res.read, &status.read}) SetNonBlocking(*fd);
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
        keeper.StopRun();
      } else if (has_deadline && now >= deadline) {
        result.timed_out = true;
        keeper.StopRun();
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
      // Once killed, only the keeper's exit (pidfd) is awaited.
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
        // Stop before closing: a child whose write failed with EPIPE first could exit on its own
        // (status 1 with SIGPIPE ignored) and the result would not read as killed.
        if (!exited) keeper.StopRun();
        res.read.Reset();
      }
    }

    bool keeper_done = false;
    if (!exited && pidfd.valid()) {
      keeper_done = pid_index >= 0 && (fds[pid_index].revents & POLLIN) != 0;
    } else if (!exited) {
      siginfo_t info{};
      const int rc = ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
      keeper_done = (rc == 0 && info.si_pid == pid) || (rc < 0 && errno == ECHILD);
    }
    if (keeper_done) {
      exited = true;
      // Written before the keeper exited, so it is complete in the pipe if it was written at all.
      const KeeperReport last = ReadReport(status.read.get());
      keeper.Reap();
      result.duration_ms = std::chrono::duration_cast<milliseconds>(Clock::now() - start).count();
      if (last.kind == KeeperReport::kFinished) {
        if (last.status_known != 0 && WIFEXITED(last.wait_status)) result.exit_code = WEXITSTATUS(last.wait_status);
        if (last.status_known != 0 && WIFSIGNALED(last.wait_status)) result.term_signal = WTERMSIG(last.wait_status);
        result.leftovers = last.leftovers;
      } else {
        // Killed before it could clean up. Its group is all that can still be reached (the
        // program's pid cannot have been reused while that group has members).
        result.keeper_lost = true;
        ::kill(-tool_pid, SIGKILL);
      }
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
    return "result exceeded the output limit of " + std::to_string(spec.max_result_bytes) + " bytes; process killed";
  }
  if (result.keeper_lost) {
    return "its keeper process was killed, so how it ended is unknown and processes it started may have survived";
  }
  if (result.term_signal == SIGXCPU) {
    return spec.cpu_seconds > 0 ? "cpu time limit exceeded (" + std::to_string(spec.cpu_seconds) + " s)"
                                : "cpu time limit exceeded (SIGXCPU)";
  }
  const bool allocation_failed = spec.memory_bytes > 0 && MentionsAllocationFailure(result.stderr_tail);
  const std::string memory_limit = "memory limit of " + Bytes(spec.memory_bytes);
  // Exiting non-zero or crashing is the normal way to fail, so blame a limit only on evidence.
  std::string hint;
  if (allocation_failed) {
    hint = "; " + memory_limit + " reached (an allocation failed)";
  } else if (spec.max_processes > 0 && MentionsForkFailure(result.stderr_tail)) {
    hint = "; process limit of " + std::to_string(spec.max_processes) +
           " may have been hit (it counts every process of the user)";
  }
  if (result.term_signal != 0) {
    const char* abbrev = ::sigabbrev_np(result.term_signal);
    std::string text = "killed by signal " + std::to_string(result.term_signal) + " (" +
                       (abbrev != nullptr ? "SIG" + std::string(abbrev) : std::string("unknown")) + ")";
    // The CPU hard limit (one second past the soft one) is enforced with SIGKILL.
    if (result.term_signal == SIGKILL && spec.cpu_seconds > 0) {
      text += "; cpu time limit of " + std::to_string(spec.cpu_seconds) + " s may have been hit";
    }
    // Programs that do not check allocations crash or abort when one fails.
    const bool crash = result.term_signal == SIGSEGV || result.term_signal == SIGBUS || result.term_signal == SIGABRT;
    if (hint.empty() && crash && spec.memory_bytes > 0) hint = "; " + memory_limit + " may have been hit";
    return text + hint;
  }
  if (result.exit_code == 0) return "";
  if (result.exit_code < 0) return "exit status unknown";
  return "exited with status " + std::to_string(result.exit_code) + hint;
}

}  // namespace cairn::exec
