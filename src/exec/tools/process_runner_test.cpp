#include "exec/tools/process_runner.h"
#include "support/temp_dir.h"

#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace cairn::exec {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// A /bin/sh script with a small PATH (the child inherits no environment) and a generous timeout,
// so that a hang fails the test instead of blocking it.
ProcessSpec Sh(std::string script) {
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", std::move(script)};
  spec.env = {{"PATH", "/usr/bin:/bin"}};
  spec.wall_timeout = 20s;
  return spec;
}

ProcessResult MustRun(const ProcessSpec& spec, const std::atomic<bool>* cancel = nullptr) {
  Result<ProcessResult> result = RunProcess(spec, cancel);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? std::move(result).value() : ProcessResult{};
}

// True once `pid` no longer runs (gone, or a zombie waiting for a reaper that is not us).
bool ProcessGone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  const size_t paren = line.rfind(')');
  if (paren == std::string::npos || paren + 2 >= line.size()) return true;
  const char state = line[paren + 2];
  return state == 'Z' || state == 'X';
}

bool EventuallyGone(pid_t pid) {
  const auto until = Clock::now() + 3s;
  while (Clock::now() < until) {
    if (ProcessGone(pid)) return true;
    std::this_thread::sleep_for(10ms);
  }
  return ProcessGone(pid);
}

// Whether a process with pid `pid` runs a command line containing `marker`: after a run, one of
// the run's processes still alive (a different process that got the pid back would not match).
bool StillRuns(pid_t pid, const std::string& marker) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  const std::string cmdline((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  return cmdline.find(marker) != std::string::npos;
}

std::vector<pid_t> PidsIn(const std::string& text) {
  std::vector<pid_t> pids;
  std::istringstream in(text);
  for (pid_t pid; in >> pid;) pids.push_back(pid);
  return pids;
}

// Processes whose real uid is `uid`, now.
int CountProcessesOf(uid_t uid) {
  int count = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    std::ifstream status(entry.path() / "status");
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("Uid:", 0) == 0) {
        if (std::stoul(line.substr(4)) == uid) ++count;
        break;
      }
    }
  }
  return count;
}

const passwd* Nobody() { return ::getpwnam("nobody"); }

// Escapes from the tool's process group and parentage, each reporting its pid on fd 3 once it is
// out: `setsid`, a double fork, and a daemon doing both. Each command substitution returns once
// its escapee has printed its pid and sent its stdout elsewhere, so no waiting is needed.
constexpr const char* kEscapes = R"(
a=$(setsid sh -c 'echo $$; exec sleep 1001 >/dev/null' &)
b=$(sh -c 'sh -c "echo \$\$; exec sleep 1002 >/dev/null" &')
c=$(setsid sh -c 'sh -c "echo \$\$; exec sleep 1003 >/dev/null" & exit 0' &)
echo $a $b $c >&3
)";

int CountOpenFds() {
  int count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) ++count;
  return count;
}

TEST(ProcessRunner, StdinEchoedToResultChannel) {
  ProcessSpec spec = Sh("cat >&3");
  spec.stdin_data = "hello, tool";
  ProcessResult r = MustRun(spec);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.term_signal, 0);
  EXPECT_EQ(r.result, "hello, tool");
  EXPECT_FALSE(r.timed_out || r.cancelled || r.result_truncated);
  EXPECT_EQ(DescribeFailure(r, spec), "");
}

TEST(ProcessRunner, CapturesStdoutAndStderr) {
  ProcessSpec spec = Sh("echo to-out; echo to-err >&2; printf answer >&3");
  ProcessResult r = MustRun(spec);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.stdout_tail, "to-out\n");
  EXPECT_EQ(r.stderr_tail, "to-err\n");
  EXPECT_EQ(r.result, "answer");
}

TEST(ProcessRunner, ReportsNonZeroExit) {
  ProcessSpec spec = Sh("echo failing >&2; exit 3");
  ProcessResult r = MustRun(spec);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.term_signal, 0);
  EXPECT_EQ(r.stderr_tail, "failing\n");
  EXPECT_EQ(DescribeFailure(r, spec), "exited with status 3");
}

TEST(ProcessRunner, ReportsDeathBySignal) {
  ProcessSpec spec = Sh("kill -SEGV $$");
  ProcessResult r = MustRun(spec);
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_EQ(r.term_signal, SIGSEGV);
  EXPECT_EQ(DescribeFailure(r, spec), "killed by signal 11 (SIGSEGV)");
}

