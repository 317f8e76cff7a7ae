// ServerProcess: runs the real `cairn serve` binary for an end-to-end test.
//
//   ServerProcess server({"--max-body-bytes", "4096"});
//   ASSERT_TRUE(server.Start()) << server.error();
//   HttpClient client(server.port());
//   ...
//   EXPECT_EQ(server.Stop(), 0);         // SIGTERM, then the exit code
//   ASSERT_TRUE(server.Start());         // again, on the same data dir, on a new port
//
// Each instance owns a fresh temporary directory (tests/support TempDir) holding the data dir, the port file
// and the server's log (stdout and stderr). The server is started with fork/exec (no shell) on
// 127.0.0.1:0; the harness learns the port from the port file, which the server writes
// atomically (FILE.tmp, then rename), by watching the directory with inotify, with a timeout.
// The directory is removed by the destructor unless CAIRN_E2E_KEEP is set in the environment.
// A server still running when the instance is destroyed is killed with SIGKILL; the child also
// gets SIGKILL if the test process dies (PR_SET_PDEATHSIG), so no server outlives its test.
// SetResourceLimit() sets a limit (setrlimit) in the child before exec, e.g. a low open-file
// limit to run the server out of descriptors.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "support/temp_dir.h"

namespace cairn::e2e {

// The path of the binary under test: $CAIRN_E2E_BINARY if set, else the build's cairn.
std::string CairnBinary();

class ServerProcess {
 public:
  // `extra_args` are appended to `serve --listen 127.0.0.1:0 --data-dir D --port-file F
  // --log-level warn --builtin-tools=false --default-agent=false`, e.g. {"--max-body-bytes", "4096"} (a later flag wins:
  // tests of tools pass --builtin-tools=true; the others start with an empty store).
  explicit ServerProcess(std::vector<std::string> extra_args = {});
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // Starts the server (on the same data dir as any previous run) and waits until the port file
  // appears. False (with error()) if the binary cannot be started, exits early or times out.
  bool Start(std::chrono::milliseconds timeout = std::chrono::seconds(60));

  // SIGTERM (or `signal`), then waits for the process. Returns its exit code, or 128 + signal
  // number if a signal ended it, or -1 if it did not end within `timeout` (it is then killed).
  int Stop(int signal = 15, std::chrono::milliseconds timeout = std::chrono::seconds(60));

  // SIGKILL and reap: a crash as far as the server is concerned.
  void Kill9();

  // For the next Start()s: the child sets `resource` (RLIMIT_NOFILE, RLIMIT_AS, ...) to
  // `soft`/`hard` before exec. A limit the child cannot set makes Start() fail.
  void SetResourceLimit(int resource, rlim_t soft, rlim_t hard);

  // For the next Start()s: `args` are appended after the others (a later flag wins), e.g. another
  // --embedder for a restart.
  void AppendArgs(const std::vector<std::string>& args) { extra_args_.insert(extra_args_.end(), args.begin(), args.end()); }

  // Stop() (graceful) then Start() on the same data dir. Returns Start()'s result; the exit code
  // of the stop is in last_exit_code().
  bool Restart();

  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  int port() const { return port_; }
  // The server's base URL, "http://127.0.0.1:<port>" (for clients that take a URL).
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  const std::string& data_dir() const { return data_dir_; }
  const std::string& root_dir() const { return root_dir_; }
  // The server's stdout and stderr, appended to across runs.
  const std::string& log_path() const { return log_file_; }
  const std::string& error() const { return error_; }
  std::optional<int> last_exit_code() const { return last_exit_code_; }

  // The server's stdout and stderr so far (all runs), at most the last `max_bytes`.
  std::string LogTail(size_t max_bytes = 8192) const;

 private:
  // Waits for the child to end for at most `timeout`; returns the decoded status or nullopt.
  std::optional<int> WaitForExit(std::chrono::milliseconds timeout);

  std::vector<std::string> extra_args_;
  std::vector<std::pair<int, rlimit>> limits_;
  test_support::TempDir root_;
  std::string root_dir_;
  std::string data_dir_;
  std::string port_file_;
  std::string log_file_;
  pid_t pid_ = -1;
  int pidfd_ = -1;
  int port_ = 0;
  std::string error_;
  std::optional<int> last_exit_code_;
};

}  // namespace cairn::e2e
