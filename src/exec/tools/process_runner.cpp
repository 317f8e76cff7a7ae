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

#include "exec/tools/process_launch.h"

namespace cairn::exec {
namespace {

using namespace process_internal;  // NOLINT: this file is its other half

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kCancelPollInterval{20};
constexpr milliseconds kExitPollInterval{10};  // only when pidfd_open is unavailable
// After the keeper exits, how long to keep reading pipes still held open: only processes the
// keeper could not reach (it was killed, or /proc lists no children) can still hold them.
constexpr milliseconds kDrainGrace{500};
constexpr size_t kChunk = 64 * 1024;  // the default pipe capacity

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
  CAIRN_ASSIGN_OR_RETURN(LaunchedProcess launched, LaunchProcess(spec));
  KeeperHandle& keeper = *launched.keeper;
  const pid_t pid = keeper.pid();
  const pid_t tool_pid = launched.tool_pid;
  const auto start = launched.start;
  Pipe in, out, err, res, status;
  in.write = std::move(launched.stdin_write);
  out.read = std::move(launched.stdout_read);
  err.read = std::move(launched.stderr_read);
  res.read = std::move(launched.result_read);
  status.read = std::move(launched.status_read);

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