TEST(ProcessRunner, MissingProgramIsAnErrorNotExit127) {
  ProcessSpec spec;
  spec.argv = {"cairn-no-such-program"};
  Result<ProcessResult> r = RunProcess(spec);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("cairn-no-such-program"), std::string::npos);

  spec.argv = {"/nonexistent/cairn-prog", "arg"};
  r = RunProcess(spec);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("/nonexistent/cairn-prog"), std::string::npos);

  // The lookup uses the PATH given to the child when there is one.
  spec.argv = {"env"};
  spec.env = {{"PATH", "/nonexistent"}};
  r = RunProcess(spec);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

TEST(ProcessRunner, NonExecutableFileIsAnError) {
  test_support::TempDir temp("cairn-proc");
  const std::string dir = temp.path();
  const std::string file = dir + "/not-executable";
  std::ofstream(file) << "#!/bin/sh\necho hi\n";
  ::chmod(file.c_str(), 0644);  // no x bit at all: EACCES even for root
  ProcessSpec spec;
  spec.argv = {file};
  Result<ProcessResult> r = RunProcess(spec);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find(file), std::string::npos);
}

TEST(ProcessRunner, MissingCwdIsAnError) {
  ProcessSpec spec = Sh("pwd");
  spec.cwd = "/nonexistent/cairn-dir";
  Result<ProcessResult> r = RunProcess(spec);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("/nonexistent/cairn-dir"), std::string::npos);
}

TEST(ProcessRunner, RejectsMalformedSpecs) {
  ProcessSpec empty;
  EXPECT_EQ(RunProcess(empty).status().code(), StatusCode::kInvalidArgument);
  ProcessSpec bad_env = Sh("true");
  bad_env.env.push_back({"A=B", "c"});
  EXPECT_EQ(RunProcess(bad_env).status().code(), StatusCode::kInvalidArgument);
  ProcessSpec negative = Sh("true");
  negative.wall_timeout = -1ms;
  EXPECT_EQ(RunProcess(negative).status().code(), StatusCode::kInvalidArgument);
}

TEST(ProcessRunner, WallTimeoutKillsTheWholeGroup) {
  // The shell reports its background child's pid on fd 3, then both sleep.
  ProcessSpec spec = Sh("sleep 30 & echo $! >&3; sleep 30");
  spec.wall_timeout = 500ms;
  const auto start = Clock::now();
  ProcessResult r = MustRun(spec);
  const auto elapsed = Clock::now() - start;
  EXPECT_LT(elapsed, 5s);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.term_signal, SIGKILL);
  EXPECT_GE(r.duration_ms, 500);
  EXPECT_EQ(DescribeFailure(r, spec), "timed out after 500 ms");
  const pid_t grandchild = std::atoi(r.result.c_str());
  ASSERT_GT(grandchild, 0) << r.result;
  EXPECT_TRUE(EventuallyGone(grandchild));
}

TEST(ProcessRunner, BackgroundChildrenAreKilledWhenTheChildExits) {
  ProcessSpec spec = Sh("sleep 30 & echo $! >&3; echo done");
  const auto start = Clock::now();
  ProcessResult r = MustRun(spec);
  EXPECT_LT(Clock::now() - start, 5s);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.stdout_tail, "done\n");
  const pid_t grandchild = std::atoi(r.result.c_str());
  ASSERT_GT(grandchild, 0) << r.result;
  EXPECT_TRUE(EventuallyGone(grandchild));
}

TEST(ProcessRunner, NoDescendantOutlivesTheRun) {
  ProcessSpec spec = Sh(kEscapes);
  const auto start = Clock::now();
  ProcessResult r = MustRun(spec);
  EXPECT_LT(Clock::now() - start, 5s);  // nothing waited for the escapees' 1000 s
  EXPECT_EQ(r.exit_code, 0) << r.stderr_tail;
  const std::vector<pid_t> escapees = PidsIn(r.result);
  ASSERT_EQ(escapees.size(), 3u) << r.result;
  // Gone the moment RunProcess returns: the keeper reaped them before exiting.
  for (pid_t pid : escapees) EXPECT_FALSE(StillRuns(pid, "sleep")) << pid;
  EXPECT_GE(r.leftovers, 3);
}

