// SseStream: one `GET /events/stream` connection after its request was accepted (internal).
//
// It owns the socket. Woken by the bus, it reads the events after its cursor (from the bus window
// on its I/O thread, or from the log on the worker pool when it fell behind the window), keeps those
// of its tenant that match its selector, and writes one SSE frame per event:
//     id: <seq>\ndata: <one-line JSON>\n\n
// A ping frame (no id) goes out every heartbeat while the stream is idle.
//
// Ephemeral events (bus/ephemeral_hub.h: agent.token) reach a stream whose selector names their
// type in `types` (and only then; a selector naming no stored type reads no stored events at
// all), when the server has a hub. They match like an event of their type with seq 0, their
// tags and context = their data (never a schema_name or path condition), and go out as
//     data: {"type":"agent.token","owner_id":…,"tags":[…],"at":"<RFC 3339>", …data fields}\n\n
// with no `id:` line, so they do not move a client's resume point (they are never replayed).
// They join the same queue, after any frame queued before them, but only while it holds fewer
// than `sse_max_queued_frames`; otherwise they are dropped (cairn_sse_ephemeral_dropped_total).
// They never count towards the stall check, so they cannot get a stream dropped.
//
// Flow control: frames wait in a queue of at most `sse_max_queued_frames`; while it is full no
// more events are read (the cursor simply stays behind, the log keeps the events), and reading
// resumes as the queue drains, so a client catching up on a large backlog is never dropped. A
// client whose full queue has not moved for `sse_stall_timeout_ms` (checked at each heartbeat) has
// stopped reading: it is sent a final stream.dropped frame saying where to resume, and the
// connection is closed.
// A client that disconnects ends the stream.
//
// Views: by default a stored event goes out as its event view (model::EventView, serialised once
// per event by the shared SseFrameCache) and an ephemeral one as EphemeralFrame. A spec may
// instead give its own views (e.g. GET /sessions/{id}/events, server/session_handlers.h): the
// frames of such a stream are serialised by the stream itself, never taken from or put into the
// shared cache; the id line, flow control, stall drop and heartbeats are the same.
#pragma once

#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/json/object.hpp>
#include <array>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "bus/ephemeral_hub.h"
#include "bus/event_bus.h"
#include "model/selector.h"
#include "server/compact_queue.h"
#include "server/http_types.h"
#include "server/server_context.h"

namespace cairn::server {

// The accepted request of an event stream, produced by the /events/stream handler (and by other
// event-stream routes).
struct SseSpec final : EventStreamSpec {
  // The `data:` JSON of one event in place of its default view; nullopt: the event is not sent
  // (for a stored event the cursor still moves past it). Called on the stream's I/O thread, for the
  // events of `owner_id` that `selector` matched; must not block or throw.
  using StoredView = std::function<std::optional<boost::json::object>(const model::Event&)>;
  using EphemeralView = std::function<std::optional<boost::json::object>(const bus::EphemeralEvent&)>;

  model::Selector selector;
  std::string owner_id;
  int64_t after_seq = 0;  // deliver events with seq > after_seq
  // Whose read rights limit the stream (model/access.h): events of records it may not read are
  // skipped, and a `secret` record's context is left out (context_redacted) unless it reads the
  // record explicitly. Absent: every event of `owner_id`.
  std::optional<model::AccessScope> reader;
  StoredView stored_view;        // empty: the shared event view (id: <seq> either way)
  EphemeralView ephemeral_view;  // empty: EphemeralFrame (no id line either way)
  std::optional<std::chrono::milliseconds> heartbeat;  // the ping interval; nullopt: the server's
};

// Where a stream request starts: the seq after which events are delivered. `Last-Event-ID` (sent
// by reconnecting EventSource clients) wins over the query parameter `since`; neither: the newest
// event of `bus` (only what follows is sent). Malformed or ahead of the newest event:
// kInvalidArgument with field "since" or "Last-Event-ID"; older than the retained log: kGone naming
// the oldest retained seq. The route checks first that `since` is given at most once (QueryReader).
Result<int64_t> StreamResumePoint(const HttpRequest& request, bus::EventBus& bus);

// Whether the ephemeral `event` goes to a stream of `spec`: same owner, and the selector matches it
// as described above. Thread-safe (called on the publisher's thread).
bool EphemeralMatches(const SseSpec& spec, const bus::EphemeralEvent& event);

// The SSE frame of an ephemeral event (no id line). The envelope fields (type, owner_id, tags, at)
// win over data fields of the same name.
std::string EphemeralFrame(const bus::EphemeralEvent& event);

class SseStream : public std::enable_shared_from_this<SseStream> {
 public:
  // `slot` counts the connection while the stream holds it.
  SseStream(boost::beast::tcp_stream stream, ServerContext& ctx, std::shared_ptr<const SseSpec> spec,
            ConnectionSlot slot);
  // Writes the response header and starts streaming. Call on the stream's I/O thread.
  void Start();

 private:
  struct Frame {
    std::shared_ptr<const std::string> bytes;  // event frames are shared by every stream sending them
    int64_t seq = 0;  // 0 for frames that carry no stored event (comments, pings, ephemeral events)
    bool ephemeral = false;
  };
  void WatchForDisconnect();
  void ScheduleHeartbeat();
  void Pump();
  void OnEvents(Result<std::vector<bus::EventPtr>> events);
  void OnEphemeral(const bus::EphemeralPtr& event);
  void Enqueue(Frame frame);
  void EnqueueEphemeral(std::shared_ptr<const std::string> bytes);
  void ReleaseHeldEphemeral();
  void WriteNext();
  void Drop();
  void Close();

  boost::beast::tcp_stream stream_;
  ServerContext& ctx_;
  std::shared_ptr<const SseSpec> spec_;
  ConnectionSlot slot_;
  const bool wants_stored_;  // the selector can match stored events (else the bus is not read)
  std::unique_ptr<bus::Subscription> subscription_;
  std::unique_ptr<bus::Subscription> ephemeral_subscription_;  // to ctx_.ephemeral, when the selector asks
  // Set while a wake-up is posted and not yet run (shared with the bus callback, which may outlive
  // a pump but not the subscription).
  std::shared_ptr<std::atomic<bool>> wake_posted_ = std::make_shared<std::atomic<bool>>(false);
  boost::asio::steady_timer heartbeat_;
  std::array<char, 64> discard_{};  // what a client sends after its request (nothing, or an EOF)
  CompactQueue<Frame> queue_;
  size_t ephemeral_queued_ = 0;  // frames of queue_ that are ephemeral
  // Ephemeral frames waiting for the cursor to pass their event's after_seq (bounded).
  CompactQueue<std::pair<int64_t, std::shared_ptr<const std::string>>> held_ephemeral_;
  int64_t cursor_ = 0;          // last seq examined
  int64_t delivered_seq_ = 0;   // last seq whose frame was fully written
  std::chrono::steady_clock::time_point last_progress_;  // the last completed write
  bool pumping_ = false;
  bool writing_ = false;
  size_t frames_in_flight_ = 0;  // the front frames of queue_ given to the current write
  bool closing_ = false;        // stop producing; close once the queue is written
  bool closed_ = false;
};

}  // namespace cairn::server
