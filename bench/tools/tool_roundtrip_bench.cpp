// tool_roundtrip_bench: the cost of calling a tool through cairn's API, beside the same-run floor.
//
//   tool_roundtrip_bench --port P [--host 127.0.0.1] [--server-pid PID] [--levels 1,16,64]
//                        [--seconds 10] [--warmup-seconds 1] [--timeout-ms 10000] [--ready-timeout 30]
//                        [--tools echo[,NAME...]]
//
// Two modes, measured back to back at each level (number of concurrent callers):
//   floor     POST /breadcrumbs {"schema_name":"bench.floor.v1","context":{"id":"<unique>"}}, then
//             wait for that create's own event on GET /events/stream?schema_name=bench.floor.v1.
//   roundtrip POST /breadcrumbs {"schema_name":"tool.request.v1","context":{"tool":"echo",
//             "input":{"n":i},"request_id":"<unique>"}}, then wait for the tool.response.v1 event
//             carrying that request_id on GET /events/stream?schema_name=tool.response.v1.
// The floor is what any write + notification costs; the round trip adds the executor's claim,
// run and answer, so roundtrip/floor throughput says what the executor path costs. With --tools
// (echo-like tools the caller defined) each caller's requests go to the tools in turn, so that
// several executors share the load (in a cluster, the workers holding their shards).
//
// Each caller is a thread with its own keep-alive connection and one request in flight (closed
// loop): stamp t0, POST, read the 201, wait for the event. Latency = t0 → the moment the SSE reader
// thread read the frame (not when the caller woke up: the client's own scheduling on a shared
// machine is not the server's cost). Both SSE streams are opened once, before any write, and stay
// open for the whole run. A (mode, level) runs --warmup-seconds unmeasured, then --seconds measured
// (requests whose t0 falls in that window); rps = measured completions / (window start → last
// caller done). Every correlation id is remembered, so at the end (after a 1 s grace) each one is
// checked to have produced exactly one event: missing, duplicated, late (after --timeout-ms),
// unexpected (an event for a failed POST) and foreign (an id this run never sent) are counted.
//
// Output on stdout (progress on stderr), one line per measurement:
//   RESULT mode=floor level=16 completed=... rps=... p50_ms=... p99_ms=... max_ms=... ...
//   RATIO level=16 floor_rps=... roundtrip_rps=... ratio=...
//   SERVER cpu_s=... rss_kb=... hwm_kb=... threads=...
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "../sse/bench_common.h"

namespace {

using bench::NowNs;

struct Options {
  std::string host = "127.0.0.1";
  int port = 0;
  pid_t server_pid = 0;
  std::vector<int> levels{1, 16, 64};
  double seconds = 10;
  double warmup_seconds = 1;
  int64_t timeout_ms = 10000;  // a caller gives up waiting for its event after this long
  double ready_timeout = 30;   // how long the echo tool may take to answer a first request
  std::vector<std::string> tools{"echo"};  // the requests' tools, in turn
  std::string auth_header;     // "Authorization: Bearer <key>\r\n" with --bearer, for a server with auth on
};
Options g_opt;
sockaddr_in g_addr{};
std::string g_nonce;  // makes this run's ids unique even against a reused server

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "tool_roundtrip_bench: %s\n", what.c_str());
  std::printf("error=%s\n", what.c_str());
  std::fflush(stdout);
  std::_Exit(1);
}

void Progress(const std::string& what) { std::fprintf(stderr, "[tool_roundtrip_bench] %s\n", what.c_str()); }

