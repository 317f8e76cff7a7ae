// nats_fanout_bench: the same-run baseline of sse_fanout_bench, through nats-server (libnats).
//
//   nats_fanout_bench --url nats://127.0.0.1:PORT [--server-pid PID] [--subscribers 1000] [--groups 10]
//                     [--rate 2000] [--seconds 30] [--payload-bytes 512] [--drain-seconds 15]
//                     [--subs-per-conn 1] [--idle-settle-ms 2000]
//
// The same fan-out as the SSE benchmark: N subscribers, subscriber i on subject bench.sse.g<i % groups>
// (so each receives 1/groups of the messages), each on its own connection (like one SSE stream per
// connection; --subs-per-conn shares connections), and one publisher connection publishing message k
// to bench.sse.g<k % groups> at --rate per second for --seconds. A message is --payload-bytes long
// (run.sh passes the average size of cairn's event JSON) and starts with k and its publish time.
// Latency = receipt − the publish call (NATS has no acknowledgement of a plain publish: compare it
// with cairn's latency_send). Per subscriber, every message of its subject must arrive exactly once.
// Messages are delivered through libnats' global delivery pool (one thread), so 1,000
// subscriptions do not need 1,000 delivery threads; each connection still has its own read thread.
// Output: key=value lines like sse_fanout_bench's.
#include <nats/nats.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

#include "bench_common.h"

