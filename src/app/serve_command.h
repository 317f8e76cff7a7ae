// `cairn serve`: wires the default backends (SQLite store), the HTTP server and the background
// sweeper together, serves until SIGTERM/SIGINT, then shuts down in order.
#pragma once

#include <string>
#include <vector>

namespace cairn::app {

// Runs the server with `args` (the flags after "serve"). Returns the process exit code:
// 0 after a graceful stop, 1 if start-up failed, 2 for bad flags.
int RunServe(const std::vector<std::string>& args);

}  // namespace cairn::app
