// ServerUnderTest: a real `cairn serve` for the client end-to-end tests.
//
// Owns a fresh mkdtemp directory with the data dir, the port file and the server log. Start()
// runs `cairn serve --listen 127.0.0.1:0 --data-dir D --port-file F --log-level warn` with
// fork/exec and waits, with inotify (no sleeping), until the server renames its port file into
// place; it fails early if the server exits first. Stop() sends SIGTERM and reaps. The destructor
// stops a running server and removes the directory (kept when CAIRN_E2E_KEEP is set).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>

namespace cairn::cli_e2e {

class ServerUnderTest {
 public:
  explicit ServerUnderTest(std::string binary);
  ~ServerUnderTest();
  ServerUnderTest(const ServerUnderTest&) = delete;
  ServerUnderTest& operator=(const ServerUnderTest&) = delete;

  // False, with error(), if the server could not start or did not listen within `timeout`.
  bool Start(std::chrono::milliseconds timeout = std::chrono::seconds(60));
  // SIGTERM, then waits up to `timeout` (SIGKILL after). Returns the exit code, 128 + signal, or -1.
  int Stop(std::chrono::milliseconds timeout = std::chrono::seconds(30));

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  const std::string& error() const { return error_; }
  const std::string& dir() const { return dir_; }
  // The last `max_bytes` of the server's stdout and stderr (for failure messages).
  std::string LogTail(size_t max_bytes = 4096) const;

 private:
  // Waits until the child ends or `timeout` passes; true (and status decoded) if it ended.
  bool WaitForExit(std::chrono::milliseconds timeout, int* exit_code);

  std::string binary_;
  std::string dir_;
  std::string port_file_;
  std::string log_file_;
  pid_t pid_ = -1;
  int pidfd_ = -1;
  int port_ = 0;
  std::string error_;
};

}  // namespace cairn::cli_e2e
