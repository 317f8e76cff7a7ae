// fork + execve of a program under its keeper: the runner's side of the start (process_launch.h).
#include "exec/tools/process_launch.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <string_view>
#include <vector>

namespace cairn::exec::process_internal {
namespace {

constexpr const char* kDefaultPath = "/usr/local/bin:/usr/bin:/bin";

Status ValidateSpec(const ProcessSpec& spec) {
  auto has_nul = [](const std::string& s) { return s.find('\0') != std::string::npos; };
  if (spec.argv.empty() || spec.argv[0].empty()) {
    return Status::InvalidArgument("process spec: argv is empty");
  }
  for (const std::string& arg : spec.argv) {
    if (has_nul(arg)) return Status::InvalidArgument("process spec: an argument of " + spec.argv[0] + " contains NUL");
  }
  for (const auto& [name, value] : spec.env) {
    if (name.empty() || name.find('=') != std::string::npos || has_nul(name) || has_nul(value)) {
      return Status::InvalidArgument("process spec: invalid environment variable \"" + name + "\"");
    }
  }
  if (has_nul(spec.cwd)) return Status::InvalidArgument("process spec: cwd contains NUL");
  if (spec.wall_timeout.count() < 0 || spec.cpu_seconds < 0 || spec.memory_bytes < 0 || spec.max_processes < 0) {
    return Status::InvalidArgument("process spec: limits must not be negative");
  }
  return Status::Ok();
}

// The path to execve, resolved before fork so that the child does no string work.
Result<std::string> ResolveProgram(const ProcessSpec& spec) {
  const std::string& program = spec.argv[0];
  if (program.find('/') != std::string::npos) return program;
  std::string path_list;
  bool from_env = false;
  for (const auto& [name, value] : spec.env) {
    if (name == "PATH") {  // the first one, as getenv() in the child would see it
      path_list = value;
      from_env = true;
      break;
    }
  }
  if (!from_env) {
    const char* own = ::getenv("PATH");
    path_list = own != nullptr ? own : kDefaultPath;
  }
  size_t begin = 0;
  while (begin <= path_list.size()) {
    size_t end = path_list.find(':', begin);
    if (end == std::string::npos) end = path_list.size();
    std::string_view dir(path_list.data() + begin, end - begin);
    begin = end + 1;
    // Relative entries would be resolved against the runner's cwd, not the child's: skip them.
    if (dir.empty() || dir.front() != '/') continue;
    std::string candidate(dir);
    candidate += '/';
    candidate += program;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return Status::NotFound("program not found in PATH: " + program);
}

Status StartFailure(const KeeperReport& report, const ProcessSpec& spec, const std::string& path) {
  const std::string& program = spec.argv[0];
  const std::string why = ErrnoText(report.err);
  switch (report.stage) {
    case kStageChdir:
      if (report.err == ENOENT || report.err == ENOTDIR) {
        return Status::NotFound("working directory does not exist: " + spec.cwd);
      }
      return Status::InvalidArgument("cannot use working directory " + spec.cwd + ": " + why);
    case kStageFork:
      return Status::ResourceExhausted("cannot fork to run " + program + ": " + why);
    case kStageUser:
      return Status::Internal("cannot run " + program + " as uid " +
                              std::to_string(spec.run_as ? spec.run_as->uid : ::getuid()) + ": " + why);
    case kStageExec:
      break;
    default:
      return Status::Internal("cannot set up the process for " + program + " (stage " +
                              std::to_string(report.stage) + "): " + why);
  }
  struct stat st {};
  switch (report.err) {
    case ENOENT:
      // The file exists but execve says ENOENT: its "#!" interpreter or dynamic loader is missing.
      if (::stat(path.c_str(), &st) == 0) {
        return Status::NotFound("interpreter of program not found: " + program);
      }
      return Status::NotFound("program not found: " + program);
    case EAGAIN:
      // execve after a change of user refuses when that user is over RLIMIT_NPROC.
      if (spec.max_processes > 0 && spec.run_as) {
        return Status::ResourceExhausted("cannot start " + program + ": the process limit of " +
                                         std::to_string(spec.max_processes) + " is reached (counted per user)");
      }
      [[fallthrough]];
    case ENOMEM:
      return Status::ResourceExhausted("cannot start " + program + ": " + why +
                                       (spec.memory_bytes > 0 ? " (memory limit too small?)" : ""));
    default:
      return Status::InvalidArgument("cannot execute " + program + ": " + why);
  }
}

// Clamps a requested limit to the runner's hard limit: raising it would fail with EPERM, and the
// runner's own limit applies anyway.
struct rlimit ClampedLimit(int resource, rlim_t soft, rlim_t hard) {
  struct rlimit current {};
  if (::getrlimit(resource, &current) == 0 && current.rlim_max != RLIM_INFINITY) {
    hard = std::min(hard, current.rlim_max);
    soft = std::min(soft, hard);
  }
  return {soft, hard};
}

}  // namespace

std::string ErrnoText(int err) {
  const char* text = ::strerrordesc_np(err);
  return text != nullptr ? text : "errno " + std::to_string(err);
}

Status OpenPipe(Pipe& pipe) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return Status::ResourceExhausted("cannot create a pipe for the process: " + ErrnoText(errno));
  }
  pipe.read = Fd(fds[0]);
  pipe.write = Fd(fds[1]);
  return Status::Ok();
}

void SetNonBlocking(const Fd& fd) {
  if (fd.valid()) ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) | O_NONBLOCK);
}

