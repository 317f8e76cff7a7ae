// NatsStreamClient: this process's connection to NATS JetStream and the one stream of cairn's
// events (libnats's `js_*` API). The relay publishes through it and the feed consumes through it
// (nats_relay.h, nats_event_feed.h); nothing else in cairn speaks NATS.
//
// The stream is `<stream>` with the one subject `<stream>.events`, kept on disk by the server
// (file storage), its messages removed after `max_age`. Each message's Nats-Msg-Id is the event's
// seq, so JetStream drops a message published twice (within its duplicate window): a relay that
// publishes again what its predecessor already did changes nothing.
//
// The connection reconnects by itself forever; listeners added with AddReconnectListener are told
// each time it did, since messages may have passed by while it was away.
#pragma once

#include <chrono>
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
struct __natsMsg;

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

class NatsStreamClient {
 public:
  // Connects and makes the stream when it does not exist yet. kInvalidArgument for a bad stream
  // name; kUnavailable naming the URL when the server cannot be reached or has no JetStream.
  static Result<std::unique_ptr<NatsStreamClient>> Connect(NatsStreamOptions options);
  ~NatsStreamClient();  // ends the subscription, then the connection

  // Makes the stream when it is missing (a NATS server that lost its storage). kUnavailable.
  Status EnsureStream();

  // Publishes `body` as the message of event `seq` and waits for the stream to store it (or to
  // report it a duplicate). kUnavailable when NATS cannot be reached or did not answer in time.
  Status Publish(int64_t seq, std::string_view body);

  // The seq of the newest message in the stream (its Nats-Msg-Id); 0 when the stream is empty.
  Result<int64_t> LastPublishedSeq();

  // The server's limit on a message's size; bodies longer than this minus a margin must not be
  // published (event_wire.h: send a marker instead).
  int64_t MaxPayload() const;

  // Subscribes an ordered consumer that receives the stream's messages from the next one
  // published on: `on_message` gets each body in stream order, on the client's delivery thread
  // (it must not block). The client recreates the consumer after a gap or a server restart,
  // continuing after the last message delivered. Call once.
  using OnMessage = std::function<void(std::string_view body)>;
  Status SubscribeNew(OnMessage on_message);
  // Ends the subscription: `on_message` is not called once this returns.
  void Unsubscribe();

  // `listener` runs (on a NATS thread; it must only signal) each time the connection came back.
  void AddReconnectListener(std::function<void()> listener);
  // Forgets every reconnect listener (their owner is going away).
  void ClearReconnectListeners();

  const std::string& subject() const { return subject_; }

 private:
  explicit NatsStreamClient(NatsStreamOptions options);
  static void OnReconnected(__natsConnection* conn, void* closure);
  static void OnStreamMessage(__natsConnection* conn, __natsSubscription* sub, __natsMsg* msg, void* closure);

  NatsStreamOptions options_;
  std::string subject_;
  __natsConnection* conn_ = nullptr;
  __jsCtx* js_ = nullptr;
  __natsSubscription* sub_ = nullptr;
  OnMessage on_message_;
  std::mutex listeners_mu_;
  std::vector<std::function<void()>> reconnect_listeners_;
};

}  // namespace cairn::bus::nats
