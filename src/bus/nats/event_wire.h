// How an event travels through the NATS JetStream stream (nats_relay.h publishes, nats_event_feed.h
// reads): one message per event, its JSON carrying every field of model::Event, so that a process
// reading the stream builds the very event the store's ReadEvents would return.
//
// An event whose message would exceed the server's payload limit travels as a marker holding only
// its seq: the reader then reads that event from the store's log.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "model/event.h"

namespace cairn::bus::nats {

// The message body of `event`: {"seq":…, "type":…, …} with every field of model::Event.
std::string EncodeStreamEvent(const model::Event& event);

// The message body of a marker for the event `seq` (read it from the log).
std::string EncodeStreamMarker(int64_t seq);

// What a message body holds: a whole event, or only the seq of one to read from the log.
struct StreamMessage {
  int64_t seq = 0;
  bool whole = false;  // false: a marker, `event` is empty
  model::Event event;
};

// Decodes a body written by EncodeStreamEvent or EncodeStreamMarker. kInvalidArgument for anything
// else (another publisher on the subject, a message cut short): the reader then reads the log.
Result<StreamMessage> DecodeStreamMessage(std::string_view body);

}  // namespace cairn::bus::nats
