#include "server/sse_stream.h"

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/json/array.hpp>
#include <boost/json/serialize.hpp>
#include <algorithm>
#include <charconv>
#include <vector>

#include "base/clock.h"
#include "base/log.h"
#include "base/time_format.h"

namespace cairn::server {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace json = boost::json;
namespace {

constexpr size_t kReadBatch = 512;
constexpr size_t kMaxFramesPerWrite = 64;
// How many events may pass a stream that sends none of them before it is woken anyway.
constexpr int64_t kWakeLag = 1024;

// No Content-Length and Connection: close: the body is the stream, ended by closing.
constexpr const char* kHeader =
    "HTTP/1.1 200 OK\r\n"
    "Server: cairn\r\n"
    "Content-Type: text/event-stream\r\n"
    "Cache-Control: no-cache\r\n"
    "X-Accel-Buffering: no\r\n"
    "Connection: close\r\n"
    "\r\n"
    ": stream open\n\n";  // a first comment, so proxies and clients see bytes at once

// A frame that carries no stored event (no id): pings, the dropped notice, ephemeral views.
std::shared_ptr<const std::string> ControlFrame(const json::object& payload) {
  return std::make_shared<const std::string>("data: " + json::serialize(payload) + "\n\n");
}

// The frame of a stored event in a stream's own view (not shared: see SseSpec::stored_view).
std::shared_ptr<const std::string> ViewFrame(int64_t seq, const json::object& payload) {
  return std::make_shared<const std::string>("id: " + std::to_string(seq) + "\ndata: " + json::serialize(payload) +
                                             "\n\n");
}

}  // namespace

Result<int64_t> StreamResumePoint(const HttpRequest& request, bus::EventBus& bus) {
  std::optional<std::string_view> text = request.Header("last-event-id");
  std::string from = "Last-Event-ID";
  if (!text) {
    for (const auto& [name, value] : request.query) {
      if (name == "since") text = value;
    }
    from = "since";
  }
  int64_t newest = bus.LastSeq();
  if (!text) return newest;
  int64_t seq = 0;
  auto [ptr, ec] = std::from_chars(text->data(), text->data() + text->size(), seq);
  if (text->empty() || ec != std::errc() || ptr != text->data() + text->size() || seq < 0) {
    return Status(StatusCode::kInvalidArgument,
                  from + ": must be an event seq (a whole number >= 0), got '" + std::string(*text) + "'", from);
  }
  CAIRN_ASSIGN_OR_RETURN(store::EventLogBounds bounds, bus.Bounds());
  if (seq > bounds.last_seq) {
    return Status(StatusCode::kInvalidArgument,
                  from + ": " + std::to_string(seq) + " is ahead of the newest event (" +
                      std::to_string(bounds.last_seq) + ")",
                  from);
  }
  if (seq < bounds.first_seq - 1) {
    return Status(StatusCode::kGone, "events after " + std::to_string(seq) +
                                         " are no longer retained; the oldest retained event is " +
                                         std::to_string(bounds.first_seq) + " (resume from there or re-read state)");
  }
  return seq;
}

bool EphemeralMatches(const SseSpec& spec, const bus::EphemeralEvent& event) {
  if (event.owner_id != spec.owner_id) return false;
  // The selector engine on an event that has no seq, schema_name or path.
  model::Event view;
  view.type = event.type;
  view.owner_id = event.owner_id;
  view.tags = event.tags;
  view.at = event.at;
  view.context = event.data;
  return model::Matches(spec.selector, view);
}

std::string EphemeralFrame(const bus::EphemeralEvent& event) {
  json::array tags;
  for (const auto& tag : event.tags) tags.emplace_back(tag);
  json::object payload{{"type", event.type},
                       {"owner_id", event.owner_id},
                       {"tags", std::move(tags)},
                       {"at", FormatRfc3339Micros(event.at)}};
  for (const auto& field : event.data) {
    if (!payload.contains(field.key())) payload.emplace(field.key(), field.value());
  }
  return "data: " + json::serialize(payload) + "\n\n";
}

SseStream::SseStream(beast::tcp_stream stream, ServerContext& ctx, std::shared_ptr<const SseSpec> spec,
                     ConnectionSlot slot)
    : stream_(std::move(stream)),
      ctx_(ctx),
      spec_(std::move(spec)),
      slot_(std::move(slot)),
      wants_stored_(model::SelectsStoredEvents(spec_->selector)),
      heartbeat_(stream_.get_executor()),
      cursor_(spec_->after_seq),
      delivered_seq_(spec_->after_seq) {}

void SseStream::Start() {
  last_progress_ = std::chrono::steady_clock::now();
  stream_.expires_never();  // liveness is the heartbeat's job; writes get their own deadline
  std::weak_ptr<SseStream> weak = weak_from_this();
  auto executor = stream_.get_executor();
  // Subscribed before the header is queued: whatever is published once a client has seen the
  // header reaches it. (Deliveries are posted, so they run after Start and its header.)
  if (wants_stored_) {
    auto wake_posted = wake_posted_;
    // Woken only by events it sends (and at least every kWakeLag events, so its cursor stays in
    // the bus's window): a commit of other tenants' or other selectors' events costs it nothing.
    auto wake = [weak, executor, wake_posted] {
      // Commits come faster than a busy stream pumps: one pending wake-up per stream is enough.
      if (wake_posted->exchange(true)) return;
      asio::post(executor, [weak, wake_posted] {
        wake_posted->store(false);
        if (auto self = weak.lock()) self->Pump();
      });
    };
    auto interest = [spec = spec_](const model::Event& event) {
      return event.owner_id == spec->owner_id && (!spec->reader || event.MayBeReadBy(*spec->reader)) &&
             model::Matches(spec->selector, event);
    };
    // A selector with a schema or a tag is asked only about the events under that key (the bus's
    // index); one without is asked about a commit's events until its first yes.
    bus::InterestKeys keys = bus::SelectorKeys(spec_->selector);
    subscription_ = keys.every_event
                        ? ctx_.bus->SubscribeWhen(std::move(wake), std::move(interest), kWakeLag)
                        : ctx_.bus->SubscribeWhen(std::move(wake), std::move(interest), kWakeLag, std::move(keys));
  }
  if (ctx_.ephemeral != nullptr && model::SelectsEphemeralEvents(spec_->selector)) {
    ephemeral_subscription_ = ctx_.ephemeral->Subscribe([weak, executor, spec = spec_](const bus::EphemeralPtr& event) {
      // Matched here, on the publisher's thread, so only this stream's events are posted to it.
      if (!EphemeralMatches(*spec, *event)) return;
      asio::post(executor, [weak, event] {
        if (auto self = weak.lock()) self->OnEphemeral(event);
      });
    });
  }
  Enqueue(Frame{std::make_shared<const std::string>(kHeader), 0});
  WatchForDisconnect();
  ScheduleHeartbeat();
  Pump();
}

void SseStream::WatchForDisconnect() {
  // Clients send nothing after the request; a completed read means EOF or an error.
  stream_.socket().async_read_some(asio::buffer(discard_), [self = shared_from_this()](beast::error_code ec, size_t) {
    if (ec) return self->Close();
    self->WatchForDisconnect();
  });
}

void SseStream::ScheduleHeartbeat() {
  heartbeat_.expires_after(spec_->heartbeat.value_or(std::chrono::milliseconds(ctx_.options.sse_heartbeat_ms)));
  heartbeat_.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (ec || self->closed_ || self->closing_) return;
    // A full queue with no write completed for the stall timeout: the client stopped reading.
    // Ephemeral frames do not count: they alone never get a stream dropped.
    bool stalled = self->queue_.size() - self->ephemeral_queued_ >= self->ctx_.options.sse_max_queued_frames &&
                   std::chrono::steady_clock::now() - self->last_progress_ >
                       std::chrono::milliseconds(self->ctx_.options.sse_stall_timeout_ms);
    if (stalled) return self->Drop();
    if (self->queue_.empty()) {  // pings are for idle streams; a busy one shows it is alive
      json::object ping{{"type", "ping"}, {"at", FormatRfc3339Micros(SystemClock::Instance().NowMicros())}};
      self->Enqueue(Frame{ControlFrame(ping), 0});
    }
    self->ScheduleHeartbeat();
  });
}

