// EventLog: the committed events of a store, in `seq` order (the outbox that every write appends
// to in its own transaction). The bus reads it; nothing else writes it.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "base/status.h"
#include "model/event.h"

namespace cairn::store {

struct EventLogBounds {
  int64_t first_seq = 1;  // the oldest retained event (last_seq + 1 when the log is empty)
  int64_t last_seq = 0;   // the newest committed event (0 before the first write)
};

class EventLog {
 public:
  virtual ~EventLog() = default;

  // Committed events with seq > after_seq, oldest first, at most `limit`.
  virtual Result<std::vector<model::Event>> ReadEvents(int64_t after_seq, size_t limit) = 0;

  virtual Result<EventLogBounds> Bounds() = 0;

  // `listener` runs on the writer's thread after every commit that appended events, so it must
  // only signal (never block or write). Set it once, before writes start.
  virtual void SetCommitListener(std::function<void()> listener) = 0;

  // Like SetCommitListener, but `listener` also receives the events the commit appended, in seq
  // order, as ReadEvents would return them, with `exact` true; a log that cannot tell passes
  // none with `exact` false (read them from the log).
  using CommittedEventsListener = std::function<void(std::vector<model::Event> events, bool exact)>;
  virtual void SetCommittedEventsListener(CommittedEventsListener listener) {
    if (!listener) return SetCommitListener(nullptr);
    SetCommitListener([listener = std::move(listener)] { listener({}, false); });
  }

  // Deletes events committed before `before_micros`, always keeping the newest one so that `seq`
  // never restarts. Returns how many were deleted.
  virtual Result<int64_t> PruneEvents(int64_t before_micros) = 0;
};

}  // namespace cairn::store