TEST(ProcessRunner, NoDescendantOutlivesATimeout) {
  ProcessSpec spec = Sh(std::string(kEscapes) + "exec sleep 1004\n");
  spec.wall_timeout = 1000ms;  // far more than the escapes take
  ProcessResult r = MustRun(spec);
  EXPECT_TRUE(r.timed_out);
  EXPECT_GE(r.duration_ms, 1000);  // the real time, not 0
  EXPECT_LT(r.duration_ms, 6000);
  EXPECT_EQ(r.term_signal, SIGKILL);
  const std::vector<pid_t> escapees = PidsIn(r.result);
  ASSERT_EQ(escapees.size(), 3u) << r.result;
  for (pid_t pid : escapees) EXPECT_FALSE(StillRuns(pid, "sleep")) << pid;
}

TEST(ProcessRunner, NoDescendantOutlivesACancel) {
  // The tool says on a FIFO when its escapees are out; the cancel follows that, not a delay.
  test_support::TempDir temp("cairn-proc");
  const std::string dir = temp.path();
  const std::string fifo = dir + "/ready";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int ready = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);  // no writer yet: no EOF either
  ASSERT_GE(ready, 0);
  std::atomic<bool> cancel{false};
  std::thread canceller([&] {
    pollfd wait{ready, POLLIN, 0};
    ::poll(&wait, 1, 20000);
    cancel = true;
  });
  ProcessSpec spec = Sh(std::string(kEscapes) + "echo ready >" + fifo + "\nexec sleep 1005\n");
  ProcessResult r = MustRun(spec, &cancel);
  canceller.join();
  ::close(ready);
  EXPECT_TRUE(r.cancelled);
  const std::vector<pid_t> escapees = PidsIn(r.result);
  ASSERT_EQ(escapees.size(), 3u) << r.result;
  for (pid_t pid : escapees) EXPECT_FALSE(StillRuns(pid, "sleep")) << pid;
}

TEST(ProcessRunner, AKilledKeeperIsReportedHonestly) {
  // Running as the runner's own user, the program can kill its keeper (its parent); it then dies
  // with it (parent-death signal), and the result says what is unknown. Stdin is written only
  // once the keeper has reported the start, so reading it first orders the kill after that.
  ProcessSpec spec = Sh("read line; kill -KILL $PPID; exec sleep 1006");
  spec.stdin_data = "go\n";
  const auto start = Clock::now();
  ProcessResult r = MustRun(spec);
  EXPECT_LT(Clock::now() - start, 5s);
  EXPECT_TRUE(r.keeper_lost);
  EXPECT_NE(DescribeFailure(r, spec).find("keeper process was killed"), std::string::npos) << DescribeFailure(r, spec);
}

TEST(ProcessRunner, RunsAsTheGivenUserWithoutPrivileges) {
  if (::geteuid() != 0) GTEST_SKIP() << "changing users needs root";
  const passwd* nobody = Nobody();
  if (nobody == nullptr) GTEST_SKIP() << "no user nobody";
  test_support::TempDir temp("cairn-proc");
  const std::string dir = temp.path();
  ASSERT_EQ(::chown(dir.c_str(), nobody->pw_uid, nobody->pw_gid), 0);
  ProcessSpec spec = Sh("id -u; id -g; id -G; grep NoNewPrivs /proc/self/status; touch mine && echo wrote");
  spec.run_as = RunAs{nobody->pw_uid, nobody->pw_gid, {nobody->pw_gid}};
  spec.cwd = dir;
  ProcessResult r = MustRun(spec);
  const std::string uid = std::to_string(nobody->pw_uid), gid = std::to_string(nobody->pw_gid);
  EXPECT_EQ(r.exit_code, 0) << r.stderr_tail;
  EXPECT_EQ(r.stdout_tail, uid + "\n" + gid + "\n" + gid + "\nNoNewPrivs:\t1\nwrote\n");

  // Root's own directory is closed to it.
  spec = Sh("touch /root/cairn-runner-test-must-not-exist");
  spec.run_as = RunAs{nobody->pw_uid, nobody->pw_gid, {}};
  r = MustRun(spec);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_FALSE(std::filesystem::exists("/root/cairn-runner-test-must-not-exist"));
}

