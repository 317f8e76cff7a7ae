#include "server/webhooks/webhook_deliverer.h"

#include <boost/json/serialize.hpp>
#include <condition_variable>
#include <set>
#include <thread>

#include "base/log.h"
#include "model/event.h"
#include "model/selector.h"

namespace cairn::server::webhooks {
namespace {

// How long a thread waits before trying again after the store or the bus failed.
constexpr std::chrono::milliseconds kErrorPause{1000};

}  // namespace

class WebhookDeliverer::Worker {
 public:
  Worker(Shared& shared, store::Webhook hook, model::Selector selector)
      : shared_(shared), hook_(std::move(hook)), selector_(std::move(selector)) {
    if (shared_.options.reader_for) reader_ = shared_.options.reader_for(hook_.owner_id, hook_.created_by);
  }
  ~Worker() { Stop(); }

  const store::Webhook& hook() const { return hook_; }

  void Start() {
    // Subscribe before the first read, so a commit between the two still wakes the thread.
    subscription_ = shared_.bus.Subscribe([this] { Wake(); });
    thread_ = std::thread([this] { Run(); });
  }

  void Stop() {
    subscription_.reset();  // no wake-ups after this
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  enum class Outcome { kDelivered, kDeadLettered, kStopped };

  void Wake() {
    {
      std::lock_guard lock(mu_);
      woken_ = true;
    }
    cv_.notify_all();
  }

  // Waits for `delay` unless stopped first; bus wake-ups do not end it. Returns false if stopped.
  bool Pause(std::chrono::milliseconds delay) {
    std::unique_lock lock(mu_);
    return !cv_.wait_for(lock, delay, [this] { return stopping_.load(); });
  }

  void Run() {
    int64_t cursor = hook_.cursor;  // the last event this thread is done with
    int64_t stored = cursor;        // the last cursor written to the store
    while (!stopping_) {
      {
        std::lock_guard lock(mu_);
        woken_ = false;  // cleared before reading, so a commit during the read is not missed
      }
      auto batch = shared_.bus.Read(cursor, shared_.options.read_batch);
      if (!batch.ok()) {
        CAIRN_LOG_WARN("webhook {}: reading events failed: {}", hook_.id, batch.status().message());
        Pause(kErrorPause);
        continue;
      }
      if (batch->empty()) {
        if (cursor != stored && SaveCursor(cursor)) stored = cursor;
        std::unique_lock lock(mu_);
        cv_.wait(lock, [this] { return woken_ || stopping_; });
        continue;
      }
      for (const bus::EventPtr& event : *batch) {
        if (stopping_) return;
        if (event->owner_id != hook_.owner_id || (reader_ && !event->MayBeReadBy(*reader_)) ||
            !model::Matches(selector_, *event)) {
          cursor = event->seq;  // stored lazily, with the next delivery or when idle
          continue;
        }
        Outcome outcome = Deliver(*event);
        if (outcome == Outcome::kStopped) return;
        cursor = event->seq;
        if (outcome == Outcome::kDelivered) {
          // A failed cursor write only means a possible duplicate after a restart.
          if (SaveCursor(cursor)) stored = cursor;
        } else {
          stored = cursor;  // DeadLetterAndAdvance stored it
        }
      }
    }
  }

  bool SaveCursor(int64_t cursor) {
    Status saved = shared_.store.AdvanceWebhookCursor(hook_.id, cursor);
    if (!saved.ok() && saved.code() != StatusCode::kNotFound) {  // kNotFound: being deleted; Refresh stops us
      CAIRN_LOG_WARN("webhook {}: storing cursor {} failed: {}", hook_.id, cursor, saved.message());
    }
    return saved.ok();
  }

  Outcome Deliver(const model::Event& event) {
    const RetryPolicy& retry = shared_.options.retry;
    const bool redact = reader_ && event.RedactsContextFor(*reader_);
    std::string body = boost::json::serialize(model::EventView(event, shared_.options.max_context_bytes, redact));
    WebhookResponse response;
    int attempts = 0;
    std::string payload;
    auto built = BuildDeliveryRequest(hook_, event.seq, body, shared_.options.attempt_timeout,
                                      shared_.options.resolve_secret);
    if (!built.ok()) {
      // Nothing was sent, and no attempt would send it before the secret exists.
      attempts = 1;
      response.error = BuildFailureText(built.status());
      payload = std::move(body);
    } else {
      WebhookRequest& request = *built;
      while (true) {
        ++attempts;
        response = shared_.sender.Send(request, &stopping_);
        if (stopping_) return Outcome::kStopped;
        AttemptVerdict verdict = response.refused ? AttemptVerdict::kPermanent : Classify(response.status);
        if (verdict == AttemptVerdict::kDelivered) {
          if (shared_.delivered) shared_.delivered->For(hook_.owner_id).Increment();
          return Outcome::kDelivered;
        }
        if (shared_.failed_attempts) shared_.failed_attempts->For(hook_.owner_id).Increment();
        CAIRN_LOG_DEBUG("webhook {}: event {} attempt {} failed: {}", hook_.id, event.seq, attempts, response.error);
        if (verdict == AttemptVerdict::kPermanent || attempts >= retry.max_attempts) break;
        auto delay = BackoffDelay(retry, attempts, response.retry_after_seconds, shared_.random01());
        if (!Pause(delay)) return Outcome::kStopped;
      }
      payload = std::move(request.body);
    }
    store::DeadLetter letter;
    letter.webhook_id = hook_.id;
    letter.owner_id = hook_.owner_id;
    letter.event_seq = event.seq;
    letter.payload = std::move(payload);
    letter.attempts = attempts;
    if (response.status != 0) letter.last_status = response.status;
    letter.last_error = response.error;
    // The dead letter must not be lost: keep trying to store it (a deleted webhook ends this).
    while (true) {
      auto stored = shared_.store.DeadLetterAndAdvance(letter);
      if (stored.ok()) {
        CAIRN_LOG_WARN("webhook {}: event {} dead-lettered after {} attempts: {}", hook_.id, event.seq, attempts,
                       letter.last_error);
        if (shared_.dead_lettered) shared_.dead_lettered->For(hook_.owner_id).Increment();
        return Outcome::kDeadLettered;
      }
      if (stored.status().code() == StatusCode::kNotFound) return Outcome::kStopped;
      CAIRN_LOG_WARN("webhook {}: storing dead letter for event {} failed: {}", hook_.id, event.seq,
                     stored.status().message());
      if (!Pause(kErrorPause)) return Outcome::kStopped;
    }
  }

  Shared& shared_;
  const store::Webhook hook_;
  const model::Selector selector_;
  std::optional<model::AccessScope> reader_;  // whose read rights limit the deliveries (DelivererOptions::reader_for)
  std::mutex mu_;
  std::condition_variable cv_;
  bool woken_ = false;
  std::atomic<bool> stopping_{false};  // also the sender's cancel flag
  std::unique_ptr<bus::Subscription> subscription_;
  std::thread thread_;
};

WebhookDeliverer::WebhookDeliverer(store::WebhookStore& store, bus::EventBus& bus, WebhookSender& sender,
                                   DelivererOptions options, std::function<double()> random01,
                                   MetricsRegistry* metrics)
    : shared_{store, bus, sender, options, std::move(random01), nullptr, nullptr, nullptr} {
  if (metrics) {
    shared_.delivered = std::make_unique<LabeledCounters>(*metrics, "cairn_webhook_deliveries_total",
                                                          "Webhook deliveries acknowledged with 2xx", "tenant");
    shared_.failed_attempts = std::make_unique<LabeledCounters>(*metrics, "cairn_webhook_failed_attempts_total",
                                                                "Webhook delivery attempts that failed", "tenant");
    shared_.dead_lettered = std::make_unique<LabeledCounters>(*metrics, "cairn_webhook_dead_letters_total",
                                                              "Webhook deliveries that gave up (dead-lettered)", "tenant");
  }
}

WebhookDeliverer::~WebhookDeliverer() { Stop(); }

Status WebhookDeliverer::Start() { return Refresh(); }

Status WebhookDeliverer::Refresh() {
  std::lock_guard lock(mu_);
  if (stopped_) return Status::Unavailable("webhook delivery is stopped");
  CAIRN_ASSIGN_OR_RETURN(std::vector<store::Webhook> hooks, shared_.store.ListAllWebhooks());
  std::set<std::string> wanted;
  for (auto& hook : hooks) {
    if (!hook.active) continue;
    auto it = workers_.find(hook.id);
    if (it != workers_.end() && it->second->hook().updated_at == hook.updated_at) {
      wanted.insert(hook.id);
      continue;
    }
    auto selector = model::ParseSelector(hook.selector, model::Limits{});
    if (!selector.ok()) {  // validated when stored; only a downgrade or corruption gets here
      CAIRN_LOG_ERROR("webhook {}: stored selector is invalid ({}); not delivering", hook.id,
                      selector.status().message());
      continue;
    }
    wanted.insert(hook.id);
    if (it != workers_.end()) {
      // Restart with the new settings from the cursor the old thread stored last.
      it->second->Stop();
      workers_.erase(it);
      auto fresh = shared_.store.GetWebhook(hook.owner_id, hook.id);
      if (fresh.ok()) hook.cursor = fresh->cursor;
    }
    std::string id = hook.id;
    auto worker = std::make_unique<Worker>(shared_, std::move(hook), std::move(selector).value());
    worker->Start();
    workers_.emplace(std::move(id), std::move(worker));
  }
  for (auto it = workers_.begin(); it != workers_.end();) {
    if (wanted.count(it->first)) {
      ++it;
      continue;
    }
    it->second->Stop();
    it = workers_.erase(it);
  }
  return Status::Ok();
}

void WebhookDeliverer::Stop() {
  std::lock_guard lock(mu_);
  stopped_ = true;
  workers_.clear();  // each Worker stops in its destructor
}

size_t WebhookDeliverer::running_webhooks() {
  std::lock_guard lock(mu_);
  return workers_.size();
}

}  // namespace cairn::server::webhooks
