#include "server/webhooks/webhook_deliverer.h"

#include <boost/json/serialize.hpp>
#include <algorithm>
#include <condition_variable>
#include <set>

#include "base/log.h"
#include "bus/interest_skip.h"
#include "model/event.h"
#include "model/selector.h"

namespace cairn::server::webhooks {
namespace {

// How long a worker waits before trying again after the store or the bus failed.
constexpr std::chrono::milliseconds kErrorPause{1000};
// How many events a webhook's cursor may fall behind the bus without the worker being woken (it
// reads them all, in order, when it wakes: its selector skips them).
constexpr int64_t kWakeLag = 1024;
// The worker pool's tick: a webhook's step runs at least this often (its cursor moves past the
// events it was not woken for, and is stored, when idle).
constexpr std::chrono::milliseconds kTick{1000};
// How often a webhook's cursor is stored when it only moved past events the webhook does not get.
constexpr std::chrono::milliseconds kQuietCursorSaveInterval{5000};
// An attempt thread started for a burst of deliveries ends after this long idle.
constexpr std::chrono::milliseconds kIdleAttemptThreadExit{10000};

}  // namespace

// A webhook's delivery, as steps on the deliverer's consumer pool: read events after the cursor,
// skip those it does not get, and deliver the next one it gets, attempt by attempt. An attempt
// runs on the attempt pool (it blocks on the network); the backoff between attempts is a timed
// wake-up, so a failing endpoint holds no thread while it waits.
class WebhookDeliverer::Worker {
 public:
  Worker(Shared& shared, store::Webhook hook, model::Selector selector)
      : shared_(shared), hook_(std::move(hook)), selector_(std::move(selector)) {
    if (shared_.options.reader_for) reader_ = shared_.options.reader_for(hook_.owner_id, hook_.created_by);
    cursor_ = stored_ = hook_.cursor;
  }
  ~Worker() { Stop(); }

  const store::Webhook& hook() const { return hook_; }

  void Start() {
    member_ = shared_.consumers->Add([this] { Step(); });
    bus::InterestKeys keys = bus::SelectorKeys(selector_);
    subscription_ = shared_.bus.SubscribeWhen([this] { member_->Wake(); }, [this](const model::Event& event) {
      bool gets = Gets(event);
      if (gets) skip_.Took(event.seq);
      return gets;
    }, kWakeLag, std::move(keys));
    // Judged by the bus from here on: the events before are all read.
    skip_.Subscribed(shared_.bus.LastSeq());
    member_->Wake();  // a read after the subscription: a commit in between is not missed
  }

  // An attempt in flight is cancelled (its event stays undelivered and is retried after the next
  // start); returns once it has ended.
  void Stop() {
    subscription_.reset();  // no wake-ups after this
    stopping_ = true;       // also the sender's cancel flag
    if (member_) member_->Remove();
    std::unique_lock lock(mu_);
    attempt_ended_.wait(lock, [this] { return !attempt_running_; });
  }

 private:
  // The event being delivered, between its attempts.
  struct Delivery {
    bus::EventPtr event;
    WebhookRequest request;
    std::string payload;  // the dead letter's body when the request could not be built
    int attempts = 0;
    WebhookResponse response;  // of the last attempt
    bool answered = false;     // an attempt ended since the last step looked
    bool give_up = false;      // dead-letter it
    std::chrono::steady_clock::time_point retry_at{};
    bool wake_set = false;  // a timed wake-up for retry_at is set (one is enough)
  };

  // Whether the webhook gets `event` (on the bus thread too: cheap, reads only what is const).
  bool Gets(const model::Event& event) const {
    return event.owner_id == hook_.owner_id && (!reader_ || event.MayBeReadBy(*reader_)) &&
           model::Matches(selector_, event);
  }

  void Step() {
    if (stopping_ || gone_) return;
    {
      std::lock_guard lock(mu_);
      if (attempt_in_flight_) return;  // its end wakes the worker
    }
    if (current_ && !GoOn()) return;
    ReadAndDeliver();
  }

