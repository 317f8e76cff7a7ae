// The keeper and the tool between fork and execve: async-signal-safe calls only (process_keeper.h).
#include "exec/tools/process_keeper.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

namespace cairn::exec {
namespace {

// The keeper's descriptors once set up: 0..3 are the tool's until it has started.
constexpr int kStatusFd = 4;
constexpr int kControlFd = 5;
constexpr int kFirstFreeFd = 6;
// While cleaning up, how long to wait for a SIGCHLD before listing the children again.
constexpr int kCleanupPollMs = 100;

struct ToolFailure {
  int stage = 0;
  int err = 0;
};

void WriteReport(const KeeperReport& report) {
  ssize_t n;
  do {
    n = ::write(kStatusFd, &report, sizeof report);
  } while (n < 0 && errno == EINTR);
}

[[noreturn]] void KeeperFail(int stage, int err) {
  KeeperReport report;
  report.kind = KeeperReport::kStartFailed;
  report.stage = stage;
  report.err = err;
  WriteReport(report);
  ::_exit(0);
}

[[noreturn]] void ToolFail(int report_fd, int stage) {
  ToolFailure failure{stage, errno};
  // Smaller than PIPE_BUF, hence atomic. If it fails, the keeper just sees exit status 127.
  ssize_t written = ::write(report_fd, &failure, sizeof failure);
  (void)written;
  ::_exit(127);
}

// The tool's side, from _Fork to execve. Its 0..3 are in place (not close-on-exec); `report_fd`
// closes at a successful execve, which the keeper reads as EOF.
[[noreturn]] void RunTool(const KeeperPlan& plan, int report_fd, pid_t keeper) {
  if (::setpgid(0, 0) != 0) ToolFail(report_fd, kStageSetpgid);
  if (plan.set_cpu && ::setrlimit(RLIMIT_CPU, &plan.cpu) != 0) ToolFail(report_fd, kStageRlimit);
  if (plan.set_data && ::setrlimit(RLIMIT_DATA, &plan.data) != 0) ToolFail(report_fd, kStageRlimit);
  if (plan.set_nproc && ::setrlimit(RLIMIT_NPROC, &plan.nproc) != 0) ToolFail(report_fd, kStageRlimit);
  if (plan.set_user) {
    // Raw system calls: they change this process only, without glibc's machinery that makes
    // every thread of a process change its ids (not async-signal-safe, and there are none here).
    if (::syscall(SYS_setgroups, plan.group_count, plan.groups) != 0 ||
        ::syscall(SYS_setresgid, plan.gid, plan.gid, plan.gid) != 0 ||
        ::syscall(SYS_setresuid, plan.uid, plan.uid, plan.uid) != 0) {
      ToolFail(report_fd, kStageUser);
    }
  }
  // No descendant may gain privileges through a set-user-ID or file-capability program: each one
  // then stays a process the keeper may kill.
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) ToolFail(report_fd, kStageUser);
  // Set after the ids change, which clears it. A keeper already gone means the run is over.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != keeper) ::_exit(127);
  if (plan.cwd != nullptr && ::chdir(plan.cwd) != 0) ToolFail(report_fd, kStageChdir);
  // The runner blocked all signals around fork; the program starts with none blocked.
  ::sigprocmask(SIG_SETMASK, &plan.empty_mask, nullptr);
  ::execve(plan.path, plan.argv, plan.envp);
  ToolFail(report_fd, kStageExec);
}

void DrainSignals(int signal_fd) {
  signalfd_siginfo info;
  while (::read(signal_fd, &info, sizeof info) > 0) {
  }
}

// While the tool runs: reaps orphans that ended on their own (each holds a pid until reaped), but
// only looks at the tool (WNOWAIT), so that its process group id stays reserved until the group
// is killed. True once the tool has exited.
bool ReapWhileRunning(pid_t tool) {
  while (true) {
    siginfo_t info{};
    if (::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0) return false;
    if (info.si_pid == tool) return true;
    ::waitpid(info.si_pid, nullptr, WNOHANG);
  }
}

// SIGKILL to every child listed in /proc/thread-self/children (the keeper has one thread, so
// that is every child). False when the list cannot be read.
bool KillListedChildren() {
  const int fd = ::open("/proc/thread-self/children", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buffer[512];
  long pid = 0;
  bool in_number = false;
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; ++i) {
      const char c = buffer[i];
      if (c >= '0' && c <= '9') {
        pid = pid * 10 + (c - '0');
        in_number = true;
      } else {
        if (in_number && pid > 0) ::kill(static_cast<pid_t>(pid), SIGKILL);
        pid = 0;
        in_number = false;
      }
    }
  }
  if (in_number && pid > 0) ::kill(static_cast<pid_t>(pid), SIGKILL);
  ::close(fd);
  return true;
}

