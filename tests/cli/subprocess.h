// RunProcess: runs a program to completion with fork/exec (no shell), feeding it standard input
// and capturing standard output, standard error and the exit code.
#pragma once

#include <chrono>
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

}  // namespace cairn::cli_e2e