TEST(ProcessRunner, ProcessLimitBindsAUserOtherThanRoot) {
  if (::geteuid() != 0) GTEST_SKIP() << "changing users needs root";
  const passwd* nobody = Nobody();
  if (nobody == nullptr) GTEST_SKIP() << "no user nobody";
  ProcessSpec spec = Sh("for i in 1 2 3 4 5 6 7 8 9 10; do sleep 1007 & done; echo all started");
  spec.run_as = RunAs{nobody->pw_uid, nobody->pw_gid, {}};
  // The kernel counts every process of the user; leave room for the shell and three sleeps.
  spec.max_processes = CountProcessesOf(nobody->pw_uid) + 4;
  ProcessResult r = MustRun(spec);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.stdout_tail.find("all started"), std::string::npos);
  EXPECT_NE(DescribeFailure(r, spec).find("process limit of " + std::to_string(spec.max_processes)), std::string::npos)
      << DescribeFailure(r, spec) << "\n" << r.stderr_tail;
  EXPECT_GE(r.leftovers, 1);  // the sleeps that did start were killed
}

TEST(ProcessRunner, MemoryLimitCountsDataNotReservedAddressSpace) {
  std::string python;
  for (const char* candidate : {"/usr/bin/python3", "/usr/local/bin/python3"}) {
    if (::access(candidate, X_OK) == 0) {
      python = candidate;
      break;
    }
  }
  if (python.empty()) GTEST_SKIP() << "python3 not installed";
  // Runtimes (JVMs, Go, V8) reserve large inaccessible ranges at start; under RLIMIT_AS they
  // would not start at all.
  ProcessSpec spec;
  spec.argv = {python, "-c",
               "import mmap; m = mmap.mmap(-1, 8 << 30, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, prot=0); "
               "print('reserved')"};
  spec.memory_bytes = 256 << 20;
  ProcessResult r = MustRun(spec);
  EXPECT_EQ(r.exit_code, 0) << r.stderr_tail;
  EXPECT_EQ(r.stdout_tail, "reserved\n");
}

TEST(ProcessRunner, CpuLimitKillsABusyLoop) {
  ProcessSpec spec = Sh("while :; do :; done");
  spec.cpu_seconds = 1;
  ProcessResult r = MustRun(spec);
  EXPECT_FALSE(r.timed_out);
  EXPECT_TRUE(r.term_signal == SIGXCPU || r.term_signal == SIGKILL) << r.term_signal;
  EXPECT_NE(DescribeFailure(r, spec).find("cpu time limit"), std::string::npos) << DescribeFailure(r, spec);
}

TEST(ProcessRunner, MemoryLimitStopsABigAllocation) {
  std::string python;
  for (const char* candidate : {"/usr/bin/python3", "/usr/local/bin/python3"}) {
    if (::access(candidate, X_OK) == 0) {
      python = candidate;
      break;
    }
  }
  if (python.empty()) GTEST_SKIP() << "python3 not installed";
  ProcessSpec spec;
  spec.argv = {python, "-c", "b = bytearray(500 * 1024 * 1024); print('allocated')"};
  spec.memory_bytes = 200 * 1024 * 1024;
  spec.wall_timeout = 20s;
  ProcessResult r = MustRun(spec);
  EXPECT_TRUE(r.exit_code > 0 || r.term_signal != 0) << r.exit_code;
  EXPECT_EQ(r.stdout_tail.find("allocated"), std::string::npos);
  EXPECT_NE(DescribeFailure(r, spec).find("memory limit"), std::string::npos)
      << DescribeFailure(r, spec) << "\n" << r.stderr_tail;
}

TEST(ProcessRunner, EnvironmentIsExactlyTheGivenOne) {
  ::setenv("CAIRN_RUNNER_SECRET", "must-not-leak", 1);
  ProcessSpec spec;
  spec.argv = {"env"};  // found through the runner's PATH: the child has none
  spec.env = {{"FOO", "bar"}, {"EMPTY", ""}};
  ProcessResult r = MustRun(spec);
  ::unsetenv("CAIRN_RUNNER_SECRET");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.stdout_tail, "FOO=bar\nEMPTY=\n");
}

