// SseStream: one `GET /events/stream` connection after its request was accepted (internal).
//
// It owns the socket. Woken by the bus, it reads the events after its cursor (from the bus window
// on its strand, or from the log on the worker pool when it fell behind the window), keeps those
// of its tenant that match its selector, and writes one SSE frame per event:
//     id: <seq>\ndata: <one-line JSON>\n\n
// A ping frame (no id) goes out every heartbeat while the stream is idle.
//
// Flow control: frames wait in a queue of at most `sse_max_queued_frames`; while it is full no
// more events are read (the cursor simply stays behind, the log keeps the events), and reading
// resumes as the queue drains, so a client catching up on a large backlog is never dropped. A
// client whose full queue has not moved for `sse_stall_timeout_ms` (checked at each heartbeat) has
// stopped reading: it is sent a final stream.dropped frame saying where to resume, and the
// connection is closed.
// A client that disconnects ends the stream.
#pragma once

#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <array>
#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <string>

#include "bus/event_bus.h"
#include "model/selector.h"
#include "server/http_types.h"
#include "server/server_context.h"

namespace cairn::server {

// The accepted request of an event stream, produced by the /events/stream handler.
struct SseSpec final : EventStreamSpec {
  model::Selector selector;
  std::string owner_id;
  int64_t after_seq = 0;  // deliver events with seq > after_seq
};

class SseStream : public std::enable_shared_from_this<SseStream> {
 public:
  SseStream(boost::beast::tcp_stream stream, ServerContext& ctx, std::shared_ptr<const SseSpec> spec);
  // Writes the response header and starts streaming. Call on the stream's strand.
  void Start();

 private:
  struct Frame {
    std::shared_ptr<const std::string> bytes;  // event frames are shared by every stream sending them
    int64_t seq = 0;  // 0 for frames that carry no event (comments, pings)
  };
  void WatchForDisconnect();
  void ScheduleHeartbeat();
  void Pump();
  void OnEvents(Result<std::vector<bus::EventPtr>> events);
  void Enqueue(Frame frame);
  void WriteNext();
  void Drop();
  void Close();

  boost::beast::tcp_stream stream_;
  ServerContext& ctx_;
  std::shared_ptr<const SseSpec> spec_;
  std::unique_ptr<bus::Subscription> subscription_;
  // Set while a wake-up is posted and not yet run (shared with the bus callback, which may outlive
  // a pump but not the subscription).
  std::shared_ptr<std::atomic<bool>> wake_posted_ = std::make_shared<std::atomic<bool>>(false);
  boost::asio::steady_timer heartbeat_;
  std::array<char, 512> discard_{};
  std::deque<Frame> queue_;
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
