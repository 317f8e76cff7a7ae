#include "bus/nats/nats_relay.h"

#include <algorithm>

#include "base/log.h"
#include "base/thread_name.h"
#include "bus/nats/event_wire.h"

namespace cairn::bus::nats {
namespace {

constexpr size_t kReadBatch = 256;
// The room a message's headers and subject take beside its body.
constexpr int64_t kEnvelopeMargin = 1024;
// A relay finding the stream further behind the log than this starts at the log's end: the readers
// catch up from the database, which is cheaper than replaying a long outage through NATS.
constexpr int64_t kMaxReplay = 100'000;
constexpr auto kRetryPause = std::chrono::seconds(1);

}  // namespace

NatsRelay::NatsRelay(store::EventLog& log, NatsStreamClient& stream, MetricsRegistry* metrics, Options options)
    : log_(log), stream_(stream), options_(std::move(options)) {
  if (metrics) {
    published_total_ = &metrics->GetCounter("cairn_nats_relay_published_total",
                                            "Events this process published to the NATS stream (as its relay)");
    metrics->AddGauge("cairn_nats_relay_published_seq", "The newest event seq this process's relay published (while it relays)",
                      [this] { return static_cast<double>(published_.load()); });
  }
}

NatsRelay::~NatsRelay() { Stop(); }

void NatsRelay::Start() {
  thread_ = std::thread([this] {
    NameThisThread("nats-relay");
    Run();
  });
}

void NatsRelay::Notify() {
  {
    std::lock_guard lock(mu_);
    dirty_ = true;
  }
  cv_.notify_one();
}

void NatsRelay::SetActive(bool active) {
  {
    std::lock_guard lock(mu_);
    if (active && !active_) ++activations_;
    active_ = active;
    dirty_ = true;
  }
  cv_.notify_one();
}

void NatsRelay::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

bool NatsRelay::WaitPublished(int64_t seq, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return published_cv_.wait_for(lock, timeout, [&] { return published_.load() >= seq; });
}

void NatsRelay::Run() {
  // published_ is known (from the stream) for this activation; another process may have relayed
  // between two activations of this one, so each asks the stream again.
  uint64_t resumed_for = 0;
  bool failing = false;
  uint64_t told_stuck_for = 0;  // the activation whose being stuck was told
  uint64_t failing_for = 0;     // the activation whose publishing fails since failing_since
  std::chrono::steady_clock::time_point failing_since;
  while (true) {
    uint64_t activation = 0;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || (dirty_ && active_); });
      if (stopping_) return;
      dirty_ = false;
      activation = activations_;
    }
    if (failing_for != activation) failing = false;  // a new activation starts afresh
    Status done = resumed_for == activation ? Status::Ok() : Resume();
    if (done.ok()) {
      resumed_for = activation;
      done = PublishBacklog();
    }
    if (done.ok()) {
      if (failing) CAIRN_LOG_INFO("bus: the relay publishes to NATS again (up to event {})", published_.load());
      failing = false;
      continue;
    }
    if (!failing) {
      CAIRN_LOG_WARN("{}; the relay tries again each second", done.message());
      failing_since = std::chrono::steady_clock::now();
    }
    failing = true;
    failing_for = activation;
    if (options_.on_stuck && told_stuck_for != activation &&
        std::chrono::steady_clock::now() - failing_since >= options_.give_up_after) {
      CAIRN_LOG_WARN("bus: the relay could not publish for {} ms; handing the relay to another process",
                     options_.give_up_after.count());
      told_stuck_for = activation;
      options_.on_stuck();
    }
    resumed_for = 0;  // the stream may have been made again meanwhile: ask it again
    std::unique_lock lock(mu_);
    dirty_ = true;
    cv_.wait_for(lock, kRetryPause, [this] { return stopping_; });
  }
}

Status NatsRelay::Resume() {
  CAIRN_RETURN_IF_ERROR(stream_.EnsureStream());
  CAIRN_ASSIGN_OR_RETURN(int64_t in_stream, stream_.LastPublishedSeq());
  CAIRN_ASSIGN_OR_RETURN(store::EventLogBounds bounds, log_.Bounds());
  int64_t start = in_stream;
  if (in_stream > bounds.last_seq) {
    CAIRN_LOG_WARN("bus: the NATS stream holds event {} but the database only {}: is the stream shared with another "
                   "database? Relaying from the database's newest event",
                   in_stream, bounds.last_seq);
    start = bounds.last_seq;
  } else if (bounds.last_seq - in_stream > kMaxReplay) {
    start = bounds.last_seq;  // readers catch up from the database
  }
  if (start != in_stream) {
    // Readers would otherwise learn of the skipped events only with the next one published.
    CAIRN_RETURN_IF_ERROR(stream_.PublishBatch({{"m" + std::to_string(start), EncodeStreamMarker(start > 0 ? start : 1)}}));
  }
  published_ = start;
  CAIRN_LOG_INFO("bus: this process relays the event log to NATS, after event {}", start);
  return Status::Ok();
}

Status NatsRelay::PublishBacklog() {
  const int64_t max_body = std::max<int64_t>(stream_.MaxPayload() - kEnvelopeMargin, 0);
  std::vector<NatsStreamClient::Outgoing> batch;
  while (true) {
    {
      std::lock_guard lock(mu_);
      if (stopping_ || !active_) return Status::Ok();
    }
    CAIRN_ASSIGN_OR_RETURN(std::vector<model::Event> events, log_.ReadEvents(published_.load(), kReadBatch));
    if (events.empty()) return Status::Ok();
    // One batch per read, published without waiting for each acknowledgement: a commit's events
    // cost about one round trip to NATS, not one each.
    batch.clear();
    for (const model::Event& event : events) {
      std::string body = EncodeStreamEvent(event);
      if (static_cast<int64_t>(body.size()) > max_body) body = EncodeStreamMarker(event.seq);
      batch.push_back({std::to_string(event.seq), std::move(body)});
    }
    CAIRN_RETURN_IF_ERROR(stream_.PublishBatch(batch));
    if (published_total_) published_total_->Increment(events.size());  // before WaitPublished can return
    {
      std::lock_guard lock(mu_);
      published_ = events.back().seq;
    }
    published_cv_.notify_all();
    if (events.size() < kReadBatch) return Status::Ok();
  }
}

}  // namespace cairn::bus::nats
