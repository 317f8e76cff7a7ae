#include "exec/tools/process_sandbox.h"

#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "base/log.h"
#include "exec/tools/process_keeper.h"
#include "model/tool_definition.h"

namespace cairn::exec {
namespace fs = std::filesystem;
namespace {

constexpr const char* kDefaultPath = "/usr/local/bin:/usr/bin:/bin";

// A run's files may include directories the tool made unreadable or unwritable (0000); with
// cairn's own uid those stop remove_all, so give every directory back to its owner first.
// Symbolic links are never followed.
void RemoveTree(const std::string& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
  if (!ec) return;
  fs::permissions(path, fs::perms::owner_all, fs::perm_options::add | fs::perm_options::nofollow, ec);
  for (auto it = fs::recursive_directory_iterator(path, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->symlink_status(ec).type() == fs::file_type::directory) {
      fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add | fs::perm_options::nofollow, ec);
    }
  }
  ec.clear();
  fs::remove_all(path, ec);
  if (ec) CAIRN_LOG_WARN("cannot remove the run directory {}: {}", path, ec.message());
}

}  // namespace

Result<std::optional<RunAs>> ResolveToolUser(const std::string& name) {
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  int rc;
  while ((rc = ::getpwnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found)) == ERANGE) {
    buffer.resize(buffer.size() * 2);
  }
  if (rc != 0) return Status::InvalidArgument("--tool-user " + name + ": cannot look it up: " + std::strerror(rc));
  if (found == nullptr) return Status::InvalidArgument("--tool-user " + name + ": no such user");
  if (found->pw_uid == ::geteuid()) return std::optional<RunAs>();  // cairn's own user: nothing to change
  if (::geteuid() != 0) {
    return Status::InvalidArgument("--tool-user " + name + " needs cairn to run as root (it runs as uid " +
                                   std::to_string(::geteuid()) + ")");
  }
  RunAs user;
  user.uid = found->pw_uid;
  user.gid = found->pw_gid;
  int count = 32;
  user.groups.resize(static_cast<size_t>(count));
  while (::getgrouplist(found->pw_name, found->pw_gid, user.groups.data(), &count) < 0) {
    user.groups.resize(static_cast<size_t>(count));
  }
  user.groups.resize(static_cast<size_t>(count));
  return std::optional<RunAs>(std::move(user));
}

std::vector<std::string> ProcessSandboxWarnings(const ProcessToolOptions& options) {
  std::vector<std::string> warnings;
  if (::geteuid() == 0 && !options.user) {
    warnings.push_back(
        "cairn runs as root without --tool-user: process tools run as root too, may read cairn's data and "
        "are not held to their process limit (root is exempt from RLIMIT_NPROC). Set --tool-user (e.g. nobody)");
  }
  if (!ProcessChildrenListAvailable()) {
    warnings.push_back(
        "this kernel does not list children in /proc (CONFIG_PROC_CHILDREN): a process tool's descendants that "
        "leave its process group (setsid, daemons) can outlive its run");
  }
  return warnings;
}

Result<RunDirectory> RunDirectory::Create(const ProcessToolOptions& options) {
  std::error_code ec;
  const fs::path root = options.run_root.empty() ? fs::temp_directory_path(ec) : fs::path(options.run_root);
  if (ec) return Status::Internal("no temporary directory for process tool runs: " + ec.message());
  std::string pattern = (root / "cairn-run-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    return Status::Internal("cannot create a run directory in " + root.string() + ": " + std::strerror(errno));
  }
  RunDirectory dir(pattern);  // removed on every return below
  if (options.user && ::chown(dir.path_.c_str(), options.user->uid, options.user->gid) != 0) {
    return Status::Internal("cannot give the run directory " + dir.path_ + " to uid " +
                            std::to_string(options.user->uid) + ": " + std::strerror(errno));
  }
  return dir;
}

RunDirectory::RunDirectory(RunDirectory&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }

RunDirectory::~RunDirectory() {
  if (!path_.empty()) RemoveTree(path_);
}

std::vector<std::pair<std::string, std::string>> ToolEnvironment(const std::vector<std::string>& names,
                                                                 const model::ToolEnvPolicy& policy,
                                                                 const std::string& home) {
  std::vector<std::pair<std::string, std::string>> env;
  const char* path = std::getenv("PATH");
  env.emplace_back("PATH", path != nullptr ? path : kDefaultPath);
  for (const char* name : {"LANG", "TZ"}) {
    if (const char* value = std::getenv(name)) env.emplace_back(name, value);
  }
  env.emplace_back("HOME", home);
  for (const std::string& name : names) {
    if (model::IsBaseToolEnvName(name) || !model::CheckToolEnvName(name, policy, "env").ok()) continue;
    if (const char* value = std::getenv(name.c_str())) env.emplace_back(name, value);
  }
  return env;
}

}  // namespace cairn::exec