TEST(ProcessRunner, CwdIsHonoured) {
  test_support::TempDir temp("cairn-proc");
  const std::string dir = temp.path();
  ProcessSpec spec = Sh("pwd -P; ls");
  spec.cwd = dir;
  std::ofstream(dir + "/marker") << "x";
  ProcessResult r = MustRun(spec);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.stdout_tail, std::filesystem::canonical(dir).string() + "\nmarker\n");
}

TEST(ProcessRunner, UnreadLargeStdinDoesNotHang) {
  const std::string megabyte(1 << 20, 'x');
  for (const char* script : {"exit 0", "exec 0<&-; sleep 0.2; echo ok", "head -c 10 >&3"}) {
    SCOPED_TRACE(script);
    ProcessSpec spec = Sh(script);
    spec.stdin_data = megabyte;
    spec.wall_timeout = 10s;
    const auto start = Clock::now();
    ProcessResult r = MustRun(spec);
    EXPECT_LT(Clock::now() - start, 5s);
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_FALSE(r.timed_out);
  }
}

TEST(ProcessRunner, LargeStdinRoundTripsWhileOutputFlows) {
  std::string data(1 << 20, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>('a' + i % 26);
  ProcessSpec spec = Sh("tee /dev/stderr >&3");
  spec.stdin_data = data;
  spec.max_result_bytes = 2 << 20;
  ProcessResult r = MustRun(spec);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_FALSE(r.result_truncated);
  EXPECT_EQ(r.result, data);
  EXPECT_EQ(r.stderr_tail, data.substr(data.size() - spec.max_log_bytes));
}

TEST(ProcessRunner, ResultIsCapped) {
  ProcessSpec spec = Sh("yes >&3");
  spec.max_result_bytes = 1000;
  const auto start = Clock::now();
  ProcessResult r = MustRun(spec);
  EXPECT_LT(Clock::now() - start, 5s);
  EXPECT_TRUE(r.result_truncated);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.result.size(), 1000u);
  // Killed, or ended by its own failed write when fd 3 closed first (a race the runner does not
  // decide): either way it did not succeed.
  EXPECT_TRUE(r.term_signal != 0 || r.exit_code != 0) << r.term_signal << " " << r.exit_code;
  EXPECT_EQ(DescribeFailure(r, spec), "result exceeded the output limit of 1000 bytes; process killed");

  ProcessSpec exact = Sh("printf abc >&3");
  exact.max_result_bytes = 3;
  r = MustRun(exact);
  EXPECT_FALSE(r.result_truncated);
  EXPECT_EQ(r.result, "abc");
  EXPECT_EQ(r.exit_code, 0);
}

TEST(ProcessRunner, LogsKeepTheirTail) {
  ProcessSpec spec = Sh("seq 1 100000; seq 1 50 >&2");
  spec.max_log_bytes = 13;
  ProcessResult r = MustRun(spec);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.stdout_tail, "99999\n100000\n");
  EXPECT_EQ(r.stderr_tail, "\n47\n48\n49\n50\n");
}

TEST(ProcessRunner, CancelKillsTheProcess) {
  std::atomic<bool> cancel{false};
  std::thread canceller([&] {
    std::this_thread::sleep_for(200ms);
    cancel = true;
  });
  ProcessSpec spec = Sh("sleep 30");
  const auto start = Clock::now();
  ProcessResult r = MustRun(spec, &cancel);
  canceller.join();
  EXPECT_LT(Clock::now() - start, 5s);
  EXPECT_TRUE(r.cancelled);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.term_signal, SIGKILL);
  EXPECT_EQ(DescribeFailure(r, spec), "cancelled");
}

TEST(ProcessRunner, ChildSeesOnlyDescriptors0To3) {
  // Deliberately without O_CLOEXEC, at numbers the child must not see.
  const int opened = ::open("/dev/null", O_RDONLY);
  ASSERT_GE(opened, 0);
  ASSERT_EQ(::dup2(opened, 50), 50);
  ASSERT_EQ(::dup2(opened, 100), 100);
  ::close(opened);
  ProcessSpec spec = Sh("for fd in 0 1 2 3 4 5 50 100; do [ -e /proc/$$/fd/$fd ] && echo $fd; done; true");
  ProcessResult r = MustRun(spec);
  ::close(50);
  ::close(100);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.stdout_tail, "0\n1\n2\n3\n");
}

