// sse_fanout_bench: N SSE subscribers of a running cairn server while writes arrive at a fixed rate.
//
//   sse_fanout_bench --port P [--server-pid PID] [--subscribers 1000] [--groups 10] [--rate 2000]
//                    [--seconds 30] [--writers 64] [--context-bytes 128] [--warmup-seconds 1]
//                    [--drain-seconds 300] [--stall-seconds 10] [--open-timeout 60] [--idle-settle-ms 2000]
//
// One process, two threads, epoll, loopback HTTP/1.1 (no library):
//  - Writer thread: `--writers` keep-alive connections POST /breadcrumbs at `--rate` per second for
//    `--seconds` (write k is due at t0 + k/rate; a write waits for a free connection if all are
//    busy, and that wait is reported as write_send_lag). Write k carries the tags
//    ["bench", "group:<k % groups>"] and the context {"cairn_bench_i": k, "pad": "..."} (the
//    context is `--context-bytes` long). Its acknowledgement time is when the whole 201 response
//    has been read.
//  - Main thread: `--subscribers` streams GET /events/stream?tag=group:<i % groups>, so each one
//    matches 1/groups of the writes (10 % with 10 groups). For each frame it records
//      latency_ack  = frame receipt − acknowledgement of the write (the headline figure); a frame
//                     read before its write's 201 was read counts as 0 (frames_before_ack says how
//                     often), since the server announces a write once it is committed, which can
//                     precede the response on the wire;
//      latency_send = frame receipt − the time the POST was sent (never negative: an upper bound).
//    It checks, per subscriber, that the events received are exactly the acknowledged writes of
//    its group: none missing (lost), none twice (duplicated), seqs strictly increasing, no write of
//    another group (mismatched). A stream that is dropped (stream.dropped frame) or closed is
//    reconnected with Last-Event-ID: <last seq received>, as a client should; that is counted.
//
// Memory per idle stream: server VmRSS with every stream open and idle (after --idle-settle-ms)
// minus VmRSS just before the streams were opened (after the warm-up writes), divided by N.
// Server CPU: utime+stime from /proc/<pid>/stat over the measured phase (first write sent → every
// expected frame received; or no frame for --stall-seconds, or --drain-seconds after the last write:
// end_reason says which. Frames missing then are counted as lost: a server that is merely behind
// keeps delivering, so a stall with frames missing means they are not coming). Output: key=value lines on stdout, progress on stderr.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <memory>
#include <string_view>
#include <thread>

#include "bench_common.h"

namespace {

using bench::NowNs;

struct Options {
  std::string host = "127.0.0.1";
  int port = 0;
  pid_t server_pid = 0;
  int subscribers = 1000;
  int groups = 10;
  double rate = 2000;
  double seconds = 30;
  int writers = 64;
  int context_bytes = 128;
  double warmup_seconds = 1;
  double drain_seconds = 300;  // at most this long after the last write for the frames still due
  double stall_seconds = 10;   // ... and stop earlier when no frame arrived for this long
  double open_timeout = 60;
  int idle_settle_ms = 2000;
};

Options g_opt;
sockaddr_in g_addr{};

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "sse_fanout_bench: %s\n", what.c_str());
  std::printf("error=%s\n", what.c_str());
  std::fflush(stdout);
  std::exit(1);
}

void Progress(const std::string& what) {
  std::fprintf(stderr, "[sse_fanout_bench] %s\n", what.c_str());
}

int SetNonBlocking(int fd) { return fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

// A non-blocking TCP socket with connect() started; -1 on an immediate failure.
int StartConnect() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (connect(fd, reinterpret_cast<sockaddr*>(&g_addr), sizeof g_addr) != 0 && errno != EINPROGRESS) {
    close(fd);
    return -1;
  }
  return fd;
}

int ConnectBlocking() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (connect(fd, reinterpret_cast<sockaddr*>(&g_addr), sizeof g_addr) != 0) {
    close(fd);
    return -1;
  }
  SetNonBlocking(fd);
  return fd;
}

bool StartsWithCi(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) != std::tolower(static_cast<unsigned char>(prefix[i]))) return false;
  }
  return true;
}

// The value of a header in a raw header block ("Name: value\r\n..."), or empty.
std::string_view HeaderValue(std::string_view head, std::string_view name) {
  size_t pos = 0;
  while (pos < head.size()) {
    size_t end = head.find("\r\n", pos);
    if (end == std::string_view::npos) end = head.size();
    std::string_view line = head.substr(pos, end - pos);
    if (StartsWithCi(line, name) && line.size() > name.size() && line[name.size()] == ':') {
      std::string_view v = line.substr(name.size() + 1);
      while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
      return v;
    }
    pos = end + 2;
  }
  return {};
}

