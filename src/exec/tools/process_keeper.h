// The processes between RunProcess (process_runner.h) and the tool, and what they tell it.
//
//   runner thread ──fork──> keeper ──_Fork──> tool ──> ... every descendant
//
// The keeper is a child subreaper (PR_SET_CHILD_SUBREAPER): a descendant of the tool whose parent
// dies — a double fork, a daemon, a `setsid` child — becomes the keeper's child instead of init's.
// It starts the tool, reports, and reaps orphans while the tool runs. When the tool exits, or the
// runner asks (a byte on the control pipe, or its EOF: the runner is gone), it kills what is left:
// the tool's process group, then, until it has no child at all, every child listed in
// /proc/thread-self/children (a killed process's own children become the keeper's), reaping each.
// Then it reports how the tool ended and exits, so that once the keeper has exited, no process
// of the run is left. (Without /proc/thread-self/children only the process group is killed; see
// ProcessChildrenListAvailable.)
//
// Both run in the child of a multithreaded program: async-signal-safe calls only, no allocation.
// Everything they need is prepared before fork in a KeeperPlan.
#pragma once

#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <cstddef>

namespace cairn::exec {

// The step that failed before the tool's execve.
enum ChildStage : int {
  kStageFds = 1,
  kStageSetpgid,
  kStageRlimit,
  kStageUser,
  kStageChdir,
  kStageExec,
  kStageKeeper,  // the keeper's own set-up (subreaper, signalfd, pipe)
  kStageFork,    // the keeper could not fork the tool
};

// What the keeper writes on the status pipe: kStarted or kStartFailed once, then kFinished.
// Smaller than PIPE_BUF, so each write is atomic.
struct KeeperReport {
  enum Kind : int { kNone = 0, kStarted, kStartFailed, kFinished };
  int kind = kNone;
  int stage = 0;         // kStartFailed: a ChildStage
  int err = 0;           // kStartFailed: its errno
  int tool_pid = 0;      // kStarted
  int wait_status = 0;   // kFinished: the tool's waitpid status, when status_known
  int status_known = 0;  // kFinished
  int leftovers = 0;     // kFinished: processes still running after the tool ended, killed
};

struct KeeperPlan {
  const char* path = nullptr;  // resolved program
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  const char* cwd = nullptr;      // null: inherit
  int fds[4] = {-1, -1, -1, -1};  // become the tool's 0, 1, 2, 3
  int status_fd = -1;             // keeper -> runner (KeeperReport)
  int control_fd = -1;            // runner -> keeper: readable (a byte or EOF) means "kill now"
  bool set_cpu = false;
  struct rlimit cpu {};
  bool set_data = false;
  struct rlimit data {};
  bool set_nproc = false;
  struct rlimit nproc {};
  bool set_user = false;  // setgroups/setgid/setuid before exec
  uid_t uid = 0;
  gid_t gid = 0;
  const gid_t* groups = nullptr;
  size_t group_count = 0;
  struct sigaction default_action {};
  sigset_t empty_mask{};
  int fd_limit = 0;  // for the close loop when close_range is unavailable
};

// The keeper's body: never returns. Exits 0 after reporting (any outcome of the tool), 127 when
// it could not even set up its status pipe (the runner then sees EOF without a report).
[[noreturn]] void RunKeeper(const KeeperPlan& plan);

// Whether this kernel lists a thread's children in /proc (CONFIG_PROC_CHILDREN), which the
// keeper needs to find descendants that left the tool's process group.
bool ProcessChildrenListAvailable();

}  // namespace cairn::exec