int64_t ParseInt(std::string_view s) {
  int64_t v = -1;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

bool StartsWithCi(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && strncasecmp(s.data(), prefix.data(), prefix.size()) == 0;
}

// The value of header `name` (case-insensitive) in a raw header block, or empty.
std::string_view HeaderValue(std::string_view head, std::string_view name) {
  for (size_t pos = 0; pos < head.size();) {
    size_t end = head.find("\r\n", pos);
    if (end == std::string_view::npos) end = head.size();
    std::string_view line = head.substr(pos, end - pos);
    if (line.size() > name.size() && line[name.size()] == ':' && StartsWithCi(line, name)) {
      std::string_view v = line.substr(name.size() + 1);
      while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
      return v;
    }
    pos = end + 2;
  }
  return {};
}

// A blocking TCP connection with Nagle off; send/receive time out after 30 s so a hung server
// cannot hang the benchmark (run.sh bounds the whole run as well). -1 on failure.
int Connect() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  timeval tv{30, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  if (connect(fd, reinterpret_cast<sockaddr*>(&g_addr), sizeof g_addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

bool SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t w = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (w <= 0) return false;
    data.remove_prefix(static_cast<size_t>(w));
  }
  return true;
}

// One HTTP/1.1 keep-alive connection, one request at a time (what a simple client does).
class HttpConn {
 public:
  ~HttpConn() { Close(); }

  // POSTs a JSON body to /breadcrumbs; the status, or 0 when the connection failed (it is then
  // reopened by the next call).
  int PostBreadcrumb(const std::string& body) {
    if (fd_ < 0 && (fd_ = Connect()) < 0) return 0;
    std::string req = "POST /breadcrumbs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                      "X-Cairn-Actor: bench:tools\r\n" + g_opt.auth_header + "Content-Length: " + std::to_string(body.size()) +
                      "\r\n\r\n" + body;
    int status = SendAll(fd_, req) ? ReadResponse() : 0;
    if (status == 0 || close_after_) Close();
    return status;
  }

 private:
  int ReadResponse() {
    in_.clear();
    size_t head_end;
    while ((head_end = in_.find("\r\n\r\n")) == std::string::npos) {
      if (!Fill()) return 0;
    }
    std::string_view head(in_.data(), head_end);
    int64_t length = std::max<int64_t>(ParseInt(HeaderValue(head, "Content-Length")), 0);
    close_after_ = StartsWithCi(HeaderValue(head, "Connection"), "close");
    int status = head.size() > 12 ? static_cast<int>(ParseInt(head.substr(9, 3))) : 0;
    while (in_.size() < head_end + 4 + static_cast<size_t>(length)) {
      if (!Fill()) return 0;
    }
    if (status != 201 && ++logged_ < 3) Progress("POST answered " + in_.substr(0, 300));
    return status;
  }
  bool Fill() {
    char buf[8192];
    ssize_t r = ::recv(fd_, buf, sizeof buf, 0);
    if (r <= 0) return false;
    in_.append(buf, static_cast<size_t>(r));
    return true;
  }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
    close_after_ = false;
  }
  int fd_ = -1;
  bool close_after_ = false;
  int logged_ = 0;
  std::string in_;
};

// ---------------------------------------------------------------------------------------------
// Every correlation id sent, and what arrived for it. One mutex for all: a few thousand events a
// second, and each caller waits on its own condition variable (no thundering herd at 64 callers).
struct Waiter {
  std::condition_variable cv;
};

struct Entry {
  int phase = 0;
  bool expected = true;   // false when the POST failed (no event should come)
  bool waited_out = false;  // the caller stopped waiting (timeout)
  bool tool_error = false;
  uint32_t count = 0;     // events received for this id
  int64_t event_ns = 0;   // receipt of the first one
  Waiter* waiter = nullptr;
};

class Tracker {
 public:
  Entry* Register(const std::string& id, int phase, Waiter* w) {
    std::lock_guard lock(mu_);
    Entry& e = entries_[id];  // node-based map: the pointer stays valid
    e.phase = phase;
    e.waiter = w;
    return &e;
  }
  void Unexpect(Entry* e) {
    std::lock_guard lock(mu_);
    e->expected = false;
    e->waiter = nullptr;
  }
  // Called by an SSE reader for each event carrying a correlation id.
  void Deliver(std::string_view id, int64_t now, bool tool_error) {
    std::lock_guard lock(mu_);
    auto it = entries_.find(std::string(id));
    if (it == entries_.end()) {
      ++foreign_;
      return;
    }
    Entry& e = it->second;
    if (++e.count == 1) {
      e.event_ns = now;
      e.tool_error = tool_error;
      if (e.waiter) e.waiter->cv.notify_one();
    }
  }
  // The receipt time of e's first event, or 0 when none came by `deadline_ns`.
  int64_t Wait(Entry* e, Waiter* w, int64_t deadline_ns) {
    std::unique_lock lock(mu_);
    auto deadline = std::chrono::steady_clock::time_point(std::chrono::nanoseconds(deadline_ns));
    w->cv.wait_until(lock, deadline, [&] { return e->count > 0; });  // steady_clock is CLOCK_MONOTONIC
    e->waiter = nullptr;
    if (e->count == 0) e->waited_out = true;
    return e->count > 0 ? e->event_ns : 0;
  }
  struct Check {
    uint64_t ids = 0, missing = 0, duplicates = 0, late = 0, unexpected = 0, tool_errors = 0;
  };
  Check CheckPhase(int phase) {
    std::lock_guard lock(mu_);
    Check c;
    for (const auto& [id, e] : entries_) {
      if (e.phase != phase) continue;
      ++c.ids;
      if (e.expected && e.count == 0) ++c.missing;
      if (e.count > 1) c.duplicates += e.count - 1;
      if (e.waited_out && e.count > 0) ++c.late;
      if (!e.expected && e.count > 0) ++c.unexpected;
      if (e.tool_error) ++c.tool_errors;
    }
    return c;
  }
  uint64_t foreign() {
    std::lock_guard lock(mu_);
    return foreign_;
  }

 private:
  std::mutex mu_;
  std::unordered_map<std::string, Entry> entries_;
  uint64_t foreign_ = 0;
};
Tracker g_tracker;

// ---------------------------------------------------------------------------------------------
// One SSE stream read by its own thread; each `data:` line's context."<key>" is the id delivered.
class SseReader {
 public:
  SseReader(std::string schema, std::string key) : schema_(std::move(schema)), key_("\"" + key + "\":\"") {}

  // Connects and returns once the server has sent ": stream open" (the stream is live: every
  // later event reaches it), so no write of the run can precede the subscription.
  void Open() {
    fd_ = Connect();
    if (fd_ < 0) Die("cannot connect the SSE stream");
    std::string req = "GET /events/stream?schema_name=" + schema_ +
                      " HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n" + g_opt.auth_header + "\r\n";
    if (!SendAll(fd_, req)) Die("cannot send the SSE request");
    int64_t give_up = NowNs() + 30'000'000'000;
    while (in_.find(": stream open") == std::string::npos) {
      if (!Fill() || NowNs() > give_up) Die("the SSE stream for " + schema_ + " did not open: " + in_.substr(0, 300));
    }
    if (in_.compare(9, 3, "200") != 0) Die("the SSE stream answered " + in_.substr(0, 300));
    in_.erase(0, in_.find("\r\n\r\n") + 4);
    thread_ = std::thread([this] { Loop(); });
  }
  void Stop() {
    stop_ = true;
    shutdown(fd_, SHUT_RDWR);  // wakes the blocked recv
    thread_.join();
    close(fd_);
  }
  uint64_t frames() const { return frames_; }
  bool dropped() const { return dropped_; }

 private:
  bool Fill() {
    char buf[65536];
    ssize_t r = ::recv(fd_, buf, sizeof buf, 0);
    if (r < 0 && (errno == EAGAIN || errno == EINTR) && !stop_) return true;  // idle: heartbeats are 15 s apart
    if (r <= 0) return false;
    in_.append(buf, static_cast<size_t>(r));
    return true;
  }
  void Loop() {
    while (!stop_) {
      if (!Fill()) {
        if (!stop_) {
          dropped_ = true;  // the stream must stay open; its loss shows as missing events
          Progress("the SSE stream for " + schema_ + " closed");
        }
        return;
      }
      int64_t now = NowNs();
      size_t scan = 0, end;
      while ((end = in_.find("\n\n", scan)) != std::string::npos) {
        Frame(std::string_view(in_).substr(scan, end - scan), now);
        scan = end + 2;
      }
      in_.erase(0, scan);
    }
  }
  void Frame(std::string_view frame, int64_t now) {
    size_t d = frame.find("data: ");
    if (d == std::string_view::npos) return;  // ": stream open" or another comment
    std::string_view data = frame.substr(d + 6);
    if (data.find("\"type\":\"stream.dropped\"") != std::string_view::npos) {
      dropped_ = true;
      Progress("stream " + schema_ + " dropped: " + std::string(data));
      return;
    }
    size_t ctx = data.find("\"context\":{");
    size_t at = ctx == std::string_view::npos ? ctx : data.find(key_, ctx);
    if (at == std::string_view::npos) return;  // a ping
    ++frames_;
    size_t begin = at + key_.size();
    std::string_view id = data.substr(begin, data.find('"', begin) - begin);
    // A tool response says "status":"success" or "status":"error" (tool_executor.h).
    bool tool_error = data.find("\"status\":\"error\"", ctx) != std::string_view::npos;
    g_tracker.Deliver(id, now, tool_error);
  }

  std::string schema_, key_, in_;
  int fd_ = -1;
  std::thread thread_;
  std::atomic<bool> stop_{false}, dropped_{false};
  std::atomic<uint64_t> frames_{0};
};

// ---------------------------------------------------------------------------------------------
// One (mode, level) measurement.
struct Phase {
  int index = 0;
  bool roundtrip = false;
  int level = 1;
  int64_t measure_ns = 0, end_ns = 0;
};

struct CallerStats {
  std::vector<uint32_t> lat_us, ack_us;  // measured requests: t0 → event, t0 → 201
  uint64_t completed = 0, http_errors = 0, timeouts = 0, event_before_ack = 0;
  int64_t done_ns = 0;
};

std::string Body(const Phase& ph, const std::string& id, uint64_t n, const std::string& tool = g_opt.tools.front()) {
  if (!ph.roundtrip) return R"({"title":"bench","schema_name":"bench.floor.v1","context":{"id":")" + id + "\"}}";
  return R"({"title":"bench","schema_name":"tool.request.v1","context":{"tool":")" + tool + R"(","input":{"n":)" +
         std::to_string(n) + R"(},"request_id":")" + id + "\"}}";
}

