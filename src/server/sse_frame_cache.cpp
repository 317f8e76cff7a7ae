#include "server/sse_frame_cache.h"

#include <boost/json/serialize.hpp>

namespace cairn::server {

SseFrameCache::SseFrameCache(size_t slots, size_t max_context_bytes)
    : slots_(std::max<size_t>(slots, 1)), max_context_bytes_(max_context_bytes) {}

std::shared_ptr<const std::string> SseFrameCache::FrameFor(const bus::EventPtr& event) {
  Slot& slot = slots_[static_cast<size_t>(event->seq) % slots_.size()];
  std::lock_guard lock(slot.mu);
  if (slot.seq != event->seq || !slot.frame) {
    auto frame = std::make_shared<std::string>("id: " + std::to_string(event->seq) + "\ndata: ");
    *frame += boost::json::serialize(model::EventView(*event, max_context_bytes_));
    *frame += "\n\n";
    slot.seq = event->seq;
    slot.frame = std::move(frame);
  }
  return slot.frame;
}

}  // namespace cairn::server
