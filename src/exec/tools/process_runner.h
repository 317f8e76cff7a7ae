// Process tools: runs one program as a subprocess with a fixed I/O contract and resource limits.
//
// The child sees exactly four descriptors:
//   0  stdin   a pipe fed with ProcessSpec::stdin_data, then closed
//   1  stdout  a pipe; the runner keeps only the last max_log_bytes (a log, not the answer)
//   2  stderr  likewise
//   3  result  a pipe; everything written here (up to max_result_bytes) is the tool's answer
// Every other descriptor of the calling process is closed in the child. The program is executed
// directly (no shell), in its own process group, with exactly the environment given.
//
// Thread-safe: any number of threads may call RunProcess at once. Requirements on the caller:
// SIGCHLD must not be set to SIG_IGN and no other thread may reap arbitrary children
// (waitpid(-1, ...)), since either would take the child's exit status away from the runner.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace cairn::exec {

struct ProcessSpec {
  // argv[0] is the program. Without a '/', it is looked up in the PATH of `env` if `env` sets one,
  // else in the runner's own PATH, else in "/usr/local/bin:/usr/bin:/bin"; entries that are not
  // absolute (including the empty entry, meaning the current directory) are skipped. With a '/',
  // it is used as is; a relative path is then relative to `cwd`. There is no shell: a script
  // needs a "#!" line. Must not be empty.
  std::vector<std::string> argv;
  std::string cwd;  // empty: inherit the runner's working directory
  // The child's whole environment: nothing of the runner's environment is inherited. Names must be
  // non-empty and contain no '='; entries are passed in the order given.
  std::vector<std::pair<std::string, std::string>> env;
  std::string stdin_data;  // written to the child's stdin, then stdin is closed
  // Wall-clock limit from start to exit; the child's whole process group is then killed with
  // SIGKILL. Zero: no limit. Negative values are rejected.
  std::chrono::milliseconds wall_timeout{30000};
  // RLIMIT_CPU in seconds (the kernel sends SIGXCPU, then SIGKILL a second later). 0 = no limit.
  int64_t cpu_seconds = 0;
  // RLIMIT_AS in bytes (allocations beyond it fail; how the program reacts is up to it). 0 = none.
  int64_t memory_bytes = 0;
  // Cap on what is read from fd 3. A child writing more is killed and result_truncated is set.
  size_t max_result_bytes = 1 << 20;
  // stdout and stderr each keep their last this-many bytes; older output is discarded.
  size_t max_log_bytes = 64 * 1024;
};

struct ProcessResult {
  int exit_code = -1;      // the exit status when the child exited normally, else -1
  int term_signal = 0;     // the signal that killed the child (SIGKILL on timeout, SIGXCPU/SIGKILL
                           // for the CPU limit, SIGSEGV...), else 0
  bool timed_out = false;  // the wall timeout hit and the child's whole process group was killed
  bool cancelled = false;  // the cancel flag was seen and the child's process group was killed
  bool result_truncated = false;  // fd 3 output exceeded max_result_bytes (the child was killed)
  std::string result;             // bytes the child wrote to fd 3 (at most max_result_bytes)
  std::string stdout_tail;        // the last max_log_bytes of stdout
  std::string stderr_tail;        // the last max_log_bytes of stderr
  int64_t duration_ms = 0;        // from start until the child exited
};

// Runs the process described by `spec` to completion and returns what happened.
//
// Returns an error Status only when the process could not be started:
//   kInvalidArgument  empty argv, bad env name, NUL bytes, negative limits, a program that exists
//                     but cannot be executed (permissions, format), an unusable cwd
//   kNotFound         the program does not exist (the message names argv[0]), cwd does not exist
//   kResourceExhausted  no pipes or processes left, or memory_bytes too small to even exec
//   kInternal         any other failure to set up the child
// Everything after a successful exec (non-zero exit, death by signal, timeout, cancellation) is
// reported in the ProcessResult.
//
// `cancel` (may be null) is polled every few tens of milliseconds; once it is true the child's
// process group is killed and `cancelled` is set.
//
// When the child exits, whatever is left in its process group (background children) is killed:
// a tool call leaves no stray processes behind. Output still buffered in the pipes is kept.
// Processes that left the group (setsid) and keep stdout/stderr/fd 3 open are not waited for
// beyond a short grace period.
Result<ProcessResult> RunProcess(const ProcessSpec& spec, const std::atomic<bool>* cancel = nullptr);

// A one-line human reason for a failed result, e.g. "exited with status 3", "killed by signal 9
// (SIGKILL)", "timed out after 500 ms", "cpu time limit exceeded (1 s)". When the child died by a
// signal (or exited with an allocation error on stderr) and spec.memory_bytes was set, the reason
// says that the memory limit may have been hit; it never claims more than is known.
// Empty if the process exited with status 0.
std::string DescribeFailure(const ProcessResult& result, const ProcessSpec& spec);

}  // namespace cairn::exec
