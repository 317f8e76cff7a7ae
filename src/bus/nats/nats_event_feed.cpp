#include "bus/nats/nats_event_feed.h"

#include "base/log.h"
#include "bus/nats/event_wire.h"

namespace cairn::bus::nats {

NatsEventFeed::NatsEventFeed(store::EventLog& log, NatsStreamClient& stream, MetricsRegistry* metrics)
    : log_(log), stream_(stream) {
  if (metrics) {
    received_ = &metrics->GetCounter("cairn_nats_feed_received_total", "Events this process's bus received from the NATS stream");
    log_reads_ = &metrics->GetCounter("cairn_nats_feed_log_reads_total",
                                      "Times the bus was sent to the database by the NATS feed (a marker, a message "
                                      "it could not read, a reconnection)");
  }
  stream_.AddReconnectListener([this] { ReadTheLog(); });
}

NatsEventFeed::~NatsEventFeed() {
  stream_.ClearReconnectListeners();
  stream_.Unsubscribe();
  SetCommittedEventsListener(nullptr);
}

Status NatsEventFeed::Start() {
  return stream_.SubscribeNew([this](std::string_view body) { OnMessage(body); });
}

void NatsEventFeed::SetCommitListener(std::function<void()> listener) {
  if (!listener) return SetCommittedEventsListener(nullptr);
  SetCommittedEventsListener([listener = std::move(listener)](std::vector<model::Event>, bool) { listener(); });
}

void NatsEventFeed::SetCommittedEventsListener(CommittedEventsListener listener) {
  {
    std::lock_guard lock(mu_);
    listener_ = std::move(listener);
  }
  ReadTheLog();
}

void NatsEventFeed::ReadTheLog() {
  std::lock_guard lock(mu_);
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
  if (!message->whole) return ReadTheLog();  // too large for a message: it is in the log
  if (received_) received_->Increment();
  std::vector<model::Event> events;
  events.push_back(std::move(message->event));
  std::lock_guard lock(mu_);
  if (listener_) listener_(std::move(events), true);
}

}  // namespace cairn::bus::nats
