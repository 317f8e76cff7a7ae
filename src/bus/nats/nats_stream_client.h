// NatsStreamClient: this process's connection to NATS JetStream and the one stream of cairn's
// events (libnats's `js_*` API). The relay publishes through it and the feed consumes through it
// (nats_relay.h, nats_event_feed.h); nothing else in cairn speaks NATS.
//
// The stream is `<stream>` with the one subject `<stream>.events`, kept on disk by the server
// (file storage), its messages removed after `max_age`. Each event's message id (Nats-Msg-Id) is
// its seq, so JetStream drops a message published twice (within its duplicate window): a relay
// that publishes again what its predecessor already did changes nothing.
//
// The connection reconnects by itself forever; the Listener hears when it went away and came
// back, and when the subscription stopped hearing the server (missed heartbeats), since messages
// may have passed by meanwhile. Its functions run on NATS's threads and must only signal.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

struct __natsConnection;
struct __jsCtx;
struct __natsSubscription;

namespace cairn::bus::nats {

struct NatsStreamOptions {
  std::string url;                     // nats://host:4222 (several, comma-separated, for a NATS cluster)
  std::string stream = "cairn_events"; // the JetStream stream's name (letters, digits, _ and -)
  std::chrono::milliseconds max_age{0};  // how long the stream keeps a message; 0: until its limits
  std::chrono::milliseconds timeout{5000};  // a publish's wait for the stream's acknowledgement
  std::string connection_name = "cairn";
};

// Ok when `name` can name a JetStream stream (1 to 64 letters, digits, '_' or '-'); else
// kInvalidArgument naming the setting `nats_stream`.
Status CheckStreamName(const std::string& name);

// `url` without the user and password of each of its comma-separated URLs (for the log).
std::string NatsUrlForLog(const std::string& url);

class NatsStreamClient {
 public:
  struct Listener {
    std::function<void()> disconnected;      // the connection went away (it reconnects by itself)
    std::function<void()> reconnected;       // it is back; the subscription may need making again
    std::function<void()> subscription_lost; // the subscription's heartbeats stopped, or it fell behind
  };

  // Connects and makes the stream when it does not exist yet. kInvalidArgument for a bad stream
  // name; kUnavailable naming the URL when the server cannot be reached or has no JetStream.
  static Result<std::unique_ptr<NatsStreamClient>> Connect(NatsStreamOptions options);
  // Ends the subscription, then closes the connection and waits until NATS calls nothing more.
  ~NatsStreamClient();

  // Makes the stream when it is missing (a NATS server that lost its storage), and sets its
  // max_age when it differs from the options'. kUnavailable.
  Status EnsureStream();

  // Publishes `messages` (each a body and its message id) in order without waiting for each
  // acknowledgement, then waits for all of them. Ok when the stream stored (or dropped as
  // duplicates) every one; kUnavailable when NATS cannot be reached or did not answer in time, when
  // some of them, not necessarily the last ones, may be missing from the stream. Call from one
  // thread at a time.
  struct Outgoing {
    std::string msg_id;
    std::string body;
  };
  Status PublishBatch(const std::vector<Outgoing>& messages);

  // The seq the newest message in the stream was published for (its message id: an event's seq,
  // or "m<seq>" for a relay's marker); 0 when the stream is empty or the id is neither.
  Result<int64_t> LastPublishedSeq();

  // The server's limit on a message's size; bodies longer than this minus a margin must not be
  // published (event_wire.h: send a marker instead).
  int64_t MaxPayload() const;

  // Subscribes (an ephemeral push consumer, no acks, heartbeats every second) to the messages
  // published from now on: `on_message` gets each body in stream order, on the subscription's
  // thread (it must not block). A subscription that already exists is ended first.
  using OnMessage = std::function<void(std::string_view body)>;
  Status SubscribeNew(OnMessage on_message);
  // Ends the subscription: `on_message` is not called once this returns. Not from `on_message`.
  void Unsubscribe();

  // Sets (or, with an empty one, clears) the listener; cleared, none of its functions runs again
  // once this returns.
  void SetListener(Listener listener);

  const std::string& subject() const { return subject_; }

 private:
  struct Callbacks;  // libnats's C callbacks (nats_stream_client.cpp)
  friend struct Callbacks;

  explicit NatsStreamClient(NatsStreamOptions options);
  // Calls the listener's `which` function, if set, under the listener's lock.
  void Tell(std::function<void()> Listener::*which);
  void UnsubscribeLocked();  // sub_mu_ held

  NatsStreamOptions options_;
  std::string subject_;
  __natsConnection* conn_ = nullptr;
  __jsCtx* js_ = nullptr;

  std::mutex sub_mu_;  // the subscription (one change at a time)
  __natsSubscription* sub_ = nullptr;
  std::mutex message_mu_;
  OnMessage on_message_;

  std::mutex listener_mu_;
  Listener listener_;

  std::atomic<int64_t> publish_failures_{0};  // acknowledgements PublishBatch is told failed

  std::mutex done_mu_;  // what NATS says has finished
  std::condition_variable done_cv_;
  bool closed_ = false;
  bool sub_complete_ = false;
};

}  // namespace cairn::bus::nats
