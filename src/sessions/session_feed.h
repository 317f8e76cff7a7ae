// SessionFeed: tells the session worker about session executions written by other processes of a
// cluster (docs/deploy.md). In one process the SessionService tells its worker directly
// (SetNotify); with a store shared by several processes, a message posted or an answer given
// through another process reaches the process that runs sessions only through the event log. The
// feed asks the bus about every event of a session-execution record (tag "session-execution")
// and schedules that record's session; an execution cancelled through another process (its
// record now says `cancelled`) is also cancelled here, where it may be running. Scheduling a
// session with nothing to do costs one look at it, and cancelling a run that is not here or has
// ended does nothing, so the events of this process's own writes are harmless.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "bus/event_bus.h"

namespace cairn::sessions {

// Called on the bus thread: must only queue (SessionWorker::Schedule does).
using ScheduleSession = std::function<void(const std::string& owner_id, const std::string& session_id)>;

// Called on the bus thread: must only signal (SessionWorker::CancelSoon queues the cancel).
using CancelExecution = std::function<void(const std::string& owner_id, const std::string& execution_id)>;

// Follows `bus` from now on until the returned subscription is destroyed.
std::unique_ptr<bus::Subscription> FollowSessionExecutions(bus::EventBus& bus, ScheduleSession schedule,
                                                           CancelExecution cancel);

}  // namespace cairn::sessions
