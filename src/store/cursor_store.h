// CursorStore: the durable position of each event-log consumer (one per executor), so a consumer
// that stops — a definition reloaded, the process restarted or killed — resumes after the last
// event it finished with.
//
// Contract: cursor writes go through the store's writer (durable when they return) but append no
// event, so saving a cursor never wakes a consumer. Calls are thread-safe and blocking.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"

namespace cairn::store {

class CursorStore {
 public:
  virtual ~CursorStore() = default;

  // The stored seq of `consumer`, or nullopt when it has none.
  virtual Result<std::optional<int64_t>> LoadCursor(const std::string& consumer) = 0;
  // Stores `seq` as the position of `consumer`, creating the row when missing.
  virtual Status SaveCursor(const std::string& consumer, int64_t seq) = 0;
  // Forgets `consumer`'s position (nothing happens when it has none).
  virtual Status DeleteCursor(const std::string& consumer) = 0;
};

}  // namespace cairn::store