void Caller(const Phase& ph, int c, CallerStats& out) {
  HttpConn conn;
  Waiter waiter;
  std::string prefix = g_nonce + (ph.roundtrip ? "-r" : "-f") + std::to_string(ph.level) + "-" + std::to_string(c) + "-";
  for (uint64_t n = 0;; ++n) {
    int64_t t0 = NowNs();
    if (t0 >= ph.end_ns) break;
    bool measured = t0 >= ph.measure_ns;
    std::string id = prefix + std::to_string(n);
    Entry* e = g_tracker.Register(id, ph.index, &waiter);  // before the POST: the event may beat the 201
    int status = conn.PostBreadcrumb(Body(ph, id, n, g_opt.tools[(c + n) % g_opt.tools.size()]));
    int64_t t_ack = NowNs();
    if (status != 201) {
      g_tracker.Unexpect(e);
      if (measured) ++out.http_errors;
      bench::SleepMs(10);  // no hot loop against a failing server
      continue;
    }
    int64_t t_event = g_tracker.Wait(e, &waiter, t_ack + g_opt.timeout_ms * 1'000'000);
    if (!measured) continue;
    if (t_event == 0) {
      ++out.timeouts;
      continue;
    }
    ++out.completed;
    if (t_event < t_ack) ++out.event_before_ack;
    out.lat_us.push_back(bench::ToUs(t_event - t0));
    out.ack_us.push_back(bench::ToUs(t_ack - t0));
  }
  out.done_ns = NowNs();
}