  void ReadAndDeliver() {
    // Events the bus judged this webhook does not get (none since the cursor) are passed unread.
    cursor_ = skip_.SkipTo(cursor_, shared_.bus);
    auto batch = shared_.bus.Read(cursor_, shared_.options.read_batch);
    if (!batch.ok()) {
      CAIRN_LOG_WARN("webhook {}: reading events failed: {}", hook_.id, batch.status().message());
      return member_->WakeAfter(kErrorPause);
    }
    if (batch->empty()) {
      // Only events it does not get passed by: stored now and then, not at every tick (after a
      // crash the webhook reads those few seconds of events again, and delivers none of them).
      auto now = std::chrono::steady_clock::now();
      if (cursor_ != stored_ && now - skipped_saved_at_ >= kQuietCursorSaveInterval && SaveCursor(cursor_)) {
        stored_ = cursor_;
        skipped_saved_at_ = now;
      }
      return;
    }
    for (const bus::EventPtr& event : *batch) {
      if (!Gets(*event)) {
        cursor_ = event->seq;  // stored lazily, with the next delivery or when idle
        continue;
      }
      Begin(event);
      if (!GoOn()) return;
    }
    member_->Wake();  // a full batch: more may follow
  }

  // Prepares the delivery of `event` (current_).
  void Begin(const bus::EventPtr& event) {
    Delivery delivery;
    delivery.event = event;
    const bool redact = reader_ && event->RedactsContextFor(*reader_);
    std::string body = boost::json::serialize(model::EventView(*event, shared_.options.max_context_bytes, redact));
    auto built = BuildDeliveryRequest(hook_, event->seq, body, shared_.options.attempt_timeout,
                                      shared_.options.resolve_secret);
    if (built.ok()) {
      delivery.request = std::move(built).value();
    } else {
      // Nothing was sent, and no attempt would send it before the secret exists.
      delivery.attempts = 1;
      delivery.response.error = BuildFailureText(built.status());
      delivery.payload = std::move(body);
      delivery.give_up = true;
    }
    current_ = std::move(delivery);
  }

  // Moves the current delivery on: judges an attempt that ended, starts the next one when its
  // backoff has passed, or dead-letters the event. True when the event is done with (reading goes
  // on); false while it waits for an attempt, a backoff or the store.
  bool GoOn() {
    Delivery& d = *current_;
    if (d.answered) {
      d.answered = false;
      AttemptVerdict verdict = d.response.refused ? AttemptVerdict::kPermanent : Classify(d.response.status);
      if (verdict == AttemptVerdict::kDelivered) {
        if (shared_.delivered) shared_.delivered->For(hook_.owner_id).Increment();
        cursor_ = d.event->seq;
        current_.reset();
        // A failed cursor write only means a possible duplicate after a restart.
        if (SaveCursor(cursor_)) stored_ = cursor_;
        return true;
      }
      if (shared_.failed_attempts) shared_.failed_attempts->For(hook_.owner_id).Increment();
      CAIRN_LOG_DEBUG("webhook {}: event {} attempt {} failed: {}", hook_.id, d.event->seq, d.attempts, d.response.error);
      const RetryPolicy& retry = shared_.options.retry;
      if (verdict == AttemptVerdict::kPermanent || d.attempts >= retry.max_attempts) {
        d.give_up = true;
      } else {
        d.retry_at = std::chrono::steady_clock::now() +
                     BackoffDelay(retry, d.attempts, d.response.retry_after_seconds, shared_.random01());
        d.wake_set = false;
      }
    }
    if (d.give_up) return DeadLetter();
    auto now = std::chrono::steady_clock::now();
    if (now < d.retry_at) {
      if (!d.wake_set) member_->WakeAfter(std::chrono::ceil<std::chrono::milliseconds>(d.retry_at - now));
      d.wake_set = true;
      return false;
    }
    Attempt();
    return false;
  }

  // Starts the next attempt of the current delivery on the attempt pool.
  void Attempt() {
    ++current_->attempts;
    {
      std::lock_guard lock(mu_);
      attempt_in_flight_ = true;
      attempt_running_ = true;
    }
    bool submitted = shared_.attempts->Submit([this] {
      WebhookResponse response = shared_.sender.Send(current_->request, &stopping_);
      {
        std::lock_guard lock(mu_);
        current_->response = std::move(response);
        current_->answered = true;
        attempt_in_flight_ = false;
      }
      member_->Wake();
      std::lock_guard lock(mu_);
      attempt_running_ = false;
      attempt_ended_.notify_all();
    });
    if (!submitted) {  // stopping: the event stays undelivered
      std::lock_guard lock(mu_);
      attempt_in_flight_ = attempt_running_ = false;
      attempt_ended_.notify_all();
    }
  }

