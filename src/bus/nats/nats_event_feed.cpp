#include "bus/nats/nats_event_feed.h"

#include "base/log.h"
#include "base/thread_name.h"
#include "bus/nats/event_wire.h"

namespace cairn::bus::nats {
namespace {

constexpr auto kRetryPause = std::chrono::seconds(1);

}  // namespace

NatsEventFeed::NatsEventFeed(store::EventLog& log, NatsStreamClient& stream, MetricsRegistry* metrics)
    : log_(log), stream_(stream) {
  if (metrics) {
    received_ = &metrics->GetCounter("cairn_nats_feed_received_total", "Events this process's bus received from the NATS stream");
    log_reads_ = &metrics->GetCounter("cairn_nats_feed_log_reads_total",
                                      "Times the NATS feed sent the bus to the database (a marker, a message it could "
                                      "not read, a new subscription, a commit while NATS was away)");
  }
}

NatsEventFeed::~NatsEventFeed() { Stop(); }

Status NatsEventFeed::Start() {
  NatsStreamClient::Listener listener;
  listener.disconnected = [this] {
    {
      std::lock_guard lock(mu_);
      away_ = true;
    }
    ReadTheLog();  // and again at each commit from now on, until NATS is back
  };
  listener.reconnected = [this] {
    std::lock_guard lock(mu_);
    resubscribe_ = true;
    cv_.notify_all();
  };
  listener.subscription_lost = listener.reconnected;
  stream_.SetListener(std::move(listener));
  CAIRN_RETURN_IF_ERROR(stream_.SubscribeNew([this](std::string_view body) { OnMessage(body); }));
  {
    std::lock_guard lock(mu_);
    ++subscriptions_;
  }
  thread_ = std::thread([this] {
    NameThisThread("nats-feed");
    Run();
  });
  return Status::Ok();
}

void NatsEventFeed::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  stream_.SetListener({});
  stream_.Unsubscribe();
  SetCommittedEventsListener(nullptr);
}

void NatsEventFeed::Run() {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stopping_ || resubscribe_; });
    if (stopping_) return;
    resubscribe_ = false;
    lock.unlock();
    Status subscribed = stream_.SubscribeNew([this](std::string_view body) { OnMessage(body); });
    lock.lock();
    if (subscribed.ok()) {
      lock.unlock();
      ReadTheLog();  // what passed by while there was no subscription
      lock.lock();
      away_ = false;
      ++subscriptions_;
      cv_.notify_all();
      continue;
    }
    CAIRN_LOG_WARN("{}; trying again in a second (the bus reads the database meanwhile)", subscribed.message());
    away_ = true;
    resubscribe_ = true;
    cv_.wait_for(lock, kRetryPause, [this] { return stopping_; });
  }
}

void NatsEventFeed::StoreCommitted() {
  bool away = false;
  {
    std::lock_guard lock(mu_);
    away = away_;
  }
  if (away) ReadTheLog();
}

uint64_t NatsEventFeed::subscriptions() const {
  std::lock_guard lock(mu_);
  return subscriptions_;
}

bool NatsEventFeed::WaitForSubscription(uint64_t after, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return stopping_ || (subscriptions_ > after && !away_); }) && !stopping_;
}

void NatsEventFeed::SetCommitListener(std::function<void()> listener) {
  if (!listener) return SetCommittedEventsListener(nullptr);
  SetCommittedEventsListener([listener = std::move(listener)](std::vector<model::Event>, bool) { listener(); });
}

void NatsEventFeed::SetCommittedEventsListener(CommittedEventsListener listener) {
  {
    std::lock_guard lock(listener_mu_);
    listener_ = std::move(listener);
  }
  ReadTheLog();
}

void NatsEventFeed::ReadTheLog() {
  std::lock_guard lock(listener_mu_);
  if (!listener_) return;
  if (log_reads_) log_reads_->Increment();
  listener_({}, false);
}

void NatsEventFeed::OnMessage(std::string_view body) {
  auto message = DecodeStreamMessage(body);
  if (!message.ok()) {
    CAIRN_LOG_WARN("bus: a message on the NATS stream is not an event ({}); reading the log instead",
                   message.status().message());
    return ReadTheLog();
  }
  if (!message->whole) return ReadTheLog();  // too large for a message, or skipped: it is in the log
  if (received_) received_->Increment();
  std::vector<model::Event> events;
  events.push_back(std::move(message->event));
  std::lock_guard lock(listener_mu_);
  if (listener_) listener_(std::move(events), true);
}

}  // namespace cairn::bus::nats