struct PhaseResult {
  Phase ph;
  CallerStats total;
  double seconds = 0, rps = 0, server_cpu_s = 0, client_cpu_s = 0;
};

PhaseResult RunPhase(Phase ph) {
  int64_t start = NowNs();
  ph.measure_ns = start + static_cast<int64_t>(g_opt.warmup_seconds * 1e9);
  ph.end_ns = ph.measure_ns + static_cast<int64_t>(g_opt.seconds * 1e9);
  Progress(std::string(ph.roundtrip ? "roundtrip" : "floor") + " with " + std::to_string(ph.level) + " callers");
  std::vector<CallerStats> stats(static_cast<size_t>(ph.level));
  std::vector<std::thread> threads;
  for (int c = 0; c < ph.level; ++c) threads.emplace_back(Caller, std::cref(ph), c, std::ref(stats[static_cast<size_t>(c)]));
  bench::SleepMs(std::max<int64_t>(ph.measure_ns - NowNs(), 0) / 1'000'000);
  double cpu0 = bench::ProcCpuSeconds(g_opt.server_pid), self0 = bench::SelfCpuSeconds();
  for (auto& t : threads) t.join();
  PhaseResult r{ph, {}, 0, 0, bench::ProcCpuSeconds(g_opt.server_pid) - cpu0, bench::SelfCpuSeconds() - self0};
  int64_t last_done = ph.measure_ns;
  for (auto& s : stats) {
    r.total.lat_us.insert(r.total.lat_us.end(), s.lat_us.begin(), s.lat_us.end());
    r.total.ack_us.insert(r.total.ack_us.end(), s.ack_us.begin(), s.ack_us.end());
    r.total.completed += s.completed;
    r.total.http_errors += s.http_errors;
    r.total.timeouts += s.timeouts;
    r.total.event_before_ack += s.event_before_ack;
    last_done = std::max(last_done, s.done_ns);
  }
  r.seconds = static_cast<double>(last_done - ph.measure_ns) / 1e9;
  r.rps = r.seconds > 0 ? static_cast<double>(r.total.completed) / r.seconds : 0;
  Progress("  " + std::to_string(r.total.completed) + " in " + std::to_string(r.seconds) + " s = " +
           std::to_string(static_cast<int64_t>(r.rps)) + "/s, p99 " +
           std::to_string(bench::Quantile(r.total.lat_us, 0.99) / 1000.0) + " ms");
  return r;
}

