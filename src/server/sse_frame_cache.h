// SseFrameCache: the SSE frame of each recent event, serialised once and shared by every stream
// that sends it (internal). With many streams on the same events, serialising per stream would
// cost more than everything else the fan-out does.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bus/event_bus.h"

namespace cairn::server {

class SseFrameCache {
 public:
  // Keeps up to `slots` frames (by seq modulo slots); contexts above `max_context_bytes` are
  // omitted from the event JSON (see model::EventView).
  SseFrameCache(size_t slots, size_t max_context_bytes);

  // "id: <seq>\ndata: <event JSON>\n\n" for `event`. Thread-safe.
  std::shared_ptr<const std::string> FrameFor(const bus::EventPtr& event);

 private:
  struct Slot {
    std::mutex mu;
    int64_t seq = 0;
    std::shared_ptr<const std::string> frame;
  };
  std::vector<Slot> slots_;
  size_t max_context_bytes_;
};

}  // namespace cairn::server