TEST(ProcessRunner, ChildStartsWithDefaultSignalState) {
  // A runner that ignores SIGPIPE and blocks signals must not pass that on.
  struct sigaction ignore {}, previous {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &previous);
  sigset_t usr1, old_mask;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &usr1, &old_mask);
  ProcessSpec spec;
  spec.argv = {"grep", "-E", "^Sig(Ign|Blk)", "/proc/self/status"};
  ProcessResult r = MustRun(spec);
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  ::sigaction(SIGPIPE, &previous, nullptr);
  EXPECT_EQ(r.stdout_tail, "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");
}

TEST(ProcessRunner, LeavesNoDescriptorsOrZombies) {
  const int before = CountOpenFds();
  ProcessSpec ok = Sh("cat >&3; echo out; echo err >&2");
  ok.stdin_data = std::string(200000, 'y');
  EXPECT_EQ(MustRun(ok).exit_code, 0);
  ProcessSpec missing;
  missing.argv = {"/nonexistent/prog"};
  EXPECT_FALSE(RunProcess(missing).ok());
  ProcessSpec slow = Sh("sleep 30");
  slow.wall_timeout = 50ms;
  EXPECT_TRUE(MustRun(slow).timed_out);
  EXPECT_EQ(CountOpenFds(), before);
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1);  // no child left, not even a zombie
  EXPECT_EQ(errno, ECHILD);
}

TEST(ProcessRunner, ConcurrentRunsKeepTheirOutputsApart) {
  std::vector<std::thread> threads;
  std::vector<std::string> results(4);
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([i, &results] {
      ProcessSpec spec = Sh("cat >&3; sleep 0.1");
      spec.stdin_data = std::string(100000, static_cast<char>('a' + i));
      Result<ProcessResult> r = RunProcess(spec);
      if (r.ok()) results[i] = r->result;
    });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < 4; ++i) EXPECT_EQ(results[i], std::string(100000, static_cast<char>('a' + i)));
}

TEST(ProcessRunner, DescribeFailureStaysHonest) {
  ProcessSpec spec;
  ProcessResult r;
  r.exit_code = 0;
  EXPECT_EQ(DescribeFailure(r, spec), "");
  r.exit_code = 2;
  spec.memory_bytes = 1000;
  EXPECT_EQ(DescribeFailure(r, spec), "exited with status 2");  // no evidence of the limit
  r.stderr_tail = "Traceback ...\nMemoryError\n";
  EXPECT_EQ(DescribeFailure(r, spec), "exited with status 2; memory limit of 1000 bytes reached (an allocation failed)");
  spec.memory_bytes = 64 << 20;
  EXPECT_EQ(DescribeFailure(r, spec), "exited with status 2; memory limit of 64 MiB reached (an allocation failed)");
  r = ProcessResult{};
  r.term_signal = SIGABRT;
  EXPECT_EQ(DescribeFailure(r, spec), "killed by signal 6 (SIGABRT); memory limit of 64 MiB may have been hit");
  r.term_signal = SIGTERM;  // someone else's doing: no limit to blame
  EXPECT_EQ(DescribeFailure(r, spec), "killed by signal 15 (SIGTERM)");
  r = ProcessResult{};
  r.exit_code = 2;
  r.stderr_tail = "sh: 1: Cannot fork\n";
  EXPECT_EQ(DescribeFailure(r, spec), "exited with status 2");  // no process limit was set
  spec.max_processes = 8;
  EXPECT_EQ(DescribeFailure(r, spec),
            "exited with status 2; process limit of 8 may have been hit (it counts every process of the user)");
  spec.max_processes = 0;
  r = ProcessResult{};
  r.keeper_lost = true;
  EXPECT_NE(DescribeFailure(r, spec).find("keeper process was killed"), std::string::npos);
  r = ProcessResult{};
  spec.memory_bytes = 0;
  spec.cpu_seconds = 2;
  r.term_signal = SIGKILL;
  EXPECT_EQ(DescribeFailure(r, spec), "killed by signal 9 (SIGKILL); cpu time limit of 2 s may have been hit");
  r.term_signal = SIGXCPU;
  EXPECT_EQ(DescribeFailure(r, spec), "cpu time limit exceeded (2 s)");
  r.timed_out = true;
  spec.wall_timeout = 500ms;
  EXPECT_EQ(DescribeFailure(r, spec), "timed out after 500 ms");
}

}  // namespace
}  // namespace cairn::exec
