// RunProcess: runs a program to completion with fork/exec (no shell), feeding it standard input
// and capturing standard output, standard error and the exit code.
// StreamingProcess: the same, for a program that runs on (`cairn tail`): its output is read while
// it runs, so a test waits for what it expects, with a timeout, instead of sleeping.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace cairn::cli_e2e {

struct ProcessResult {
  int exit_code = -1;  // the exit status; 128 + N if signal N ended it; -1 if it could not run
  std::string out;
  std::string err;
};

struct ProcessOptions {
  std::string stdin_text;                // written to the child's stdin, which is then closed
  std::vector<std::string> set_env;      // "NAME=value" added to (or replacing in) the environment
  std::vector<std::string> unset_env;    // names removed from the environment
  std::chrono::milliseconds timeout{60000};  // the child is killed (SIGKILL) after this
};

// `argv[0]` is the program's path. Never throws; failures to start show in `err` with exit -1.
ProcessResult RunProcess(const std::vector<std::string>& argv, const ProcessOptions& options = {});

class StreamingProcess {
 public:
  // Starts `argv` with `options.set_env`/`unset_env`; its stdin is empty (closed at once). If it
  // cannot start, running() is false and err() says why.
  explicit StreamingProcess(const std::vector<std::string>& argv, const ProcessOptions& options = {});
  // A child still running is killed (SIGKILL) and reaped.
  ~StreamingProcess();
  StreamingProcess(const StreamingProcess&) = delete;
  StreamingProcess& operator=(const StreamingProcess&) = delete;

  bool running() const { return pid_ > 0; }
  // Reads the child's output as it comes until `done(out, err)` holds (true), the child closes
  // both outputs, or `timeout` passes (false in both cases).
  bool WaitFor(const std::function<bool(const std::string& out, const std::string& err)>& done,
               std::chrono::milliseconds timeout);
  // Shorthands: at least `count` complete lines on stdout; `text` somewhere in stderr.
  bool WaitForLines(size_t count, std::chrono::milliseconds timeout);
  bool WaitForErr(const std::string& text, std::chrono::milliseconds timeout);
  void Signal(int signal);
  // Reads to the end and reaps the child; after `timeout` it is killed (SIGKILL) first.
  ProcessResult Finish(std::chrono::milliseconds timeout);

  const std::string& out() const { return out_; }
  const std::string& err() const { return err_; }

 private:
  pid_t pid_ = -1;
  int fds_[2] = {-1, -1};  // stdout, stderr
  std::string out_;
  std::string err_;
};

}  // namespace cairn::cli_e2e
