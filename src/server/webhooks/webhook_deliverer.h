// WebhookDeliverer: delivers committed events to webhooks, at least once, driven by the event
// log (DESIGN.md §4).
//
// Webhooks share a fixed set of threads, however many there are: each webhook's worker is a
// member of the deliverer's consumer pool (bus/consumer_pool.h), woken by the events its selector
// takes (and once in a while to move its cursor past the others); its HTTP attempts run on an
// attempt pool of at most `attempt_threads` (started as attempts need them), and the backoff
// between attempts holds no thread, so a slow or failing endpoint only delays itself. Each worker
// starts at the webhook's stored cursor, skips events of other tenants or not matching the
// selector, and delivers the rest one by one, in seq order: retries with backoff (RetryPolicy)
// until delivered or the last attempt failed (then a dead letter). A refused attempt (WebhookResponse::refused: the outbound
// policy refused the destination) is dead-lettered at once, with the policy's message, and so is
// an event whose delivery names a secret the tenant lacks (last_error "secret_not_found: ...";
// once the secret exists, POST /dlq/{id}/retry delivers it). The cursor is stored after each delivered or dead-lettered
// event (and every few seconds after a run of skipped ones), so a restart resumes where delivery stopped; an event
// delivered just before a crash may be delivered again (receivers deduplicate on
// X-Cairn-Event-Id).
//
// Refresh() reconciles the workers with the store after a webhook is created, changed or deleted:
// a changed webhook's worker is restarted with the new settings from its stored cursor.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "base/metrics.h"
#include "bus/consumer_pool.h"
#include "bus/event_bus.h"
#include "exec/worker_pool.h"
#include "model/access.h"
#include "server/webhooks/delivery_policy.h"
#include "server/webhooks/webhook_sender.h"
#include "store/webhook_store.h"

namespace cairn::server::webhooks {

struct DelivererOptions {
  RetryPolicy retry;
  std::chrono::milliseconds attempt_timeout{10000};
  size_t max_context_bytes = 64 * 1024;  // EventView's cut-off for the body's context
  size_t read_batch = 256;               // events read from the bus at a time
  int attempt_threads = 32;              // most HTTP attempts in flight at once (all webhooks)
  // The record-access scope of a webhook's creator (tenant, principal; model/access.h): a webhook
  // gets only the events of records its creator may read, with a `secret` record's context left
  // out unless it reads the record explicitly. Null (--auth=none) or nullopt: every event.
  std::function<std::optional<model::AccessScope>(const std::string& tenant, const std::string& principal)> reader_for;
  // Secret references of webhooks (signing secret, headers), resolved for each event's delivery;
  // null: a webhook with one dead-letters its events with secret_not_found.
  model::SecretResolver resolve_secret = {};
};

class WebhookDeliverer {
 public:
  // Everything passed in must outlive the deliverer. `random01` returns values in [0, 1] for the
  // backoff jitter (called from delivery threads; must be thread-safe). `metrics` may be null.
  WebhookDeliverer(store::WebhookStore& store, bus::EventBus& bus, WebhookSender& sender, DelivererOptions options,
                   std::function<double()> random01, MetricsRegistry* metrics);
  ~WebhookDeliverer();  // Stop()s
  WebhookDeliverer(const WebhookDeliverer&) = delete;
  WebhookDeliverer& operator=(const WebhookDeliverer&) = delete;

  // Starts a worker for every active webhook in the store.
  Status Start();

  // Re-reads the webhooks and starts, stops or restarts workers to match. Thread-safe. Blocks
  // while a stopped worker's HTTP attempt ends (cancelled within about a second). Does nothing
  // before Start(): a process that does not deliver (another holds the webhooks part of a
  // cluster) must not start delivering when a webhook is changed through it.
  Status Refresh();

  // Stops every worker (an attempt in flight is cancelled; its event stays undelivered and is
  // retried after the next start). Idempotent.
  void Stop();

  size_t running_webhooks();

 private:
  class Worker;
  struct Shared {
    store::WebhookStore& store;
    bus::EventBus& bus;
    WebhookSender& sender;
    DelivererOptions options;
    std::function<double()> random01;
    // By tenant (the webhook's owner); null without metrics.
    std::unique_ptr<LabeledCounters> delivered;
    std::unique_ptr<LabeledCounters> failed_attempts;
    std::unique_ptr<LabeledCounters> dead_lettered;
    std::unique_ptr<bus::ConsumerPool> consumers;  // the workers' steps
    std::unique_ptr<exec::WorkerPool> attempts;    // their HTTP attempts
  };

  Shared shared_;
  std::mutex mu_;
  bool started_ = false;
  bool stopped_ = false;
  std::map<std::string, std::unique_ptr<Worker>> workers_;  // by webhook id
};

}  // namespace cairn::server::webhooks
