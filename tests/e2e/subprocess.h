// Subprocess: a child program (fork/exec, no shell) whose stdout and stderr the test reads
// through pipes, for independent clients such as `node` (the npm eventsource package) and `curl`.
//
//   Subprocess p({"curl", "-sN", url});
//   ASSERT_TRUE(p.Start()) << p.error();
//   p.ReadUntil([](const Subprocess& s) { return s.out().find("id: 3") != npos; }, 10s);
//   int code = p.Wait(10s);        // exit code, 128+N if killed by signal N, -1 on timeout (killed)
//
// Reading polls both pipes with a deadline (no fixed sleeps). The child gets SIGKILL if the test
// process dies (PR_SET_PDEATHSIG), and from the destructor if it is still running.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace cairn::e2e {

class Subprocess {
 public:
  // `argv[0]` is looked up in PATH (execvp). `env` entries ("NAME=value") are added to the
  // inherited environment.
  explicit Subprocess(std::vector<std::string> argv, std::vector<std::string> env = {});
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  bool Start();
  // Reads stdout and stderr until `done(*this)` holds, both pipes are at EOF, or the timeout.
  bool ReadUntil(const std::function<bool(const Subprocess&)>& done, std::chrono::milliseconds timeout);
  // Reads both pipes to EOF and reaps the child within `timeout`; returns the exit code (128+N
  // for signal N, -1 on timeout, after which the child is killed).
  int Wait(std::chrono::milliseconds timeout);
  void Kill(int signal = 9);

  const std::string& out() const { return out_; }
  const std::string& err() const { return err_; }
  const std::string& error() const { return error_; }  // why Start() failed (exec errors land in err())
  pid_t pid() const { return pid_; }
  // The lines of out() (complete lines only).
  std::vector<std::string> OutLines() const;

 private:
  std::vector<std::string> argv_;
  std::vector<std::string> env_;
  pid_t pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  std::string out_;
  std::string err_;
  std::string error_;
};

}  // namespace cairn::e2e
