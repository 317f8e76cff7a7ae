// Small helpers shared by the SSE fan-out benchmark and its NATS baseline (bench/sse/).
#pragma once

#include <sys/resource.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace bench {

// CLOCK_MONOTONIC in nanoseconds: every timestamp of a run comes from this one clock.
inline int64_t NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

inline void SleepMs(int64_t ms) {
  timespec ts{static_cast<time_t>(ms / 1000), static_cast<long>((ms % 1000) * 1'000'000)};
  nanosleep(&ts, nullptr);
}

// Lifts the soft descriptor limit to the hard one; returns the new soft limit.
inline uint64_t RaiseNofile() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
    getrlimit(RLIMIT_NOFILE, &limit);
  }
  return limit.rlim_cur;
}

// A "Key:   123 kB" line of /proc/<pid>/status, in kB (or the plain number); -1 when absent.
inline int64_t ProcStatus(pid_t pid, const std::string& key) {
  if (pid <= 0) return -1;
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) == 0 && line.size() > key.size() && line[key.size()] == ':') {
      return std::strtoll(line.c_str() + key.size() + 1, nullptr, 10);
    }
  }
  return -1;
}

// utime + stime of a process, in seconds; -1 when unreadable.
inline double ProcCpuSeconds(pid_t pid) {
  if (pid <= 0) return -1;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t paren = all.rfind(')');
  if (paren == std::string::npos) return -1;
  std::istringstream fields(all.substr(paren + 2));
  std::string f;
  unsigned long long utime = 0, stime = 0;
  // After "pid (comm) ": field 3 is state; utime is field 14, stime field 15.
  for (int i = 3; i <= 15 && fields >> f; ++i) {
    if (i == 14) utime = std::strtoull(f.c_str(), nullptr, 10);
    if (i == 15) stime = std::strtoull(f.c_str(), nullptr, 10);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// This process's own CPU time (user + system), in seconds.
inline double SelfCpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

// The q-quantile (0..1) of values, nearest rank; sorts in place. 0 when empty.
inline uint32_t Quantile(std::vector<uint32_t>& values, double q) {
  if (values.empty()) return 0;
  size_t rank = static_cast<size_t>(q * static_cast<double>(values.size()));
  if (rank >= values.size()) rank = values.size() - 1;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(rank), values.end());
  return values[rank];
}

inline uint32_t MaxOf(const std::vector<uint32_t>& values) {
  return values.empty() ? 0 : *std::max_element(values.begin(), values.end());
}

// Prints name_p50_us ... name_max_us for a vector of microsecond latencies.
inline void PrintLatency(const std::string& name, std::vector<uint32_t>& us) {
  std::printf("%s_count=%zu\n", name.c_str(), us.size());
  std::printf("%s_p50_us=%u\n", name.c_str(), Quantile(us, 0.50));
  std::printf("%s_p90_us=%u\n", name.c_str(), Quantile(us, 0.90));
  std::printf("%s_p99_us=%u\n", name.c_str(), Quantile(us, 0.99));
  std::printf("%s_p999_us=%u\n", name.c_str(), Quantile(us, 0.999));
  std::printf("%s_max_us=%u\n", name.c_str(), MaxOf(us));
}

inline uint32_t ToUs(int64_t ns) {
  if (ns <= 0) return 0;
  int64_t us = ns / 1000;
  return us > 0xFFFFFFFFLL ? 0xFFFFFFFFu : static_cast<uint32_t>(us);
}

// --name value style options.
class Args {
 public:
  Args(int argc, char** argv) : argc_(argc), argv_(argv) {}
  bool Has(const std::string& name) const {
    for (int i = 1; i < argc_; ++i) {
      if (name == argv_[i]) return true;
    }
    return false;
  }
  std::string Str(const std::string& name, const std::string& def) const {
    for (int i = 1; i + 1 < argc_; ++i) {
      if (name == argv_[i]) return argv_[i + 1];
    }
    return def;
  }
  double Num(const std::string& name, double def) const {
    std::string v = Str(name, "");
    return v.empty() ? def : std::strtod(v.c_str(), nullptr);
  }

 private:
  int argc_;
  char** argv_;
};

}  // namespace bench