// Kills every process left of the run and reaps it (see the header); fills the tool's status and
// the count of other processes reaped.
void KillEverything(pid_t tool, int signal_fd, KeeperReport& report) {
  // The group first: one call reaches every process that stayed in it. The tool is not reaped
  // yet, so its group id cannot have been reused.
  ::kill(-tool, SIGKILL);
  ::kill(tool, SIGKILL);
  auto note = [&](pid_t pid, int status) {
    if (pid == tool) {
      report.wait_status = status;
      report.status_known = 1;
    } else {
      ++report.leftovers;
    }
  };
  while (true) {
    const bool listed = KillListedChildren();
    while (true) {
      int status = 0;
      const pid_t pid = ::waitpid(-1, &status, WNOHANG);
      if (pid > 0) {
        note(pid, status);
      } else if (pid < 0 && errno == EINTR) {
        continue;
      } else if (pid < 0) {
        return;  // ECHILD: no child at all, so no descendant either
      } else {
        break;  // children still running
      }
    }
    if (!listed) {
      // Only the group could be killed: wait for the tool, leave the rest to init.
      int status = 0;
      pid_t pid;
      if (!report.status_known) {
        do {
          pid = ::waitpid(tool, &status, 0);
        } while (pid < 0 && errno == EINTR);
        if (pid == tool) note(pid, status);
      }
      while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) note(pid, status);
      return;
    }
    // Killed processes end soon; their children, now ours, are listed in the next round.
    pollfd wake{signal_fd, POLLIN, 0};
    ::poll(&wake, 1, kCleanupPollMs);
    DrainSignals(signal_fd);
  }
}

}  // namespace

void RunKeeper(const KeeperPlan& plan) {
  // execve resets handlers but keeps ignored signals ignored (the runner may ignore SIGPIPE, which
  // would then break `yes | head` in the tool; SIGCHLD ignored would reap behind our back), and a
  // runner's handler must not run here: so default everything. Fails for SIGKILL/SIGSTOP, which
  // is fine. All signals stay blocked in the keeper: it reads SIGCHLD from a signalfd.
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

  // The six descriptors may have any numbers, including 0..5, so first copy them all above 5;
  // then no dup2 below can overwrite one still needed. Everything else inherited (the runner's
  // descriptors, other runs' pipes) is closed: the keeper never execs.
  const int wanted[6] = {plan.fds[0], plan.fds[1], plan.fds[2], plan.fds[3], plan.status_fd, plan.control_fd};
  int high[6];
  for (int i = 0; i < 6; ++i) {
    high[i] = ::fcntl(wanted[i], F_DUPFD_CLOEXEC, kFirstFreeFd);
    if (high[i] < 0) ::_exit(127);
  }
  for (int i = 0; i < 6; ++i) {
    if (::dup2(high[i], i) < 0) ::_exit(127);  // the copy is not close-on-exec
  }
  if (::close_range(kFirstFreeFd, ~0U, 0) != 0) {
    for (int fd = kFirstFreeFd; fd < plan.fd_limit; ++fd) ::close(fd);
  }
  // The tool must not inherit the keeper's own pipes.
  ::fcntl(kStatusFd, F_SETFD, FD_CLOEXEC);
  ::fcntl(kControlFd, F_SETFD, FD_CLOEXEC);

  if (::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) KeeperFail(kStageKeeper, errno);
  sigset_t child_signal;
  sigemptyset(&child_signal);
  sigaddset(&child_signal, SIGCHLD);
  const int signal_fd = ::signalfd(-1, &child_signal, SFD_CLOEXEC | SFD_NONBLOCK);
  if (signal_fd < 0) KeeperFail(kStageKeeper, errno);
  int report_pipe[2];
  if (::pipe2(report_pipe, O_CLOEXEC) != 0) KeeperFail(kStageKeeper, errno);

  const pid_t keeper = ::getpid();
  // _Fork: no atfork handlers, which may take locks another thread of the runner held at the
  // first fork.
  const pid_t tool = ::_Fork();
  if (tool < 0) KeeperFail(kStageFork, errno);
  if (tool == 0) {
    ::close(kStatusFd);
    ::close(kControlFd);
    ::close(signal_fd);
    ::close(report_pipe[0]);
    RunTool(plan, report_pipe[1], keeper);
  }
  // Also done in the tool; whichever runs first wins, so kill(-tool) always reaches the group.
  ::setpgid(tool, tool);
  // Without closing our copies of the tool's ends, its pipes would never reach EOF.
  for (int fd = 0; fd < 4; ++fd) ::close(fd);
  ::close(report_pipe[1]);

  ToolFailure failure;
  size_t got = 0;
  while (got < sizeof failure) {
    const ssize_t n = ::read(report_pipe[0], reinterpret_cast<char*>(&failure) + got, sizeof failure - got);
    if (n > 0) {
      got += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;  // EOF: execve succeeded
    }
  }
  ::close(report_pipe[0]);
  if (got == sizeof failure) {
    while (::waitpid(tool, nullptr, 0) < 0 && errno == EINTR) {
    }
    KeeperFail(failure.stage, failure.err);
  }
  KeeperReport started;
  started.kind = KeeperReport::kStarted;
  started.tool_pid = tool;
  WriteReport(started);

  // Until the tool exits or the runner asks (a byte) or is gone (EOF).
  while (!ReapWhileRunning(tool)) {
    pollfd fds[2] = {{kControlFd, POLLIN, 0}, {signal_fd, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[0].revents != 0) break;
    DrainSignals(signal_fd);
  }

  KeeperReport finished;
  finished.kind = KeeperReport::kFinished;
  finished.tool_pid = tool;
  KillEverything(tool, signal_fd, finished);
  WriteReport(finished);
  ::_exit(0);
}

bool ProcessChildrenListAvailable() { return ::access("/proc/thread-self/children", R_OK) == 0; }

}  // namespace cairn::exec