  // Stores the current event as a dead letter and moves the cursor past it (one transaction).
  // The dead letter must not be lost: a failure is tried again after a pause (a deleted webhook
  // ends this).
  bool DeadLetter() {
    Delivery& d = *current_;
    store::DeadLetter letter;
    letter.webhook_id = hook_.id;
    letter.owner_id = hook_.owner_id;
    letter.event_seq = d.event->seq;
    letter.payload = d.payload.empty() ? d.request.body : d.payload;
    letter.attempts = d.attempts;
    if (d.response.status != 0) letter.last_status = d.response.status;
    letter.last_error = d.response.error;
    auto stored = shared_.store.DeadLetterAndAdvance(letter);
    if (stored.ok()) {
      CAIRN_LOG_WARN("webhook {}: event {} dead-lettered after {} attempts: {}", hook_.id, d.event->seq, d.attempts,
                     letter.last_error);
      if (shared_.dead_lettered) shared_.dead_lettered->For(hook_.owner_id).Increment();
      cursor_ = stored_ = d.event->seq;
      current_.reset();
      return true;
    }
    if (stored.status().code() == StatusCode::kNotFound) {  // being deleted: Refresh stops this worker
      gone_ = true;
      return false;
    }
    CAIRN_LOG_WARN("webhook {}: storing dead letter for event {} failed: {}", hook_.id, d.event->seq,
                   stored.status().message());
    member_->WakeAfter(kErrorPause);
    return false;
  }

  bool SaveCursor(int64_t cursor) {
    Status saved = shared_.store.AdvanceWebhookCursor(hook_.id, cursor);
    if (!saved.ok() && saved.code() != StatusCode::kNotFound) {  // kNotFound: being deleted; Refresh stops us
      CAIRN_LOG_WARN("webhook {}: storing cursor {} failed: {}", hook_.id, cursor, saved.message());
    }
    return saved.ok();
  }

  Shared& shared_;
  const store::Webhook hook_;
  const model::Selector selector_;
  std::optional<model::AccessScope> reader_;  // whose read rights limit the deliveries (DelivererOptions::reader_for)
  // Only the worker's steps (one at a time) touch these, and an attempt's job while
  // attempt_in_flight_ (the step then touches none of current_).
  int64_t cursor_ = 0;  // the last event the worker is done with
  int64_t stored_ = 0;  // the last cursor written to the store
  std::optional<Delivery> current_;
  bool gone_ = false;
  std::chrono::steady_clock::time_point skipped_saved_at_{};
  std::mutex mu_;
  std::condition_variable attempt_ended_;
  bool attempt_in_flight_ = false;  // until its response is in current_
  bool attempt_running_ = false;    // until its job no longer touches the worker
  std::atomic<bool> stopping_{false};
  bus::InterestSkip skip_;  // which events the bus judged this webhook does not get
  std::unique_ptr<bus::ConsumerPool::Member> member_;
  std::unique_ptr<bus::Subscription> subscription_;
};

WebhookDeliverer::WebhookDeliverer(store::WebhookStore& store, bus::EventBus& bus, WebhookSender& sender,
                                   DelivererOptions options, std::function<double()> random01,
                                   MetricsRegistry* metrics)
    : shared_{store, bus, sender, options, std::move(random01), nullptr, nullptr, nullptr,
              std::make_unique<bus::ConsumerPool>(1, kTick, "webhooks"),
              std::make_unique<exec::WorkerPool>(0, std::max(1, options.attempt_threads), kIdleAttemptThreadExit)} {
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

Status WebhookDeliverer::Start() {
  {
    std::lock_guard lock(mu_);
    started_ = true;
  }
  return Refresh();
}

Status WebhookDeliverer::Refresh() {
  std::lock_guard lock(mu_);
  if (stopped_) return Status::Unavailable("webhook delivery is stopped");
  if (!started_) return Status::Ok();
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
      // Restart with the new settings from the cursor the old worker stored last.
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
  shared_.consumers->Stop();
  shared_.attempts->Stop();
}

size_t WebhookDeliverer::running_webhooks() {
  std::lock_guard lock(mu_);
  return workers_.size();
}

}  // namespace cairn::server::webhooks