int64_t ParseInt(std::string_view s) {
  int64_t v = -1;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

// ---------------------------------------------------------------------------------------------
// Shared state of the measured writes.
enum WriteState : uint8_t { kPending = 0, kAcked = 1, kFailed = 2, kUnknown = 3 };

struct Writes {
  explicit Writes(int64_t n) : total(n), send_ns(n), ack_ns(n), state(n), due_lag_us() {}
  int64_t total;
  std::vector<std::atomic<int64_t>> send_ns;
  std::vector<std::atomic<int64_t>> ack_ns;
  std::vector<std::atomic<uint8_t>> state;
  std::vector<uint32_t> due_lag_us;    // writer thread only
  std::vector<uint32_t> ack_lat_us;    // writer thread only: send → 201
  int64_t first_send_ns = 0, last_ack_ns = 0;
  int64_t status_counts[6] = {};       // 1xx..5xx, [0] = connection lost
  std::atomic<bool> done{false};
};

// ---------------------------------------------------------------------------------------------
// Writers: M keep-alive connections, one request in flight each, paced at a fixed rate.
class Writer {
 public:
  explicit Writer(int connections) : conns_(static_cast<size_t>(connections)) {
    epfd_ = epoll_create1(EPOLL_CLOEXEC);
    for (size_t i = 0; i < conns_.size(); ++i) Open(i);
  }

  // Writes n breadcrumbs at `rate`/s. With `writes`, they are the measured ones (context key
  // cairn_bench_i); without, warm-up writes (cairn_bench_w) nobody checks.
  void Run(int64_t n, double rate, Writes* writes, double timeout_s) {
    writes_ = writes;
    int64_t t0 = NowNs();
    if (writes) writes->first_send_ns = t0;
    int64_t deadline = t0 + static_cast<int64_t>((static_cast<double>(n) / rate + timeout_s) * 1e9);
    int64_t next = 0, inflight = 0;
    std::vector<size_t> free_list;
    for (size_t i = conns_.size(); i-- > 0;) free_list.push_back(i);
    epoll_event events[256];
    while (next < n || inflight > 0) {
      int64_t now = NowNs();
      if (now > deadline) {
        Progress("writers: deadline reached with " + std::to_string(inflight) + " in flight, " +
                 std::to_string(n - next) + " not sent");
        break;
      }
      while (next < n && !free_list.empty()) {
        int64_t due = t0 + static_cast<int64_t>(static_cast<double>(next) * 1e9 / rate);
        if (due > now) break;
        size_t c = free_list.back();
        free_list.pop_back();
        Send(c, next, now, due);
        ++next;
        ++inflight;
      }
      int timeout_ms = 100;
      if (next < n && !free_list.empty()) {
        int64_t due = t0 + static_cast<int64_t>(static_cast<double>(next) * 1e9 / rate);
        int64_t wait = due - NowNs();
        timeout_ms = wait <= 0 ? 0 : static_cast<int>((wait + 999'999) / 1'000'000);
      }
      int got = epoll_wait(epfd_, events, 256, timeout_ms);
      for (int e = 0; e < got; ++e) {
        size_t c = events[e].data.u64;
        Conn& conn = conns_[c];
        if (events[e].events & EPOLLOUT) Flush(c);
        if (events[e].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
          int finished = Read(c);
          if (finished < 0) {  // connection lost: the request in flight has an unknown outcome
            if (conn.idx >= 0) {
              Finish(conn, 0);
              --inflight;
            }
            Reopen(c);
            free_list.push_back(c);
          } else if (finished > 0) {
            --inflight;
            if (conn.close_after) {
              Reopen(c);
            }
            free_list.push_back(c);
          }
        }
      }
    }
    // Whatever is still in flight has an unknown outcome.
    for (size_t c = 0; c < conns_.size(); ++c) {
      if (conns_[c].idx >= 0) {
        Finish(conns_[c], 0);
        Reopen(c);
      }
    }
    if (writes) writes->done.store(true);
    writes_ = nullptr;
  }

  int64_t sent_ok() const { return ok_; }

 private:
  struct Conn {
    int fd = -1;
    std::string out;
    size_t out_off = 0;
    std::string in;
    int64_t idx = -1;   // the write in flight
    int64_t sent_at = 0;
    bool close_after = false;
  };

  void Open(size_t c) {
    int fd = -1;
    for (int attempt = 0; attempt < 50 && fd < 0; ++attempt) {
      fd = ConnectBlocking();
      if (fd < 0) bench::SleepMs(100);
    }
    if (fd < 0) Die("writer: cannot connect to the server");
    conns_[c] = Conn{};
    conns_[c].fd = fd;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = c;
    epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev);
  }

  void Reopen(size_t c) {
    if (conns_[c].fd >= 0) {
      epoll_ctl(epfd_, EPOLL_CTL_DEL, conns_[c].fd, nullptr);
      close(conns_[c].fd);
    }
    Open(c);
  }

  void Send(size_t c, int64_t k, int64_t now, int64_t due) {
    Conn& conn = conns_[c];
    int group = static_cast<int>(k % g_opt.groups);
    std::string context = writes_ ? "{\"cairn_bench_i\":" + std::to_string(k) + ",\"pad\":\""
                                  : "{\"cairn_bench_w\":" + std::to_string(k) + ",\"pad\":\"";
    int pad = g_opt.context_bytes - static_cast<int>(context.size()) - 2;
    context.append(static_cast<size_t>(std::max(pad, 0)), 'x');
    context += "\"}";
    std::string body = "{\"schema_name\":\"bench.sse.v1\",\"title\":\"sse bench " + std::to_string(k) +
                       "\",\"tags\":[\"bench\",\"group:" + std::to_string(group) + "\"],\"context\":" + context + "}";
    conn.out = "POST /breadcrumbs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
               "X-Cairn-Actor: bench:sse\r\nContent-Length: " +
               std::to_string(body.size()) + "\r\n\r\n" + body;
    conn.out_off = 0;
    conn.idx = k;
    conn.sent_at = now;
    if (writes_) {
      writes_->send_ns[static_cast<size_t>(k)].store(now, std::memory_order_relaxed);
      writes_->due_lag_us.push_back(bench::ToUs(now - due));
    }
    Flush(c);
  }

  void Flush(size_t c) {
    Conn& conn = conns_[c];
    while (conn.out_off < conn.out.size()) {
      ssize_t w = ::send(conn.fd, conn.out.data() + conn.out_off, conn.out.size() - conn.out_off, MSG_NOSIGNAL);
      if (w < 0) {
        if (errno == EAGAIN) break;
        return;  // the read side reports the failure
      }
      conn.out_off += static_cast<size_t>(w);
    }
    epoll_event ev{};
    ev.events = EPOLLIN | (conn.out_off < conn.out.size() ? static_cast<uint32_t>(EPOLLOUT) : 0u);
    ev.data.u64 = c;
    epoll_ctl(epfd_, EPOLL_CTL_MOD, conn.fd, &ev);
  }

  // Reads what is there; 1 when the response of the request in flight is complete, 0 when more
  // is needed, -1 when the connection is gone.
  int Read(size_t c) {
    Conn& conn = conns_[c];
    char buf[16384];
    for (;;) {
      ssize_t r = ::recv(conn.fd, buf, sizeof buf, 0);
      if (r > 0) {
        conn.in.append(buf, static_cast<size_t>(r));
        continue;
      }
      if (r == 0) return -1;
      if (errno == EAGAIN) break;
      return -1;
    }
    size_t head_end = conn.in.find("\r\n\r\n");
    if (head_end == std::string::npos) return 0;
    std::string_view head(conn.in.data(), head_end);
    int64_t length = ParseInt(HeaderValue(head, "Content-Length"));
    if (length < 0) length = 0;
    if (conn.in.size() < head_end + 4 + static_cast<size_t>(length)) return 0;
    int status = head.size() > 12 ? static_cast<int>(ParseInt(head.substr(9, 3))) : 0;
    std::string_view connection = HeaderValue(head, "Connection");
    conn.close_after = StartsWithCi(connection, "close");
    if (conn.idx < 0) return -1;  // a response nobody asked for
    conn.in.erase(0, head_end + 4 + static_cast<size_t>(length));
    Finish(conn, status);
    return 1;
  }

  void Finish(Conn& conn, int status) {
    int64_t now = NowNs();
    if (status == 201) ++ok_;
    if (writes_ && conn.idx >= 0) {
      size_t k = static_cast<size_t>(conn.idx);
      if (status == 201) {
        writes_->ack_ns[k].store(now, std::memory_order_release);
        writes_->state[k].store(kAcked, std::memory_order_release);
        writes_->ack_lat_us.push_back(bench::ToUs(now - conn.sent_at));
        writes_->last_ack_ns = now;
      } else {
        writes_->state[k].store(status == 0 ? kUnknown : kFailed, std::memory_order_release);
      }
      writes_->status_counts[status / 100 < 6 ? status / 100 : 0]++;
    }
    conn.idx = -1;
  }

  std::vector<Conn> conns_;
  int epfd_ = -1;
  Writes* writes_ = nullptr;
  int64_t ok_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Subscribers.
struct Sub {
  int fd = -1;
  int group = 0;
  enum State { kIdle, kConnecting, kHeader, kStreaming } state = kIdle;
  std::string in;
  size_t scan = 0;                 // frames before this offset are processed
  bool opened = false;             // the first ": stream open" comment arrived (first connection)
  int64_t last_seq = 0;            // highest event seq received
  int64_t reconnect_at = 0;        // kIdle: when to connect again
  std::vector<uint8_t> seen;       // by k / groups: how often write k arrived (saturating)
  uint32_t received = 0, duplicated = 0, out_of_order = 0, mismatched = 0;
  uint32_t drops = 0, reconnects = 0, foreign = 0, pings = 0, bad_status = 0;
};

class Subscribers {
 public:
  Subscribers(int n, Writes& writes) : subs_(static_cast<size_t>(n)), writes_(writes) {
    epfd_ = epoll_create1(EPOLL_CLOEXEC);
    size_t per = static_cast<size_t>(writes.total / g_opt.groups + 1);
    for (int i = 0; i < n; ++i) {
      subs_[static_cast<size_t>(i)].group = i % g_opt.groups;
      subs_[static_cast<size_t>(i)].seen.assign(per, 0);
    }
    lat_ack_.reserve(static_cast<size_t>(static_cast<double>(writes.total) * n / g_opt.groups) + 16);
    lat_send_.reserve(lat_ack_.capacity());
  }

  void OpenAll() {
    for (size_t i = 0; i < subs_.size(); ++i) Connect(i);
  }
  int opened() const { return opened_; }
  int streaming() const { return streaming_; }

  // Runs the loop for up to `ms` milliseconds (or until stop() says so).
  template <typename Stop>
  void Poll(int64_t until_ns, Stop stop) {
    epoll_event events[512];
    while (NowNs() < until_ns && !stop()) {
      int got = epoll_wait(epfd_, events, 512, 5);
      int64_t now = NowNs();
      for (int e = 0; e < got; ++e) Handle(static_cast<size_t>(events[e].data.u64), events[e].events, now);
      if (now >= next_retry_check_) {
        next_retry_check_ = now + 50'000'000;
        for (size_t i = 0; i < subs_.size(); ++i) {
          if (subs_[i].state == Sub::kIdle && subs_[i].reconnect_at > 0 && now >= subs_[i].reconnect_at) Connect(i);
        }
      }
    }
  }

  uint64_t delivered() const { return delivered_; }
  int64_t last_frame_ns() const { return last_frame_ns_; }
  int64_t first_frame_ns() const { return first_frame_ns_; }
  std::vector<Sub>& subs() { return subs_; }
  std::vector<uint32_t>& lat_ack() { return lat_ack_; }
  std::vector<uint32_t>& lat_send() { return lat_send_; }
  uint64_t frames_before_ack() const { return before_ack_; }
  uint64_t unacked_delivered() const { return unacked_; }
  uint64_t data_bytes() const { return data_bytes_; }
  uint64_t connect_failures() const { return connect_failures_; }

 private:
  void Connect(size_t i) {
    Sub& s = subs_[i];
    s.fd = StartConnect();
    if (s.fd < 0) {
      ++connect_failures_;
      s.state = Sub::kIdle;
      s.reconnect_at = NowNs() + 200'000'000;
      return;
    }
    s.state = Sub::kConnecting;
    s.in.clear();
    s.scan = 0;
    epoll_event ev{};
    ev.events = EPOLLOUT | EPOLLIN;
    ev.data.u64 = i;
    epoll_ctl(epfd_, EPOLL_CTL_ADD, s.fd, &ev);
  }

  void Lost(size_t i, int64_t now) {
    Sub& s = subs_[i];
    if (s.fd >= 0) {
      epoll_ctl(epfd_, EPOLL_CTL_DEL, s.fd, nullptr);
      close(s.fd);
    }
    if (s.state == Sub::kStreaming) --streaming_;
    s.fd = -1;
    s.state = Sub::kIdle;
    s.reconnect_at = now + 100'000'000;
    ++s.reconnects;
  }

  void Handle(size_t i, uint32_t ev, int64_t now) {
    Sub& s = subs_[i];
    if (s.state == Sub::kConnecting) {
      int err = 0;
      socklen_t len = sizeof err;
      getsockopt(s.fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err != 0 || (ev & (EPOLLERR | EPOLLHUP))) {
        ++connect_failures_;
        return Lost(i, now);
      }
      if (!(ev & EPOLLOUT)) return;
      std::string req = "GET /events/stream?tag=group:" + std::to_string(s.group) +
                        " HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n";
      if (s.opened) req += "Last-Event-ID: " + std::to_string(s.last_seq) + "\r\n";
      req += "\r\n";
      if (::send(s.fd, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size())) return Lost(i, now);
      s.state = Sub::kHeader;
      epoll_event mod{};
      mod.events = EPOLLIN;
      mod.data.u64 = i;
      epoll_ctl(epfd_, EPOLL_CTL_MOD, s.fd, &mod);
      return;
    }
    char buf[65536];
    for (;;) {
      ssize_t r = ::recv(s.fd, buf, sizeof buf, 0);
      if (r > 0) {
        s.in.append(buf, static_cast<size_t>(r));
        if (static_cast<size_t>(r) < sizeof buf) break;
        continue;
      }
      if (r == 0 || errno != EAGAIN) {
        Process(i, now);
        return Lost(i, now);
      }
      break;
    }
    Process(i, now);
  }

  void Process(size_t i, int64_t now) {
    Sub& s = subs_[i];
    if (s.state == Sub::kHeader) {
      size_t end = s.in.find("\r\n\r\n");
      if (end == std::string::npos) return;
      std::string_view head(s.in.data(), end);
      if (head.size() < 12 || head.substr(9, 3) != "200") {
        ++s.bad_status;
        Progress("stream " + std::to_string(i) + ": " + std::string(head.substr(0, head.find("\r\n"))) + " " +
                 s.in.substr(end + 4, 300));
        s.in.clear();
        Lost(i, now);
        return;
      }
      s.state = Sub::kStreaming;
      ++streaming_;
      s.scan = end + 4;
    }
    if (s.state != Sub::kStreaming) return;
    for (;;) {
      size_t end = s.in.find("\n\n", s.scan);
      if (end == std::string::npos) break;
      Frame(s, std::string_view(s.in).substr(s.scan, end - s.scan), now);
      s.scan = end + 2;
      if (s.state != Sub::kStreaming) return;  // dropped
    }
    if (s.scan > 0 && (s.scan > 65536 || s.scan == s.in.size())) {
      s.in.erase(0, s.scan);
      s.scan = 0;
    }
  }

  void Frame(Sub& s, std::string_view frame, int64_t now) {
    int64_t seq = 0;
    std::string_view data;
    size_t pos = 0;
    while (pos < frame.size()) {
      size_t end = frame.find('\n', pos);
      if (end == std::string_view::npos) end = frame.size();
      std::string_view line = frame.substr(pos, end - pos);
      if (line.starts_with("id: ")) seq = ParseInt(line.substr(4));
      else if (line.starts_with("data: ")) data = line.substr(6);
      else if (line == ": stream open" && !s.opened) {
        s.opened = true;
        ++opened_;
      }
      pos = end + 1;
    }
    if (data.empty()) return;
    constexpr std::string_view kKey = "\"cairn_bench_i\":";
    size_t at = data.find(kKey);
    if (at == std::string_view::npos) {
      if (data.find("\"type\":\"ping\"") != std::string_view::npos) {
        ++s.pings;
      } else if (data.find("\"type\":\"stream.dropped\"") != std::string_view::npos) {
        ++s.drops;
        Progress("stream of group " + std::to_string(s.group) + " dropped: " + std::string(data));
        // Reconnect with Last-Event-ID: the highest seq received (the caller reconnects after the
        // connection closes, which the server does after this frame).
      } else {
        ++s.foreign;  // e.g. a warm-up write seen after a reconnect from seq 0
        if (seq > s.last_seq) s.last_seq = seq;
      }
      return;
    }
    int64_t k = ParseInt(data.substr(at + kKey.size()));
    data_bytes_ += data.size();
    if (seq <= s.last_seq) ++s.out_of_order;
    else s.last_seq = seq;
    if (k < 0 || k >= writes_.total) {
      ++s.mismatched;
      return;
    }
    if (k % g_opt.groups != s.group) ++s.mismatched;
    uint8_t& seen = s.seen[static_cast<size_t>(k / g_opt.groups)];
    if (seen > 0) ++s.duplicated;
    if (seen < 255) ++seen;
    ++s.received;
    ++delivered_;
    if (first_frame_ns_ == 0) first_frame_ns_ = now;
    last_frame_ns_ = now;
    size_t ku = static_cast<size_t>(k);
    int64_t sent = writes_.send_ns[ku].load(std::memory_order_relaxed);
    uint8_t state = writes_.state[ku].load(std::memory_order_acquire);
    lat_send_.push_back(bench::ToUs(now - sent));
    if (state == kAcked) {
      lat_ack_.push_back(bench::ToUs(now - writes_.ack_ns[ku].load(std::memory_order_relaxed)));
    } else if (state == kPending) {
      lat_ack_.push_back(0);  // the frame was read before the 201
      ++before_ack_;
    } else {
      ++unacked_;  // the write failed or its outcome is unknown, yet it was announced
    }
  }

  std::vector<Sub> subs_;
  Writes& writes_;
  int epfd_ = -1;
  int opened_ = 0, streaming_ = 0;
  int64_t next_retry_check_ = 0;
  uint64_t delivered_ = 0, before_ack_ = 0, unacked_ = 0, data_bytes_ = 0, connect_failures_ = 0;
  int64_t first_frame_ns_ = 0, last_frame_ns_ = 0;
  std::vector<uint32_t> lat_ack_, lat_send_;
};

void Usage() {
  std::fprintf(stderr,
               "usage: sse_fanout_bench --port P [--host 127.0.0.1] [--server-pid PID] [--subscribers 1000]\n"
               "         [--groups 10] [--rate 2000] [--seconds 30] [--writers 64] [--context-bytes 128]\n"
               "         [--warmup-seconds 1] [--drain-seconds 300] [--stall-seconds 10] [--open-timeout 60]\n"
               "         [--idle-settle-ms 2000]\n");
}

}  // namespace

int main(int argc, char** argv) {
  bench::Args args(argc, argv);
  if (args.Has("--help") || args.Has("-h")) {
    Usage();
    return 0;
  }
  g_opt.host = args.Str("--host", g_opt.host);
  g_opt.port = static_cast<int>(args.Num("--port", 0));
  g_opt.server_pid = static_cast<pid_t>(args.Num("--server-pid", 0));
  g_opt.subscribers = static_cast<int>(args.Num("--subscribers", g_opt.subscribers));
  g_opt.groups = static_cast<int>(args.Num("--groups", g_opt.groups));
  g_opt.rate = args.Num("--rate", g_opt.rate);
  g_opt.seconds = args.Num("--seconds", g_opt.seconds);
  g_opt.writers = static_cast<int>(args.Num("--writers", g_opt.writers));
  g_opt.context_bytes = static_cast<int>(args.Num("--context-bytes", g_opt.context_bytes));
  g_opt.warmup_seconds = args.Num("--warmup-seconds", g_opt.warmup_seconds);
  g_opt.drain_seconds = args.Num("--drain-seconds", g_opt.drain_seconds);
  g_opt.stall_seconds = args.Num("--stall-seconds", g_opt.stall_seconds);
  g_opt.open_timeout = args.Num("--open-timeout", g_opt.open_timeout);
  g_opt.idle_settle_ms = static_cast<int>(args.Num("--idle-settle-ms", g_opt.idle_settle_ms));
  if (g_opt.port <= 0 || g_opt.subscribers < 1 || g_opt.groups < 1 || g_opt.rate <= 0 || g_opt.seconds <= 0 ||
      g_opt.writers < 1) {
    Usage();
    return 2;
  }
  g_addr.sin_family = AF_INET;
  g_addr.sin_port = htons(static_cast<uint16_t>(g_opt.port));
  if (inet_pton(AF_INET, g_opt.host.c_str(), &g_addr.sin_addr) != 1) Die("bad --host");
  uint64_t nofile = bench::RaiseNofile();
  if (nofile < static_cast<uint64_t>(g_opt.subscribers + g_opt.writers + 64)) {
    Die("RLIMIT_NOFILE is " + std::to_string(nofile) + ", too low for the connections");
  }
  pid_t pid = g_opt.server_pid;
  std::printf("subscribers=%d\ngroups=%d\nrate_target=%.0f\nseconds=%.1f\nwriters=%d\ncontext_bytes=%d\n",
              g_opt.subscribers, g_opt.groups, g_opt.rate, g_opt.seconds, g_opt.writers, g_opt.context_bytes);

  // 1. Warm-up writes with nobody listening (the write path's own allocations are not streams').
  Writer writer(g_opt.writers);
  if (g_opt.warmup_seconds > 0) {
    Progress("warm-up: " + std::to_string(g_opt.warmup_seconds) + " s of writes");
    writer.Run(static_cast<int64_t>(g_opt.rate * g_opt.warmup_seconds), g_opt.rate, nullptr, 30);
    std::printf("warmup_writes_ok=%lld\n", static_cast<long long>(writer.sent_ok()));
  }
  bench::SleepMs(1000);
  int64_t rss_before = bench::ProcStatus(pid, "VmRSS");
  int64_t threads_before = bench::ProcStatus(pid, "Threads");

  // 2. Open the streams and let them idle.
  int64_t total = std::llround(g_opt.rate * g_opt.seconds);
  Writes writes(total);
  Subscribers subs(g_opt.subscribers, writes);
  Progress("opening " + std::to_string(g_opt.subscribers) + " streams");
  int64_t open_start = NowNs();
  double cpu_open0 = bench::ProcCpuSeconds(pid);
  subs.OpenAll();
  subs.Poll(open_start + static_cast<int64_t>(g_opt.open_timeout * 1e9),
            [&] { return subs.opened() >= g_opt.subscribers; });
  int64_t open_ns = NowNs() - open_start;
  double cpu_open1 = bench::ProcCpuSeconds(pid);
  std::printf("streams_opened=%d\nstreams_open_seconds=%.3f\nserver_cpu_open_s=%.3f\n", subs.opened(),
              static_cast<double>(open_ns) / 1e9, cpu_open1 - cpu_open0);
  if (subs.opened() < g_opt.subscribers) {
    Die("only " + std::to_string(subs.opened()) + " of " + std::to_string(g_opt.subscribers) +
        " streams opened within " + std::to_string(g_opt.open_timeout) + " s");
  }
  subs.Poll(NowNs() + static_cast<int64_t>(g_opt.idle_settle_ms) * 1'000'000, [] { return false; });
  int64_t rss_idle = bench::ProcStatus(pid, "VmRSS");
  int64_t threads_idle = bench::ProcStatus(pid, "Threads");
  std::printf("server_rss_before_streams_kb=%lld\nserver_rss_idle_streams_kb=%lld\n", static_cast<long long>(rss_before),
              static_cast<long long>(rss_idle));
  if (rss_before > 0 && rss_idle > 0) {
    std::printf("idle_stream_bytes=%.0f\n",
                static_cast<double>(rss_idle - rss_before) * 1024.0 / static_cast<double>(g_opt.subscribers));
  }
  std::printf("server_threads_before=%lld\nserver_threads_idle=%lld\n", static_cast<long long>(threads_before),
              static_cast<long long>(threads_idle));
  std::fflush(stdout);

  // 3. The measured phase: writes at the rate, frames read until every expected one arrived or
  //    the drain deadline passed.
  Progress("writing " + std::to_string(total) + " breadcrumbs at " + std::to_string(g_opt.rate) + "/s");
  double cpu0 = bench::ProcCpuSeconds(pid);
  double self_cpu0 = bench::SelfCpuSeconds();
  int64_t t0 = NowNs();
  std::thread writer_thread([&] { writer.Run(total, g_opt.rate, &writes, g_opt.drain_seconds); });
  int64_t rss_peak = rss_idle;
  int64_t next_sample = t0;
  uint64_t expected = 0;
  bool expected_known = false;
  int64_t drain_deadline = 0;
  std::vector<uint64_t> group_subs(static_cast<size_t>(g_opt.groups), 0);
  for (auto& s : subs.subs()) group_subs[static_cast<size_t>(s.group)]++;
  int64_t hard_deadline = t0 + static_cast<int64_t>((g_opt.seconds + 2 * g_opt.drain_seconds + 60) * 1e9);
  int64_t next_report = t0 + 5'000'000'000;
  uint64_t last_count = 0;
  int64_t last_progress = t0;
  std::string end_reason = "?";
  for (;;) {
    int64_t now = NowNs();
    if (now >= next_sample) {
      next_sample = now + 500'000'000;
      rss_peak = std::max(rss_peak, bench::ProcStatus(pid, "VmRSS"));
    }
    if (now >= next_report) {
      next_report = now + 5'000'000'000;
      Progress("t=" + std::to_string((now - t0) / 1'000'000'000) + "s delivered " + std::to_string(subs.delivered()) +
               ", streams " + std::to_string(subs.streaming()));
    }
    if (!expected_known && writes.done.load()) {
      expected_known = true;
      for (int64_t k = 0; k < total; ++k) {
        if (writes.state[static_cast<size_t>(k)].load() == kAcked) expected += group_subs[static_cast<size_t>(k % g_opt.groups)];
      }
      drain_deadline = now + static_cast<int64_t>(g_opt.drain_seconds * 1e9);
    }
    if (subs.delivered() != last_count) {
      last_count = subs.delivered();
      last_progress = now;
    }
    if (expected_known) {
      if (subs.delivered() >= expected) { end_reason = "all_expected_delivered"; break; }
      if (now >= drain_deadline) { end_reason = "drain_deadline"; break; }
      if (now - last_progress > static_cast<int64_t>(g_opt.stall_seconds * 1e9)) { end_reason = "stalled"; break; }
    }
    if (now >= hard_deadline) { end_reason = "hard_deadline"; break; }
    subs.Poll(now + 100'000'000, [&] { return !expected_known && writes.done.load(); });
  }
  writer_thread.join();
  int64_t t_end = NowNs();
  double cpu1 = bench::ProcCpuSeconds(pid);
  double self_cpu1 = bench::SelfCpuSeconds();
  int64_t rss_after = bench::ProcStatus(pid, "VmRSS");
  rss_peak = std::max(rss_peak, rss_after);

  // 4. Figures.
  int64_t acked = 0, failed = 0, unknown = 0, pending = 0;
  for (int64_t k = 0; k < total; ++k) {
    switch (writes.state[static_cast<size_t>(k)].load()) {
      case kAcked: ++acked; break;
      case kFailed: ++failed; break;
      case kUnknown: ++unknown; break;
      default: ++pending; break;
    }
  }
  uint64_t lost = 0, duplicated = 0, out_of_order = 0, mismatched = 0, drops = 0, reconnects = 0, foreign = 0,
           pings = 0, bad_status = 0, subs_with_loss = 0;
  for (auto& s : subs.subs()) {
    uint64_t sub_lost = 0;
    for (int64_t k = s.group; k < total; k += g_opt.groups) {
      if (writes.state[static_cast<size_t>(k)].load() == kAcked && s.seen[static_cast<size_t>(k / g_opt.groups)] == 0) {
        ++sub_lost;
      }
    }
    lost += sub_lost;
    if (sub_lost) ++subs_with_loss;
    duplicated += s.duplicated;
    out_of_order += s.out_of_order;
    mismatched += s.mismatched;
    drops += s.drops;
    reconnects += s.reconnects;
    foreign += s.foreign;
    pings += s.pings;
    bad_status += s.bad_status;
  }
  double write_span = static_cast<double>(writes.last_ack_ns - writes.first_send_ns) / 1e9;
  double delivery_span = static_cast<double>((subs.last_frame_ns() ? subs.last_frame_ns() : t_end) - t0) / 1e9;
  double wall = static_cast<double>(t_end - t0) / 1e9;
  std::printf("writes_total=%lld\nwrites_acked=%lld\nwrites_failed=%lld\nwrites_unknown=%lld\nwrites_not_sent=%lld\n",
              static_cast<long long>(total), static_cast<long long>(acked), static_cast<long long>(failed),
              static_cast<long long>(unknown), static_cast<long long>(pending));
  std::printf("write_status_2xx=%lld\nwrite_status_4xx=%lld\nwrite_status_5xx=%lld\n",
              static_cast<long long>(writes.status_counts[2]), static_cast<long long>(writes.status_counts[4]),
              static_cast<long long>(writes.status_counts[5]));
  std::printf("write_span_s=%.3f\nwrite_rate=%.1f\n", write_span, write_span > 0 ? static_cast<double>(acked) / write_span : 0);
  bench::PrintLatency("write_ack", writes.ack_lat_us);
  bench::PrintLatency("write_send_lag", writes.due_lag_us);
  std::printf("end_reason=%s\n", end_reason.c_str());
  std::printf("expected_events=%llu\ndelivered_events=%llu\n", static_cast<unsigned long long>(expected),
              static_cast<unsigned long long>(subs.delivered()));
  std::printf("delivery_span_s=%.3f\ndelivered_per_sec=%.1f\n", delivery_span,
              delivery_span > 0 ? static_cast<double>(subs.delivered()) / delivery_span : 0);
  std::printf("frame_data_bytes_avg=%.0f\n",
              subs.delivered() ? static_cast<double>(subs.data_bytes()) / static_cast<double>(subs.delivered()) : 0);
  bench::PrintLatency("latency_ack", subs.lat_ack());
  bench::PrintLatency("latency_send", subs.lat_send());
  std::printf("frames_before_ack=%llu\nunacked_delivered=%llu\n", static_cast<unsigned long long>(subs.frames_before_ack()),
              static_cast<unsigned long long>(subs.unacked_delivered()));
  // Frames still missing when the drain deadline cut the wait short may only be late.
  bool settled = end_reason == "all_expected_delivered" || end_reason == "stalled";
  std::printf("missing=%llu\n", static_cast<unsigned long long>(lost));
  if (settled) std::printf("lost=%llu\n", static_cast<unsigned long long>(lost));
  else std::printf("lost=%s\n", lost ? "unknown" : "0");
  std::printf("subscribers_with_missing=%llu\nduplicated=%llu\nout_of_order=%llu\nmismatched=%llu\n",
              static_cast<unsigned long long>(subs_with_loss),
              static_cast<unsigned long long>(duplicated), static_cast<unsigned long long>(out_of_order),
              static_cast<unsigned long long>(mismatched));
  std::printf("stream_drops=%llu\nreconnects=%llu\nstream_bad_status=%llu\nconnect_failures=%llu\nforeign_frames=%llu\npings=%llu\n",
              static_cast<unsigned long long>(drops), static_cast<unsigned long long>(reconnects),
              static_cast<unsigned long long>(bad_status), static_cast<unsigned long long>(subs.connect_failures()),
              static_cast<unsigned long long>(foreign), static_cast<unsigned long long>(pings));
  std::printf("measured_wall_s=%.3f\nserver_cpu_s=%.3f\nserver_cpu_pct=%.1f\n", wall, cpu1 - cpu0,
              wall > 0 ? (cpu1 - cpu0) / wall * 100 : 0);
  std::printf("server_rss_peak_kb=%lld\nserver_rss_after_kb=%lld\nserver_hwm_kb=%lld\nserver_threads_after=%lld\n",
              static_cast<long long>(rss_peak), static_cast<long long>(rss_after),
              static_cast<long long>(bench::ProcStatus(pid, "VmHWM")),
              static_cast<long long>(bench::ProcStatus(pid, "Threads")));
  std::printf("client_cpu_s=%.3f\nclient_cpu_pct=%.1f\n", self_cpu1 - self_cpu0,
              wall > 0 ? (self_cpu1 - self_cpu0) / wall * 100 : 0);
  std::fflush(stdout);
  std::_Exit(0);  // skip tearing down thousands of sockets one by one
}