void SseStream::Pump() {
  // Flow control: read more only while the queue has room; WriteNext pumps again as it drains.
  if (!wants_stored_ || pumping_ || closing_ || closed_ || cursor_ >= ctx_.bus->LastSeq()) return;
  if (queue_.size() >= ctx_.options.sse_max_queued_frames) return;
  pumping_ = true;
  if (ctx_.bus->InWindow(cursor_)) return OnEvents(ctx_.bus->Read(cursor_, kReadBatch));
  // Behind the window: the read touches the disk, so it runs on the worker pool.
  ctx_.stream_catch_up.Submit([self = shared_from_this(), after = cursor_] {
    auto events = self->ctx_.bus->Read(after, kReadBatch);
    asio::post(self->stream_.get_executor(), [self, events = std::move(events)]() mutable {
      self->OnEvents(std::move(events));
    });
  });
}

void SseStream::OnEvents(Result<std::vector<bus::EventPtr>> events) {
  pumping_ = false;
  if (closed_ || closing_) return;
  if (!events.ok()) {
    CAIRN_LOG_WARN("sse: cannot read events after {}: {}", cursor_, events.status().message());
    return Close();
  }
  for (const auto& event : *events) {
    if (queue_.size() >= ctx_.options.sse_max_queued_frames) break;  // the rest is read again later
    // Ephemeral frames published before this event go out before it, not after the whole batch.
    ReleaseHeldEphemeral();
    cursor_ = event->seq;
    if (event->owner_id != spec_->owner_id || !model::Matches(spec_->selector, *event)) continue;
    if (spec_->reader && !event->MayBeReadBy(*spec_->reader)) continue;
    if (!spec_->stored_view) {
      if (spec_->reader && event->RedactsContextFor(*spec_->reader)) {  // rare: not worth the shared cache
        queue_.push_back(Frame{ViewFrame(event->seq, model::EventView(*event, 0, true)), event->seq});
        continue;
      }
      queue_.push_back(Frame{ctx_.sse_frames.FrameFor(event), event->seq});
      continue;
    }
    std::optional<json::object> view;
    if (spec_->reader && event->RedactsContextFor(*spec_->reader)) {  // a view of its own sees no secret context
      model::Event redacted = *event;
      redacted.context = nullptr;
      redacted.before.reset();
      view = spec_->stored_view(redacted);
    } else {
      view = spec_->stored_view(*event);
    }
    if (view) queue_.push_back(Frame{ViewFrame(event->seq, *view), event->seq});
  }
  ReleaseHeldEphemeral();
  if (!writing_) WriteNext();  // the whole batch in one gathered write
  // More may have arrived while this batch was read (a wake during a pump is not lost).
  if (cursor_ < ctx_.bus->LastSeq() && queue_.size() < ctx_.options.sse_max_queued_frames) {
    asio::post(stream_.get_executor(), [self = shared_from_this()] { self->Pump(); });
  }
}