ssize_t WriteNoSigpipe(int fd, const char* data, size_t len) {
  sigset_t pipe_set, old_mask, pending;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  sigpending(&pending);
  const bool was_pending = sigismember(&pending, SIGPIPE) == 1;
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);
  const ssize_t n = ::write(fd, data, len);
  const int err = errno;
  if (n < 0 && err == EPIPE && !was_pending) {
    const struct timespec zero {};
    while (::sigtimedwait(&pipe_set, nullptr, &zero) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  errno = err;
  return n;
}

void KeeperHandle::StopRun() {
  if (!control_.valid()) return;
  const char byte = 'k';
  // A full pipe cannot happen (one byte, once); EPIPE means the keeper is already gone.
  ssize_t n;
  do {
    n = WriteNoSigpipe(control_.get(), &byte, 1);
  } while (n < 0 && errno == EINTR);
}

// Reads one KeeperReport from `fd`; kNone at EOF (the keeper died without reporting).
KeeperReport ReadReport(int fd) {
  KeeperReport report;
  size_t got = 0;
  while (got < sizeof report) {
    const ssize_t n = ::read(fd, reinterpret_cast<char*>(&report) + got, sizeof report - got);
    if (n > 0) {
      got += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;
    }
  }
  if (got != sizeof report) return KeeperReport{};
  return report;
}

Result<LaunchedProcess> LaunchProcess(const ProcessSpec& spec) {
  CAIRN_RETURN_IF_ERROR(ValidateSpec(spec));
  CAIRN_ASSIGN_OR_RETURN(const std::string path, ResolveProgram(spec));

  std::vector<char*> argv;
  for (const std::string& arg : spec.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (const auto& [name, value] : spec.env) env_strings.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (std::string& entry : env_strings) envp.push_back(entry.data());
  envp.push_back(nullptr);

  Pipe in, out, err, res, status, control;
  for (Pipe* pipe : {&in, &out, &err, &res, &status, &control}) {
    CAIRN_RETURN_IF_ERROR(OpenPipe(*pipe));
  }

  KeeperPlan plan;
  plan.path = path.c_str();
  plan.argv = argv.data();
  plan.envp = envp.data();
  plan.cwd = spec.cwd.empty() ? nullptr : spec.cwd.c_str();
  plan.fds[0] = in.read.get();
  plan.fds[1] = out.write.get();
  plan.fds[2] = err.write.get();
  plan.fds[3] = res.write.get();
  plan.status_fd = status.write.get();
  plan.control_fd = control.read.get();
  if (spec.cpu_seconds > 0) {
    // SIGXCPU at the soft limit, SIGKILL a second later for programs that catch SIGXCPU.
    const auto seconds = static_cast<rlim_t>(spec.cpu_seconds);
    plan.set_cpu = true;
    plan.cpu = ClampedLimit(RLIMIT_CPU, seconds, seconds + 1);
  }
  if (spec.memory_bytes > 0) {
    const auto bytes = static_cast<rlim_t>(spec.memory_bytes);
    plan.set_data = true;
    plan.data = ClampedLimit(RLIMIT_DATA, bytes, bytes);
  }
  if (spec.max_processes > 0) {
    const auto count = static_cast<rlim_t>(spec.max_processes);
    plan.set_nproc = true;
    plan.nproc = ClampedLimit(RLIMIT_NPROC, count, count);
  }
  if (spec.run_as) {
    plan.set_user = true;
    plan.uid = spec.run_as->uid;
    plan.gid = spec.run_as->gid;
    plan.groups = spec.run_as->groups.data();
    plan.group_count = spec.run_as->groups.size();
  }
  plan.default_action.sa_handler = SIG_DFL;
  sigemptyset(&plan.default_action.sa_mask);
  sigemptyset(&plan.empty_mask);
  struct rlimit nofile {};
  plan.fd_limit = ::getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur != RLIM_INFINITY
                      ? static_cast<int>(std::min<rlim_t>(nofile.rlim_cur, INT_MAX))
                      : 65536;

  // All signals stay blocked from fork on in the keeper (it reads SIGCHLD from a signalfd), and
  // in the program until it has reset their dispositions, so no handler of the runner ever runs
  // in either.
  sigset_t all, saved;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &saved);
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) RunKeeper(plan);
  const int fork_errno = errno;
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  if (pid < 0) return Status::ResourceExhausted("cannot fork to run " + spec.argv[0] + ": " + ErrnoText(fork_errno));

  auto keeper = std::make_unique<KeeperHandle>(pid, std::move(control.write));
  // Without closing our copies of the child's ends, EOF would never come.
  in.read.Reset();
  out.write.Reset();
  err.write.Reset();
  res.write.Reset();
  status.write.Reset();
  control.read.Reset();

  const KeeperReport first = ReadReport(status.read.get());
  if (first.kind != KeeperReport::kStarted) {
    const int keeper_status = keeper->Reap();
    if (first.kind == KeeperReport::kStartFailed) return StartFailure(first, spec, path);
    return Status::Internal("the process keeper for " + spec.argv[0] + " ended before starting it (wait status " +
                            std::to_string(keeper_status) + ")");
  }
  LaunchedProcess launched;
  launched.keeper = std::move(keeper);
  launched.stdin_write = std::move(in.write);
  launched.stdout_read = std::move(out.read);
  launched.stderr_read = std::move(err.read);
  launched.result_read = std::move(res.read);
  launched.status_read = std::move(status.read);
  launched.tool_pid = first.tool_pid;
  launched.start = start;
  return launched;
}

}  // namespace cairn::exec::process_internal