namespace {

using bench::NowNs;

struct SubState {
  int group = 0;
  int64_t total = 0;
  int groups = 10;
  std::vector<uint8_t> seen;
  std::vector<uint32_t> latency_us;
  uint64_t received = 0, duplicated = 0, mismatched = 0, out_of_order = 0;
  int64_t last_k = -1;
  natsSubscription* sub = nullptr;
};

std::atomic<uint64_t> g_delivered{0};
std::atomic<int64_t> g_last_recv_ns{0};

void OnMessage(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
  int64_t now = NowNs();
  auto* s = static_cast<SubState*>(closure);
  const char* data = natsMsg_GetData(msg);
  int len = natsMsg_GetDataLength(msg);
  if (len >= 16) {
    int64_t k = 0, sent = 0;
    std::memcpy(&k, data, 8);
    std::memcpy(&sent, data + 8, 8);
    if (k < 0 || k >= s->total || k % s->groups != s->group) {
      ++s->mismatched;
    } else {
      uint8_t& seen = s->seen[static_cast<size_t>(k / s->groups)];
      if (seen > 0) ++s->duplicated;
      if (seen < 255) ++seen;
      if (k <= s->last_k) ++s->out_of_order;
      else s->last_k = k;
      ++s->received;
      s->latency_us.push_back(bench::ToUs(now - sent));
      g_delivered.fetch_add(1, std::memory_order_relaxed);
      int64_t prev = g_last_recv_ns.load(std::memory_order_relaxed);
      while (now > prev && !g_last_recv_ns.compare_exchange_weak(prev, now)) {
      }
    }
  }
  natsMsg_Destroy(msg);
}

[[noreturn]] void Die(const std::string& what, natsStatus st = NATS_OK) {
  std::string msg = what + (st != NATS_OK ? std::string(": ") + natsStatus_GetText(st) : "");
  std::fprintf(stderr, "nats_fanout_bench: %s\n", msg.c_str());
  std::printf("error=%s\n", msg.c_str());
  std::fflush(stdout);
  std::_Exit(1);
}

void Progress(const std::string& what) { std::fprintf(stderr, "[nats_fanout_bench] %s\n", what.c_str()); }

natsOptions* MakeOptions(const std::string& url, bool send_asap) {
  natsOptions* opts = nullptr;
  natsStatus st = natsOptions_Create(&opts);
  if (st != NATS_OK) Die("natsOptions_Create", st);
  natsOptions_SetURL(opts, url.c_str());
  natsOptions_UseGlobalMessageDelivery(opts, true);
  natsOptions_SetMaxPendingMsgs(opts, 1 << 20);
  natsOptions_SetSendAsap(opts, send_asap);
  natsOptions_SetTimeout(opts, 10'000);
  natsOptions_SetAllowReconnect(opts, false);
  return opts;
}

}  // namespace

int main(int argc, char** argv) {
  bench::Args args(argc, argv);
  std::string url = args.Str("--url", "");
  pid_t pid = static_cast<pid_t>(args.Num("--server-pid", 0));
  int n = static_cast<int>(args.Num("--subscribers", 1000));
  int groups = static_cast<int>(args.Num("--groups", 10));
  double rate = args.Num("--rate", 2000);
  double seconds = args.Num("--seconds", 30);
  int payload = std::max(16, static_cast<int>(args.Num("--payload-bytes", 512)));
  double drain = args.Num("--drain-seconds", 15);
  int per_conn = std::max(1, static_cast<int>(args.Num("--subs-per-conn", 1)));
  int settle_ms = static_cast<int>(args.Num("--idle-settle-ms", 2000));
  if (url.empty() || n < 1 || groups < 1 || rate <= 0 || seconds <= 0) {
    std::fprintf(stderr,
                 "usage: nats_fanout_bench --url nats://127.0.0.1:PORT [--server-pid PID] [--subscribers 1000]\n"
                 "         [--groups 10] [--rate 2000] [--seconds 30] [--payload-bytes 512] [--drain-seconds 15]\n"
                 "         [--subs-per-conn 1] [--idle-settle-ms 2000]\n");
    return 2;
  }
  uint64_t nofile = bench::RaiseNofile();
  if (nofile < static_cast<uint64_t>(n / per_conn + 64)) Die("RLIMIT_NOFILE too low: " + std::to_string(nofile));
  int64_t total = std::llround(rate * seconds);
  std::printf("subscribers=%d\ngroups=%d\nrate_target=%.0f\nseconds=%.1f\npayload_bytes=%d\nsubs_per_conn=%d\n", n,
              groups, rate, seconds, payload, per_conn);
  std::printf("libnats_version=%s\n", nats_GetVersion());

  natsStatus st = nats_Open(-1);
  if (st != NATS_OK) Die("nats_Open", st);
  bench::SleepMs(500);
  int64_t rss_before = bench::ProcStatus(pid, "VmRSS");

  // Subscribers.
  Progress("connecting " + std::to_string(n) + " subscribers");
  int64_t open0 = NowNs();
  std::vector<std::unique_ptr<SubState>> subs;
  std::vector<natsConnection*> conns;
  natsOptions* sub_opts = MakeOptions(url, false);
  for (int i = 0; i < n; ++i) {
    if (i % per_conn == 0) {
      natsConnection* nc = nullptr;
      st = natsConnection_Connect(&nc, sub_opts);
      if (st != NATS_OK) Die("connect subscriber " + std::to_string(i), st);
      conns.push_back(nc);
    }
    auto s = std::make_unique<SubState>();
    s->group = i % groups;
    s->total = total;
    s->groups = groups;
    s->seen.assign(static_cast<size_t>(total / groups + 1), 0);
    s->latency_us.reserve(static_cast<size_t>(total / groups + 1));
    std::string subject = "bench.sse.g" + std::to_string(s->group);
    st = natsConnection_Subscribe(&s->sub, conns.back(), subject.c_str(), OnMessage, s.get());
    if (st != NATS_OK) Die("subscribe " + std::to_string(i), st);
    natsSubscription_SetPendingLimits(s->sub, -1, -1);
    subs.push_back(std::move(s));
  }
  for (auto* nc : conns) {
    st = natsConnection_FlushTimeout(nc, 10'000);  // the server has processed every SUB
    if (st != NATS_OK) Die("flush subscriber", st);
  }
  std::printf("subscriber_connections=%zu\nsubscribers_open_seconds=%.3f\n", conns.size(),
              static_cast<double>(NowNs() - open0) / 1e9);
  bench::SleepMs(settle_ms);
  int64_t rss_idle = bench::ProcStatus(pid, "VmRSS");
  std::printf("server_rss_before_subscribers_kb=%lld\nserver_rss_idle_subscribers_kb=%lld\n",
              static_cast<long long>(rss_before), static_cast<long long>(rss_idle));
  if (rss_before > 0 && rss_idle > 0) {
    std::printf("idle_subscriber_bytes=%.0f\n", static_cast<double>(rss_idle - rss_before) * 1024.0 / n);
  }
  std::fflush(stdout);

  // Publisher, paced like cairn's writers.
  natsOptions* pub_opts = MakeOptions(url, true);
  natsConnection* pub = nullptr;
  st = natsConnection_Connect(&pub, pub_opts);
  if (st != NATS_OK) Die("connect publisher", st);
  std::vector<std::string> subjects;
  for (int g = 0; g < groups; ++g) subjects.push_back("bench.sse.g" + std::to_string(g));
  std::vector<char> buf(static_cast<size_t>(payload), 'x');
  std::vector<uint32_t> lag_us;
  lag_us.reserve(static_cast<size_t>(total));
  Progress("publishing " + std::to_string(total) + " messages at " + std::to_string(rate) + "/s");
  double cpu0 = bench::ProcCpuSeconds(pid);
  double self0 = bench::SelfCpuSeconds();
  int64_t t0 = NowNs();
  int64_t published = 0, publish_errors = 0;
  for (int64_t k = 0; k < total; ++k) {
    int64_t due = t0 + static_cast<int64_t>(static_cast<double>(k) * 1e9 / rate);
    int64_t now = NowNs();
    if (due > now) {
      timespec ts{static_cast<time_t>((due - now) / 1'000'000'000), static_cast<long>((due - now) % 1'000'000'000)};
      nanosleep(&ts, nullptr);
      now = NowNs();
    }
    lag_us.push_back(bench::ToUs(now - due));
    std::memcpy(buf.data(), &k, 8);
    std::memcpy(buf.data() + 8, &now, 8);
    st = natsConnection_Publish(pub, subjects[static_cast<size_t>(k % groups)].c_str(), buf.data(), payload);
    if (st == NATS_OK) ++published;
    else ++publish_errors;
  }
  natsConnection_FlushTimeout(pub, 10'000);
  int64_t t_pub_end = NowNs();
  uint64_t expected = static_cast<uint64_t>(published) * static_cast<uint64_t>(n) / static_cast<uint64_t>(groups);
  {
    // Exact: subscribers per group times the messages published to that group.
    std::vector<uint64_t> per_group(static_cast<size_t>(groups), 0);
    for (auto& s : subs) per_group[static_cast<size_t>(s->group)]++;
    expected = 0;
    for (int64_t k = 0; k < published; ++k) expected += per_group[static_cast<size_t>(k % groups)];
  }
  int64_t deadline = t_pub_end + static_cast<int64_t>(drain * 1e9);
  while (g_delivered.load() < expected && NowNs() < deadline) bench::SleepMs(5);
  int64_t t_end = NowNs();
  double cpu1 = bench::ProcCpuSeconds(pid);
  double self1 = bench::SelfCpuSeconds();
  int64_t rss_after = bench::ProcStatus(pid, "VmRSS");
  // Stop deliveries before reading the per-subscriber state.
  for (auto& s : subs) natsSubscription_Unsubscribe(s->sub);
  bench::SleepMs(200);

  uint64_t lost = 0, duplicated = 0, mismatched = 0, out_of_order = 0, delivered = 0, subs_with_loss = 0;
  std::vector<uint32_t> lat;
  lat.reserve(g_delivered.load());
  for (auto& s : subs) {
    uint64_t sub_lost = 0;
    for (int64_t k = s->group; k < published; k += groups) {
      if (s->seen[static_cast<size_t>(k / groups)] == 0) ++sub_lost;
    }
    lost += sub_lost;
    if (sub_lost) ++subs_with_loss;
    duplicated += s->duplicated;
    mismatched += s->mismatched;
    out_of_order += s->out_of_order;
    delivered += s->received;
    lat.insert(lat.end(), s->latency_us.begin(), s->latency_us.end());
  }
  int64_t last = g_last_recv_ns.load();
  double span = static_cast<double>((last ? last : t_end) - t0) / 1e9;
  double wall = static_cast<double>(t_end - t0) / 1e9;
  double pub_span = static_cast<double>(t_pub_end - t0) / 1e9;
  std::printf("published=%lld\npublish_errors=%lld\npublish_span_s=%.3f\npublish_rate=%.1f\n",
              static_cast<long long>(published), static_cast<long long>(publish_errors), pub_span,
              pub_span > 0 ? static_cast<double>(published) / pub_span : 0);
  bench::PrintLatency("publish_lag", lag_us);
  std::printf("expected_msgs=%llu\ndelivered_msgs=%llu\ndelivery_span_s=%.3f\ndelivered_per_sec=%.1f\n",
              static_cast<unsigned long long>(expected), static_cast<unsigned long long>(delivered), span,
              span > 0 ? static_cast<double>(delivered) / span : 0);
  bench::PrintLatency("latency", lat);
  std::printf("lost=%llu\nsubscribers_with_loss=%llu\nduplicated=%llu\nout_of_order=%llu\nmismatched=%llu\n",
              static_cast<unsigned long long>(lost), static_cast<unsigned long long>(subs_with_loss),
              static_cast<unsigned long long>(duplicated), static_cast<unsigned long long>(out_of_order),
              static_cast<unsigned long long>(mismatched));
  std::printf("measured_wall_s=%.3f\nserver_cpu_s=%.3f\nserver_cpu_pct=%.1f\nserver_rss_after_kb=%lld\nserver_hwm_kb=%lld\n",
              wall, cpu1 - cpu0, wall > 0 ? (cpu1 - cpu0) / wall * 100 : 0, static_cast<long long>(rss_after),
              static_cast<long long>(bench::ProcStatus(pid, "VmHWM")));
  std::printf("client_cpu_s=%.3f\nclient_cpu_pct=%.1f\nclient_threads=%lld\n", self1 - self0,
              wall > 0 ? (self1 - self0) / wall * 100 : 0, static_cast<long long>(bench::ProcStatus(getpid(), "Threads")));
  std::fflush(stdout);
  std::_Exit(0);  // closing 1,000 connections (and their threads) one by one adds nothing
}