void SseStream::OnEphemeral(const bus::EphemeralPtr& event) {
  if (closed_ || closing_) return;
  std::optional<json::object> view;
  if (spec_->ephemeral_view) {
    view = spec_->ephemeral_view(*event);
    if (!view) return;  // not for this stream: neither sent nor counted as dropped
  }
  auto bytes = view ? ControlFrame(*view) : std::make_shared<const std::string>(EphemeralFrame(*event));
  if (wants_stored_ && (event->after_seq > cursor_ || !held_ephemeral_.empty())) {
    // Its step's stored event has not been sent yet: keep it until the cursor passes it.
    if (held_ephemeral_.size() >= ctx_.options.sse_max_queued_frames) {
      ctx_.sse_ephemeral_dropped.Increment();
      return;
    }
    held_ephemeral_.push_back({event->after_seq, std::move(bytes)});
    Pump();
    return;
  }
  EnqueueEphemeral(std::move(bytes));
}

void SseStream::EnqueueEphemeral(std::shared_ptr<const std::string> bytes) {
  if (queue_.size() >= ctx_.options.sse_max_queued_frames) {  // best effort: never wait, never grow
    ctx_.sse_ephemeral_dropped.Increment();
    return;
  }
  ++ephemeral_queued_;
  Enqueue(Frame{std::move(bytes), 0, true});
}

