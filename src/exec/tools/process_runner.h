// Process tools: runs one program as a subprocess with a fixed I/O contract and resource limits.
//
// The child sees exactly four descriptors:
//   0  stdin   a pipe fed with ProcessSpec::stdin_data, then closed
//   1  stdout  a pipe; the runner keeps only the last max_log_bytes (a log, not the answer)
//   2  stderr  likewise
//   3  result  a pipe; everything written here (up to max_result_bytes) is the tool's answer
// Every other descriptor of the calling process is closed in the child. The program is executed
// directly (no shell), in its own process group, with exactly the environment given, and it can
// never gain privileges (PR_SET_NO_NEW_PRIVS: set-user-ID programs run without them).
//
// No process of a run outlives it: the child runs under a per-run keeper process, a child
// subreaper that inherits every descendant whose parent dies (double fork, setsid, daemons) and
// kills them all when the child exits or the run is stopped (process_keeper.h). RunProcess
// returns only once the keeper has exited, i.e. once every process of the run is gone.
//
// Thread-safe: any number of threads may call RunProcess at once. Requirements on the caller:
// SIGCHLD must not be set to SIG_IGN and no other thread may reap arbitrary children
// (waitpid(-1, ...)), since either would take the keeper's exit away from the runner.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace cairn::exec {

// Who the child runs as. For ids other than the runner's own, the runner must be root.
struct RunAs {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // the supplementary groups (set exactly: none inherited)
};

struct ProcessSpec {
  // argv[0] is the program. Without a '/', it is looked up in the PATH of `env` if `env` sets one,
  // else in the runner's own PATH, else in "/usr/local/bin:/usr/bin:/bin"; entries that are not
  // absolute (including the empty entry, meaning the current directory) are skipped. With a '/',
  // it is used as is; a relative path is then relative to `cwd`. There is no shell: a script
  // needs a "#!" line. Must not be empty.
  std::vector<std::string> argv;
  std::string cwd;  // empty: inherit the runner's working directory (entered as run_as)
  // The child's whole environment: nothing of the runner's environment is inherited. Names must be
  // non-empty and contain no '='; entries are passed in the order given.
  std::vector<std::pair<std::string, std::string>> env;
  std::string stdin_data;  // written to the child's stdin, then stdin is closed
  // Wall-clock limit from start to exit; every process of the run is then killed with SIGKILL.
  // Zero: no limit. Negative values are rejected.
  std::chrono::milliseconds wall_timeout{30000};
  // RLIMIT_CPU in seconds (the kernel sends SIGXCPU, then SIGKILL a second later). 0 = no limit.
  int64_t cpu_seconds = 0;
  // RLIMIT_DATA in bytes, for each process (heap and private writable mappings; allocations beyond
  // it fail and how the program reacts is up to it). Address space a runtime merely reserves does
  // not count, unlike RLIMIT_AS. 0 = none.
  int64_t memory_bytes = 0;
  // RLIMIT_NPROC: the kernel counts every process and thread of the child's real user id, not of
  // the run, and does not enforce it for root (CAP_SYS_RESOURCE). 0 = none.
  int64_t max_processes = 0;
  // Cap on what is read from fd 3. A child writing more is killed and result_truncated is set.
  size_t max_result_bytes = 1 << 20;
  // stdout and stderr each keep their last this-many bytes; older output is discarded.
  size_t max_log_bytes = 64 * 1024;
  // When set, the child drops to these ids (and groups) before exec.
  std::optional<RunAs> run_as;
};

struct ProcessResult {
  int exit_code = -1;      // the exit status when the child exited normally, else -1
  int term_signal = 0;     // the signal that killed the child (SIGKILL on timeout, SIGXCPU/SIGKILL
                           // for the CPU limit, SIGSEGV...), else 0
  bool timed_out = false;  // the wall timeout hit and every process of the run was killed
  bool cancelled = false;  // the cancel flag was seen and every process of the run was killed
  bool result_truncated = false;  // fd 3 output exceeded max_result_bytes (the run was killed)
  // The keeper died before it could report (killed by someone — a child running as the runner's
  // own user can do that); exit_code and term_signal are then unknown, and processes that left
  // the child's process group may have survived.
  bool keeper_lost = false;
  int leftovers = 0;              // processes other than the child still there at its end, killed
  std::string result;             // bytes the child wrote to fd 3 (at most max_result_bytes)
  std::string stdout_tail;        // the last max_log_bytes of stdout
  std::string stderr_tail;        // the last max_log_bytes of stderr
  int64_t duration_ms = 0;        // from start until the last process of the run was gone
};

// Runs the process described by `spec` to completion and returns what happened.
//
// Returns an error Status only when the process could not be started:
//   kInvalidArgument  empty argv, bad env name, NUL bytes, negative limits, a program that exists
//                     but cannot be executed (permissions, format), an unusable cwd
//   kNotFound         the program does not exist (the message names argv[0]), cwd does not exist
//   kResourceExhausted  no pipes or processes left, memory_bytes too small to even exec, or
//                     max_processes already reached by the run_as user
//   kInternal         any other failure to set up the child or its keeper (e.g. run_as refused)
// Everything after a successful exec (non-zero exit, death by signal, timeout, cancellation) is
// reported in the ProcessResult.
//
// `cancel` (may be null) is polled every few tens of milliseconds; once it is true every process
// of the run is killed and `cancelled` is set.
//
// When the child exits, every process it leaves behind is killed (see above), and the result says
// how many (`leftovers`). Output still buffered in the pipes is kept.
Result<ProcessResult> RunProcess(const ProcessSpec& spec, const std::atomic<bool>* cancel = nullptr);

// A one-line human reason for a failed result, naming the limit hit: "exited with status 3",
// "killed by signal 9 (SIGKILL)", "timed out after 500 ms", "cpu time limit exceeded (1 s)",
// "result exceeded the output limit of 1000 bytes; process killed". A memory or process limit
// leaves no trace but the program's own reaction, so those are named on evidence only: an
// allocation failure on stderr ("memory limit of 64 MiB reached"), death by SIGSEGV, SIGBUS or
// SIGABRT with a memory limit ("... may have been hit"), a failed fork on stderr with a process
// limit. It never claims more than is known. Empty if the process exited with status 0.
std::string DescribeFailure(const ProcessResult& result, const ProcessSpec& spec);

}  // namespace cairn::exec
