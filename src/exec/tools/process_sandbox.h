// The sandbox around a process tool's run (docs/executors.md, "Process tools"): the user it runs
// as, the directory of its own that is its HOME (and, unless the definition names a cwd, its
// working directory), and the environment it gets. The process itself — limits, no descendant
// outliving the run — is process_runner.h.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "exec/tools/process_runner.h"
#include "model/limits.h"

namespace cairn::exec {

struct ProcessToolOptions {
  // --tool-user, resolved: process tools drop to it. Empty: they run as cairn's own user.
  std::optional<RunAs> user;
  // Where run directories are made; empty: the temporary directory ($TMPDIR, else /tmp).
  std::string run_root;
};

// The ids and groups of `name` (--tool-user), looked up once at start.
// kInvalidArgument: no such user; or cairn does not run as root and `name` is not its own user
// (only root can change ids). Returns nullopt for cairn's own user: nothing to change.
Result<std::optional<RunAs>> ResolveToolUser(const std::string& name);

// Lines for the start-up log: cairn runs as root and process tools would too (no --tool-user);
// the kernel lists no children in /proc, so descendants that leave a tool's process group can
// outlive its run.
std::vector<std::string> ProcessSandboxWarnings(const ProcessToolOptions& options);

// One run's own directory: `<run_root>/cairn-run-XXXXXX`, mode 0700, owned by the tool user;
// removed with everything in it when the RunDirectory is destroyed (every process of the run is
// gone by then). Movable, not copyable.
class RunDirectory {
 public:
  // kInternal when the directory cannot be made or given to the tool user.
  static Result<RunDirectory> Create(const ProcessToolOptions& options);
  RunDirectory(RunDirectory&& other) noexcept;
  RunDirectory& operator=(RunDirectory&&) = delete;
  RunDirectory(const RunDirectory&) = delete;
  ~RunDirectory();
  const std::string& path() const { return path_; }

 private:
  explicit RunDirectory(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

// A process tool's whole environment: PATH, LANG and TZ with the server's values (PATH
// "/usr/local/bin:/usr/bin:/bin" when the server has none; LANG and TZ only when set), HOME =
// `home`, then each of `names` that the server has set and model::CheckToolEnvName accepts under
// `policy` — the definition was checked when written, and this keeps CAIRN_* and provider keys
// out even of a definition that was not.
std::vector<std::pair<std::string, std::string>> ToolEnvironment(const std::vector<std::string>& names,
                                                                 const model::ToolEnvPolicy& policy,
                                                                 const std::string& home);

}  // namespace cairn::exec