void SseStream::ReleaseHeldEphemeral() {
  while (!held_ephemeral_.empty() && held_ephemeral_.front().first <= cursor_) {
    EnqueueEphemeral(std::move(held_ephemeral_.front().second));
    held_ephemeral_.pop_front();
  }
}

void SseStream::Enqueue(Frame frame) {
  queue_.push_back(std::move(frame));
  if (!writing_) WriteNext();
}

void SseStream::WriteNext() {
  if (queue_.empty()) {
    writing_ = false;
    if (closing_) Close();
    return;
  }
  // Everything queued (up to a bound) goes out in one gathered write: one syscall, not one per frame.
  writing_ = true;
  frames_in_flight_ = std::min(queue_.size(), kMaxFramesPerWrite);
  std::vector<asio::const_buffer> buffers;
  buffers.reserve(frames_in_flight_);
  for (size_t i = 0; i < frames_in_flight_; ++i) buffers.push_back(asio::buffer(*queue_[i].bytes));
  stream_.expires_after(std::chrono::milliseconds(ctx_.options.idle_timeout_ms));
  asio::async_write(stream_, buffers, [self = shared_from_this()](beast::error_code ec, size_t) {
    if (ec) return self->Close();
    for (size_t i = 0; i < self->frames_in_flight_; ++i) {
      if (self->queue_.front().seq > 0) self->delivered_seq_ = self->queue_.front().seq;
      if (self->queue_.front().ephemeral) --self->ephemeral_queued_;
      self->queue_.pop_front();
    }
    self->frames_in_flight_ = 0;
    self->last_progress_ = std::chrono::steady_clock::now();
    self->WriteNext();
    if (self->queue_.size() <= self->ctx_.options.sse_max_queued_frames / 2) self->Pump();  // room again
  });
}

void SseStream::Drop() {
  // Keep the frames being written (their buffers are in use), discard the rest, say where to resume.
  size_t keep = writing_ ? frames_in_flight_ : 0;
  int64_t resume_from = delivered_seq_;
  for (size_t i = 0; i < keep; ++i) resume_from = std::max(resume_from, queue_[i].seq);
  queue_.truncate(keep);
  ephemeral_queued_ = 0;
  for (size_t i = 0; i < queue_.size(); ++i) ephemeral_queued_ += queue_[i].ephemeral ? 1 : 0;
  json::object dropped{{"type", "stream.dropped"},
                       {"reason", "the client stopped reading: " + std::to_string(ctx_.options.sse_max_queued_frames) +
                                      " frames waited longer than " + std::to_string(ctx_.options.sse_stall_timeout_ms) +
                                      " ms"},
                       {"resume_from", resume_from}};
  closing_ = true;
  subscription_.reset();
  ephemeral_subscription_.reset();
  Enqueue(Frame{ControlFrame(dropped), 0});
}

void SseStream::Close() {
  if (closed_) return;
  closed_ = true;
  subscription_.reset();
  ephemeral_subscription_.reset();
  heartbeat_.cancel();
  beast::error_code ec;
  stream_.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  stream_.close();
}

}  // namespace cairn::server
