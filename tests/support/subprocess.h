// Subprocess: a child program (fork/exec, no shell) whose stdout and stderr the test reads through
// pipes while it runs, and RunProcess: the same, run to completion. For the real `cairn` client,
// node scripts (the npm eventsource package, the LLM servers) and curl.
//
//   Subprocess p({"curl", "-sN", url});
//   ASSERT_TRUE(p.Start()) << p.error();
//   p.ReadUntil([](const Subprocess& s) { return s.out().find("id: 3") != npos; }, 10s);
//   int code = p.Wait(10s);  // exit code, 128+N if killed by signal N, -1 on timeout (killed)
//
//   ProcessResult r = RunProcess({cairn, "get", id}, {.stdin_text = "..."});
//
// Reading polls the pipes with a deadline (no fixed sleeps). The child gets SIGKILL if the test
// process dies (PR_SET_PDEATHSIG), and from the destructor if it is still running.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace cairn::test_support {

struct ProcessOptions {
  std::string stdin_text;              // written to the child's stdin, which is then closed
  std::vector<std::string> set_env;    // "NAME=value" added to (or replacing in) the environment
  std::vector<std::string> unset_env;  // names removed from the environment
  std::chrono::milliseconds timeout{60000};  // RunProcess: the child is killed (SIGKILL) after this
};

struct ProcessResult {
  int exit_code = -1;  // the exit status; 128 + N if signal N ended it; -1 if it could not run
  std::string out;
  std::string err;
};

class Subprocess {
 public:
  // `argv[0]` is looked up in PATH unless it has a '/'.
  explicit Subprocess(std::vector<std::string> argv, ProcessOptions options = {});
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  // false when the child cannot be started (error() says why, and err() too); a failed exec
  // shows in err() with exit 127.
  bool Start();
  bool running() const { return pid_ > 0; }
  // Reads stdout and stderr (and feeds stdin) until `done(*this)` holds (true), both outputs are
  // at EOF, or the timeout (false unless `done` holds then).
  bool ReadUntil(const std::function<bool(const Subprocess&)>& done, std::chrono::milliseconds timeout);
  // Shorthands: at least `count` complete lines on stdout; `text` somewhere in stderr.
  bool WaitForLines(size_t count, std::chrono::milliseconds timeout);
  bool WaitForErr(const std::string& text, std::chrono::milliseconds timeout);
  // Reads both outputs to EOF and reaps the child within `timeout`; after it the child is killed
  // (SIGKILL) and err gets "[killed: timed out]".
  ProcessResult Finish(std::chrono::milliseconds timeout);
  // Finish's exit code, or -1 on timeout.
  int Wait(std::chrono::milliseconds timeout);
  void Kill(int signal = 9);

  const std::string& out() const { return out_; }
  const std::string& err() const { return err_; }
  const std::string& error() const { return error_; }  // why Start() failed
  pid_t pid() const { return pid_; }
  // The lines of out() (complete lines only).
  std::vector<std::string> OutLines() const;

 private:
  std::vector<std::string> argv_;
  ProcessOptions options_;
  pid_t pid_ = -1;
  int in_fd_ = -1;
  size_t written_ = 0;
  int out_fd_ = -1;
  int err_fd_ = -1;
  std::string out_;
  std::string err_;
  std::string error_;
};

// The first executable `name` on PATH (a default PATH when unset), or "".
std::string FindOnPath(const std::string& name);

// Starts `argv` and finishes it within options.timeout. Never throws; a child that cannot start
// gives exit -1 with the reason in err.
ProcessResult RunProcess(const std::vector<std::string>& argv, const ProcessOptions& options = {});

}  // namespace cairn::test_support
