// Where this process's bus gets its events, from the `bus` setting (docs/config.md,
// docs/deploy.md): the store's own commit notifications (`local`, the default), or NATS JetStream
// (`nats://…`, with a PostgreSQL store), where one process of the cluster relays the event log to
// the stream and every process's bus reads the stream. The only place that chooses.
#pragma once

#include <memory>
#include <string>

#include "base/metrics.h"
#include "base/settings.h"
#include "base/status.h"
#include "store/event_log.h"

namespace cairn::app {

// The event log the bus is started on, and what keeps it fed.
class BusSource {
 public:
  virtual ~BusSource() = default;
  // What LocalEventBus::Start takes: the store's log itself, or a feed from the stream in front of it.
  virtual store::EventLog& log() = 0;
  // For the start-up log line: "local" or "NATS JetStream at <url>, stream <name>".
  virtual std::string description() const = 0;
  // Ends the relay and the subscription (before the store closes). Idempotent.
  virtual void Stop() {}
};

// Checks the `bus` setting before anything starts: kInvalidArgument naming `bus` for a value that
// is neither "local" nor a nats:// URL, or a NATS bus without a PostgreSQL store (the stream joins
// processes sharing one database; a SQLite store is one process's own).
Status CheckBusSettings(const Settings& settings);

// The source `settings` name, over the store's `store_log`. With NATS: connects (kUnavailable
// naming the URL when it cannot), makes the stream when missing, subscribes, and starts the relay,
// which publishes only while this process holds the relay's lease in the database (taken by a
// thread of its own, taken again when lost). `store_log` and `metrics` must outlive the source.
Result<std::unique_ptr<BusSource>> OpenBusSource(const Settings& settings, store::EventLog& store_log,
                                                 MetricsRegistry& metrics);

}  // namespace cairn::app