// Waits until every tool answers a request: at start-up the built-in tools are registered and
// their executors started, and a request written before that would only be answered by a
// consumer that starts behind it. Returns the seconds it took.
double AwaitEcho() {
  HttpConn conn;
  Waiter waiter;
  Phase probe{-1, true, 0, 0, 0};
  int64_t start = NowNs(), give_up = start + static_cast<int64_t>(g_opt.ready_timeout * 1e9);
  int n = 0;
  for (const std::string& tool : g_opt.tools) {
    for (bool answered = false; !answered; ++n) {
      if (NowNs() >= give_up) {
        Die("the tool " + tool + " did not answer within " + std::to_string(g_opt.ready_timeout) +
            " s (is --run-executors off?)");
      }
      std::string id = g_nonce + "-probe-" + std::to_string(n);
      Entry* e = g_tracker.Register(id, -1, &waiter);
      int status = conn.PostBreadcrumb(Body(probe, id, 0, tool));
      if (status != 201) {
        g_tracker.Unexpect(e);
        bench::SleepMs(200);
        continue;
      }
      answered = g_tracker.Wait(e, &waiter, std::min(give_up, NowNs() + 2'000'000'000)) != 0;
    }
  }
  return static_cast<double>(NowNs() - start) / 1e9;
}

double Ms(uint32_t us) { return us / 1000.0; }

}  // namespace

int main(int argc, char** argv) {
  bench::Args args(argc, argv);
  g_opt.host = args.Str("--host", g_opt.host);
  g_opt.port = static_cast<int>(args.Num("--port", 0));
  g_opt.server_pid = static_cast<pid_t>(args.Num("--server-pid", 0));
  g_opt.seconds = args.Num("--seconds", g_opt.seconds);
  g_opt.warmup_seconds = args.Num("--warmup-seconds", g_opt.warmup_seconds);
  g_opt.timeout_ms = static_cast<int64_t>(args.Num("--timeout-ms", static_cast<double>(g_opt.timeout_ms)));
  g_opt.ready_timeout = args.Num("--ready-timeout", g_opt.ready_timeout);
  if (std::string tools = args.Str("--tools", ""); !tools.empty()) {  // as --levels is read
    for (char& ch : tools) ch = (ch == ',') ? ' ' : ch;
    std::istringstream in(tools);
    std::vector<std::string> names;
    for (std::string name; in >> name;) names.push_back(name);
    if (!names.empty()) g_opt.tools = std::move(names);
  }
  if (std::string key = args.Str("--bearer", ""); !key.empty()) g_opt.auth_header = "Authorization: Bearer " + key + "\r\n";
  if (std::string levels = args.Str("--levels", ""); !levels.empty()) {
    g_opt.levels.clear();
    for (char& ch : levels) ch = (ch == ',') ? ' ' : ch;
    std::istringstream in(levels);
    for (int l; in >> l;) g_opt.levels.push_back(l);
  }
  bool bad_levels = g_opt.levels.empty();
  for (int l : g_opt.levels) bad_levels |= l < 1 || l > 1000;
  if (args.Has("--help") || g_opt.port <= 0 || g_opt.seconds <= 0 || bad_levels) {
    std::fprintf(stderr, "usage: tool_roundtrip_bench --port P [--host 127.0.0.1] [--server-pid PID] [--levels 1,16,64]\n"
                         "         [--seconds 10] [--warmup-seconds 1] [--timeout-ms 10000] [--ready-timeout 30] [--bearer KEY]\n"
                         "         [--tools echo[,NAME...]]\n");
    return 2;
  }
  g_addr.sin_family = AF_INET;
  g_addr.sin_port = htons(static_cast<uint16_t>(g_opt.port));
  if (inet_pton(AF_INET, g_opt.host.c_str(), &g_addr.sin_addr) != 1) Die("bad --host");
  bench::RaiseNofile();
  g_nonce = "b" + std::to_string(getpid()) + "x" + std::to_string(NowNs() % 1000000);
  std::printf("seconds=%.1f\nwarmup_seconds=%.1f\ntimeout_ms=%lld\nlevels=", g_opt.seconds, g_opt.warmup_seconds,
              static_cast<long long>(g_opt.timeout_ms));
  for (int l : g_opt.levels) std::printf("%d ", l);
  std::printf("\n");

  // Both streams first, so every write of the run happens after its subscription is live.
  SseReader floor_stream("bench.floor.v1", "id"), tool_stream("tool.response.v1", "request_id");
  floor_stream.Open();
  tool_stream.Open();
  std::printf("echo_ready_s=%.3f\n", AwaitEcho());
  std::fflush(stdout);

  std::vector<PhaseResult> results;
  int index = 0;
  for (int level : g_opt.levels) {  // floor and round trip of a level back to back: same machine state
    results.push_back(RunPhase(Phase{index++, false, level, 0, 0}));
    results.push_back(RunPhase(Phase{index++, true, level, 0, 0}));
  }
  bench::SleepMs(1000);  // grace: a duplicate or late event would arrive by now
  floor_stream.Stop();
  tool_stream.Stop();

  for (PhaseResult& r : results) {
    Tracker::Check c = g_tracker.CheckPhase(r.ph.index);
    CallerStats& t = r.total;
    std::printf("RESULT mode=%s level=%d completed=%llu seconds=%.3f rps=%.1f p50_ms=%.3f p90_ms=%.3f p99_ms=%.3f "
                "max_ms=%.3f ack_p50_ms=%.3f ack_p99_ms=%.3f http_errors=%llu timeouts=%llu ids=%llu missing=%llu "
                "duplicates=%llu late=%llu unexpected=%llu tool_errors=%llu event_before_ack=%llu server_cpu_s=%.3f "
                "server_cpu_us_per_req=%.0f client_cpu_s=%.3f\n",
                r.ph.roundtrip ? "roundtrip" : "floor", r.ph.level, static_cast<unsigned long long>(t.completed),
                r.seconds, r.rps, Ms(bench::Quantile(t.lat_us, 0.5)), Ms(bench::Quantile(t.lat_us, 0.9)),
                Ms(bench::Quantile(t.lat_us, 0.99)), Ms(bench::MaxOf(t.lat_us)), Ms(bench::Quantile(t.ack_us, 0.5)),
                Ms(bench::Quantile(t.ack_us, 0.99)), static_cast<unsigned long long>(t.http_errors),
                static_cast<unsigned long long>(t.timeouts), static_cast<unsigned long long>(c.ids),
                static_cast<unsigned long long>(c.missing), static_cast<unsigned long long>(c.duplicates),
                static_cast<unsigned long long>(c.late), static_cast<unsigned long long>(c.unexpected),
                static_cast<unsigned long long>(c.tool_errors), static_cast<unsigned long long>(t.event_before_ack),
                r.server_cpu_s, t.completed ? r.server_cpu_s * 1e6 / static_cast<double>(t.completed) : 0,
                r.client_cpu_s);
  }
  for (size_t i = 0; i + 1 < results.size(); i += 2) {
    double f = results[i].rps, rt = results[i + 1].rps;
    std::printf("RATIO level=%d floor_rps=%.1f roundtrip_rps=%.1f ratio=%.3f\n", results[i].ph.level, f, rt,
                f > 0 ? rt / f : 0);
  }
  pid_t pid = g_opt.server_pid;
  std::printf("STREAMS floor_frames=%llu tool_frames=%llu dropped=%d foreign=%llu\n",
              static_cast<unsigned long long>(floor_stream.frames()), static_cast<unsigned long long>(tool_stream.frames()),
              floor_stream.dropped() || tool_stream.dropped() ? 1 : 0, static_cast<unsigned long long>(g_tracker.foreign()));
  std::printf("SERVER cpu_s=%.3f rss_kb=%lld hwm_kb=%lld threads=%lld\n", bench::ProcCpuSeconds(pid),
              static_cast<long long>(bench::ProcStatus(pid, "VmRSS")), static_cast<long long>(bench::ProcStatus(pid, "VmHWM")),
              static_cast<long long>(bench::ProcStatus(pid, "Threads")));
  std::fflush(stdout);
  return 0;
}
