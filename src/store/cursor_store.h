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
  // Queues SaveCursor(consumer, seq) without waiting for its commit. Saves queued by one thread
  // reach the store in the order they were queued, and never after a write that thread makes once
  // this returns: whatever it writes next makes the cursor durable too. For counts kept beside a
  // run (the token quota) that need not cost the run a commit of their own. A failure is logged.
  // The default saves at once.
  virtual void SaveCursorSoon(const std::string& consumer, int64_t seq) { (void)SaveCursor(consumer, seq); }
  // Forgets `consumer`'s position (nothing happens when it has none).
  virtual Status DeleteCursor(const std::string& consumer) = 0;
};

}  // namespace cairn::store
