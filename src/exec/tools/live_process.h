// LiveProcess: a long-lived child spoken to over its stdin and stdout (an MCP stdio server,
// exec/mcp), started and bounded exactly like a process tool's run (process_runner.h): the same
// keeper (no process it starts outlives it), the same rlimits, user and environment from the
// ProcessSpec. spec.wall_timeout and spec.stdin_data are ignored: it lives until Stop() or until
// it exits; fd 3 is given to the child and never read.
//
// Thread-safety: one thread reads (ReadLine), any thread writes (Write is serialised) or stops.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "exec/tools/process_runner.h"

namespace cairn::exec {

namespace process_internal {
struct LaunchedProcess;
}

class LiveProcess {
 public:
  // The errors of RunProcess when the program cannot be started.
  static Result<std::unique_ptr<LiveProcess>> Start(const ProcessSpec& spec);
  ~LiveProcess();  // Stop()s and waits until every process of it is gone
  LiveProcess(const LiveProcess&) = delete;
  LiveProcess& operator=(const LiveProcess&) = delete;

  // Writes all of `data` to the child's stdin within `timeout`. kUnavailable when the child no
  // longer reads it (closed, exited, stopped) or the timeout passed with the pipe still full.
  Status Write(std::string_view data, std::chrono::milliseconds timeout);

  // The next line of stdout, without its '\n'. Blocks until one is complete; nullopt once stdout
  // ends (the child exited or was stopped). A line longer than `max_bytes` is kPayloadTooLarge
  // (the rest of that line is skipped, so the next call reads the next one). stderr is collected
  // meanwhile (StderrTail).
  Result<std::optional<std::string>> ReadLine(size_t max_bytes);

  // Kills every process of it (asynchronously; ReadLine then sees the end of stdout). Idempotent.
  void Stop();

  // The last bytes the child wrote on stderr (at most spec.max_log_bytes).
  std::string StderrTail() const;

 private:
  explicit LiveProcess(size_t max_log_bytes);
  struct State;
  std::unique_ptr<State> state_;
  size_t max_log_bytes_;
  std::string pending_;        // stdout read past the last line (reader thread only)
  bool skipping_ = false;      // inside a line too long to keep (reader thread only)
  mutable std::mutex log_mu_;
  std::string stderr_tail_;
  std::mutex write_mu_;
};

}  // namespace cairn::exec
