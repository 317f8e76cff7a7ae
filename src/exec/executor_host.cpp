#include "exec/executor_host.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>

#include "base/json_util.h"
#include "base/log.h"
#include "base/shard.h"
#include "base/time_format.h"
#include "bus/consumer_pool.h"
#include "bus/interest_skip.h"
#include "exec/context_assembler.h"
#include "exec/context_budget.h"
#include "exec/execution_record.h"
#include "exec/retry.h"
#include "model/tool_definition.h"
#include "exec/run_registry.h"

namespace cairn::exec {
namespace json = boost::json;

struct ExecutorHost::Shared {
  Shared(store::Store& s, store::CursorStore& c, store::ClaimStore& cl, bus::EventBus& b, const Clock& clk,
         Runtime& r, HostOptions o)
      : store(s), cursors(c), claims(cl), bus(b), clock(clk), runtime(r), options(o) {}
  store::Store& store;
  store::CursorStore& cursors;
  store::ClaimStore& claims;
  bus::EventBus& bus;
  const Clock& clock;
  Runtime& runtime;
  HostOptions options;
  // The consumers' steps (reading the bus, dispatching triggers, saving cursors), on a fixed set of
  // threads whatever the number of executors; the runs themselves go to the runtime's pools.
  // Its tick: a consumer's step runs at least this often (to save its cursor, release claims and
  // read what it was not woken for; the bus's index and lag wake it for the rest).
  bus::ConsumerPool consumers{options.consumer_threads, 4 * options.cursor_save_interval, "executors"};
  JobGroup jobs;  // the host's runs on the runtime's pools
  std::atomic<bool> stopping{false};
  std::atomic<size_t> shards_held{0};  // sharded: the shards taken and not released
  // "<consumer id> <trigger key>" of the runs in flight, host-wide: a consumer replaced while its
  // runs go on (Remove then Upsert) must not take them over as if their process had died.
  std::mutex in_flight_mu;
  std::set<std::string> in_flight;
  // Finished runs by tenant (the definition's owner).
  std::unique_ptr<LabeledCounters> completed;
  std::unique_ptr<LabeledCounters> failed;
  Counter* skipped = nullptr;
  Counter* dropped = nullptr;
  Histogram* run_seconds = nullptr;
};

namespace {

// Takes the entries of `shard` (keyed by consumer id) out of `by_id`.
template <typename ById>
std::vector<typename ById::mapped_type> ExtractShard(ById& by_id, int shard, int shards) {
  std::vector<typename ById::mapped_type> taken;
  for (auto it = by_id.begin(); it != by_id.end();) {
    if (ShardOf(it->first, shards) != shard) {
      ++it;
      continue;
    }
    taken.push_back(std::move(it->second));
    it = by_id.erase(it);
  }
  return taken;
}

struct RunTimes {
  int64_t started_micros = 0;
  int64_t completed_micros = 0;
  int64_t attempt = 1;
};

// The value of the `input` expression of the first trigger subscription `event` matches, if
// that subscription has one; an expression that fails is the run's error.
Result<std::optional<json::value>> TriggerInput(const ExecutorSpec& spec, const model::Event& event) {
  // Most executors map nothing: then the trigger's conditions are not judged a second time.
  bool maps = std::any_of(spec.subscriptions.begin(), spec.subscriptions.end(),
                          [](const model::Subscription& sub) { return sub.input_expression != nullptr; });
  if (!maps) return std::optional<json::value>();
  for (const auto& sub : spec.subscriptions) {
    if (!model::TriggerMatches(sub, event)) continue;
    if (!sub.input_expression) return std::optional<json::value>();
    auto value = sub.input_expression->Evaluate(event);
    if (!value.ok()) return Status::InvalidArgument("the trigger's input expression failed: " + value.status().message());
    return std::optional<json::value>(std::move(value).value());
  }
  return std::optional<json::value>();
}

// A trigger event rebuilt from its stored record, for runs recovered after a restart.
model::Event EventFromRecord(const model::Breadcrumb& crumb, int64_t seq) {
  model::Event e;
  e.seq = seq;
  e.type = crumb.version == 1 ? "breadcrumb.created" : "breadcrumb.updated";
  e.breadcrumb_id = crumb.id;
  e.version = crumb.version;
  e.schema_name = crumb.schema_name;
  e.title = crumb.title;
  e.tags = crumb.tags;
  e.path = crumb.path;
  e.owner_id = crumb.owner_id;
  e.created_by = crumb.updated_by;
  e.trace = crumb.trace;
  e.at = crumb.updated_at;
  e.context = crumb.context;
  return e;
}

// The record of the run of `spec` for `trigger` while it runs.
ExecutionRecord RunningRecord(const ExecutorSpec& spec, const model::Event& trigger, const RunTimes& times) {
  ExecutionRecord r;
  r.id = ExecutionIdFor(spec, trigger);
  r.kind = spec.kind;
  r.executor = spec.name;
  r.definition_id = spec.definition_id;
  r.definition_version = spec.definition_version;
  r.status = "running";
  r.trigger = trigger;
  r.lineage = LineageOf(trigger, r.id);
  r.attempt = times.attempt;
  // A request's input is the run's (tools and workflows); other triggers are the trigger itself.
  bool request = trigger.schema_name && ((spec.kind == "tool" && *trigger.schema_name == model::kToolRequestSchema) ||
                                         (spec.kind == "workflow" && *trigger.schema_name == model::kWorkflowRequestSchema));
  if (request && trigger.context.is_object() && trigger.context.as_object().contains("input")) {
    r.input = BoundedCopy(trigger.context.as_object().at("input"));
  }
  r.created_micros = times.started_micros;
  r.started_micros = times.started_micros;
  return r;
}

// The finished record: what the run reported, ended completed, failed or cancelled.
ExecutionRecord EndedRecord(ExecutionRecord r, const RunTimes& times, const RunResult& result) {
  r.status = result.cancelled ? "cancelled" : result.failed ? "failed" : result.paused ? "paused" : "completed";
  if (result.failed || result.cancelled) {
    r.error_code = result.cancelled ? "cancelled" : result.error_code.empty() ? "error" : result.error_code;
    r.error_message = result.error_message;
  }
  r.output = BoundedCopy(result.output);
  r.step_count = result.step_count;
  r.token_usage = result.token_usage;
  r.last_snapshot_id = result.last_snapshot_id;
  r.metadata = result.metadata;
  if (result.paused && !result.cancelled && !result.failed) {
    r.awaiting_input = result.awaiting_input;
    json::array awaiting;
    for (const auto& id : result.awaiting) awaiting.emplace_back(id);
    r.metadata["awaiting"] = std::move(awaiting);
    return r;  // not ended
  }
  r.completed_micros = times.completed_micros;
  return r;
}

// Whether `event` is an answer (tool.response.v1, agent.response.v1) and to which request ("" if none).
std::string AnsweredRequest(const model::Event& event) {
  if (event.type != "breadcrumb.created" || !event.schema_name ||
      (*event.schema_name != model::kToolResponseSchema && *event.schema_name != model::kAgentResponseSchema)) {
    return "";
  }
  return event.context.is_object() ? StringMember(event.context.as_object(), "request_id") : "";
}

// Whether an answer to `request_id` is stored already.
// The tenant a run of `spec` on `event` belongs to: the executor's own, or the trigger's for one
// that serves every tenant.
const std::string& TenantOf(const ExecutorSpec& spec, const model::Event& event) {
  return spec.every_tenant ? event.owner_id : spec.owner_id;
}

Result<bool> AnswerStored(store::Store& store, const std::string& owner_id, const std::string& request_id) {
  for (std::string_view schema : {model::kToolResponseSchema, model::kAgentResponseSchema}) {
    model::BreadcrumbQuery query;
    query.schema_name = std::string(schema);
    query.all_tags = {"request:" + request_id};
    query.include_context = true;
    query.limit = 8;
    CAIRN_ASSIGN_OR_RETURN(store::Page page, store.List(owner_id, query));
    for (const auto& crumb : page.items) {
      if (crumb.context.is_object() && StringMember(crumb.context.as_object(), "request_id") == request_id) return true;
    }
  }
  return false;
}

// How many events an executor's consumer may let pass without being woken (it reads them all, in
// order, when it wakes).
constexpr int64_t kWakeLag = 1024;

// How often a consumer saves its position when it has no finished run's claim to release.
constexpr std::chrono::milliseconds kQuietCursorSaveInterval{5000};

// Batches a consumer reads in one step before it lets the other consumers have the thread.
constexpr int kBatchesPerStep = 4;

bool Transient(StatusCode code) {
  return code == StatusCode::kUnavailable || code == StatusCode::kResourceExhausted ||
         code == StatusCode::kInsufficientStorage;
}

}  // namespace

class ExecutorHost::Consumer : public std::enable_shared_from_this<Consumer> {
 public:
  struct Loaded {
    ExecutorSpec spec;
    std::shared_ptr<Executor> executor;
  };

  Consumer(std::shared_ptr<Shared> shared, Dormant entry)
      : shared_(std::move(shared)),
        follow_(std::move(entry.follow)),
        refresh_(std::move(entry.refresh)),
        start_seq_(entry.start_seq),
        loaded_(std::make_shared<Loaded>(Loaded{std::move(entry.spec), std::move(entry.executor)})) {}

  // What Upsert would need to start this consumer again, as it is now (its shard released).
  Dormant AsDormant() {
    std::shared_ptr<const Loaded> current = loaded();
    return Dormant{current->spec, current->executor, start_seq_, follow_, refresh_};
  }

  // Runs of this consumer in flight.
  int Running() {
    std::lock_guard lock(mu_);
    return running_;
  }

  // After Stop, once no run is in flight: the final position, and the finished runs' claims released.
  void SaveStopped() { SaveCursor(true); }

  // After Stop, for a hand-over that cannot wait for them: the runs in flight are cancelled and write
  // nothing (as at shutdown); they keep their claims, and the next holder runs them again from their
  // snapshots. A run that already returned is not affected: its result is written.
  void Interrupt() {
    std::lock_guard lock(mu_);
    handing_over_ = true;
    for (RunFlags* flags : interruptible_) {
      flags->interrupted = true;
      flags->cancelled->store(true);
    }
  }

  Status Start(int64_t start_seq) {
    const std::string& id = loaded_->spec.consumer_id;
    CAIRN_ASSIGN_OR_RETURN(std::optional<int64_t> stored, shared_->cursors.LoadCursor(id));
    read_pos_ = stored.value_or(start_seq);
    if (!stored) CAIRN_RETURN_IF_ERROR(shared_->cursors.SaveCursor(id, read_pos_));
    saved_ = read_pos_;
    {
      std::lock_guard lock(interest_mu_);
      interest_ = loaded_;
    }
    // Its steps run on the host's consumer pool: woken only by events that can trigger the
    // executor or concern its definition; the others are read in order with the next wake-up (at
    // the latest at the pool's tick, every 4 cursor_save_intervals).
    member_ = shared_->consumers.Add([this] { Step(); });
    Subscribe(*loaded_);
    member_->Wake();  // a read after the subscription: a commit in between is not missed
    return Status::Ok();
  }

  void Reload(ExecutorSpec spec, std::shared_ptr<Executor> executor) {
    auto next = std::make_shared<Loaded>(Loaded{std::move(spec), std::move(executor)});
    {
      std::lock_guard lock(interest_mu_);
      interest_ = next;
    }
    Subscribe(*next);  // its selectors may take other events
    {
      std::lock_guard lock(mu_);
      loaded_ = std::move(next);
    }
    member_->Wake();
  }

  // Not from the consumer's own step (DefinitionFollower).
  void Stop() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    subscription_.reset();
    if (member_) member_->Remove();  // waits for a step in progress; none starts after
    SaveCursor(true);
  }

 private:
  std::shared_ptr<const Loaded> loaded() {
    std::lock_guard lock(mu_);
    return loaded_;
  }

  // (Re)subscribes to the bus with the keys of `loaded`'s selectors: the bus asks Concerns only
  // about events those can take. Events published before this were judged by the previous keys, so
  // the consumer reads them all (no skipping) up to the newest now.
  void Subscribe(const Loaded& loaded) {
    auto subscription = shared_->bus.SubscribeWhen([this] { member_->Wake(); },
                                                   [this](const model::Event& event) { return Concerns(event); },
                                                   kWakeLag, KeysOf(loaded));
    skip_.Subscribed(shared_->bus.LastSeq());
    {
      std::lock_guard lock(mu_);
      observes_ = loaded.executor->Observes();
    }
    subscription_.swap(subscription);  // the old one goes after the new one is in place
  }

  // The events Concerns can take: the definition's own, the answers a paused run waits for (agents
  // and workflows), and the trigger selectors' (bus::SelectorKeys: by schema, by the `tool` a
  // request names, or by tag).
  static bus::InterestKeys KeysOf(const Loaded& loaded) {
    const ExecutorSpec& spec = loaded.spec;
    bus::InterestKeys keys;
    keys.every_event = loaded.executor->Observes();
    if (!spec.definition_id.empty()) keys.breadcrumb_ids.push_back(spec.definition_id);
    if (loaded.executor->MayPause()) {
      keys.schemas.emplace_back(model::kToolResponseSchema);
      keys.schemas.emplace_back(model::kAgentResponseSchema);
    }
    for (const auto& sub : spec.subscriptions) {
      if (sub.role != model::SubscriptionRole::kTrigger) continue;
      bus::InterestKeys trigger = bus::SelectorKeys(sub.selector);
      keys.every_event = keys.every_event || trigger.every_event;
      keys.schemas.insert(keys.schemas.end(), trigger.schemas.begin(), trigger.schemas.end());
      keys.tags.insert(keys.tags.end(), trigger.tags.begin(), trigger.tags.end());
      keys.fields.insert(keys.fields.end(), trigger.fields.begin(), trigger.fields.end());
    }
    return keys;
  }

  // On the bus thread: whether `event` may trigger the executor or is about its definition. Reads
  // the spec under a mutex of its own, never held while calling out (the bus holds its subscriber
  // lock while asking). Notes the newest event that concerned it (see SkipUnconcerned).
  bool Concerns(const model::Event& event) {
    bool concerns = ConcernsNow(event);
    if (concerns) skip_.Took(event.seq);
    return concerns;
  }

  bool ConcernsNow(const model::Event& event) {
    std::shared_ptr<const Loaded> current;
    {
      std::lock_guard lock(interest_mu_);
      current = interest_;
    }
    if (!current) return true;
    const ExecutorSpec& spec = current->spec;
    if (!spec.definition_id.empty() && event.breadcrumb_id == spec.definition_id) return true;
    if (AnswersPaused(event, false)) return true;
    for (const auto& sub : spec.subscriptions) {
      if (model::TriggerMatches(sub, event)) return true;
    }
    return false;
  }

  // Moves the read position, without reading, past the events the bus has judged of no concern
  // to this executor (none since the read position passed Concerns), so a thousand executors do
  // not each read every event. Not while held triggers wait or runs are paused, not before the
  // events judged by an earlier subscription are read, and never for an executor that observes
  // every event.
  void SkipUnconcerned() {
    std::lock_guard lock(mu_);
    if (observes_ || !held_.empty()) return;
    const int64_t to = skip_.SkipTo(read_pos_, shared_->bus);
    if (to == read_pos_) return;
    {
      // A paused run's answer may have come before it paused (judged of no concern then): read on.
      std::lock_guard paused_lock(paused_mu_);
      if (!paused_.empty()) return;
    }
    read_pos_ = to;
  }

  // One turn on the consumer pool: the runs to start again, then the events after the read
  // position, until a run slot is missing or a few batches were read (it wakes itself to go on,
  // so one consumer catching up does not hold a pool thread from the others).
  void Step() {
    if (Stopping()) return;
    if (!recovered_) {
      recovered_ = true;
      Recover();
    }
    if (RunAgain() && DispatchHeld()) ReadAvailable();
    SaveCursor(Stopping());  // a consumer that retired saves where it stopped
  }

  // Considers the held events (read, followed and observed, but not yet dispatched: no run slot
  // was free), then moves the read position past them. False while some remain held.
  bool DispatchHeld() {
    while (!held_.empty()) {
      if (!Consider(held_.front(), true)) return false;
      held_.pop_front();
    }
    if (held_until_ > 0) {
      std::lock_guard lock(mu_);
      read_pos_ = held_until_;
      held_until_ = 0;
    }
    return true;
  }

  void ReadAvailable() {
    for (int batches = 0; !Stopping(); ++batches) {
      if (batches == kBatchesPerStep) return member_->Wake();
      SkipUnconcerned();
      auto events = shared_->bus.Read(read_pos_, shared_->options.read_batch);
      if (!events.ok()) {
        CAIRN_LOG_WARN("executor {}: reading events failed: {}", loaded()->spec.consumer_id, events.status().message());
        return;
      }
      if (events->empty()) return;
      if (!Prioritised()) {
        for (const auto& event : *events) {
          if (!FollowDefinition(*event)) return;  // the definition is gone
          loaded()->executor->Observe(*event);
          AnswersPaused(*event, true);
          if (!Consider(event, true)) return Hold({event}, event->seq);  // stopping, or no slot
          std::lock_guard lock(mu_);
          read_pos_ = event->seq;
        }
        continue;
      }
      // Trigger priorities differ: the triggers read in one batch start highest priority first.
      // A change of the definition ends a run of reordering (later triggers use the new one).
      std::vector<bus::EventPtr> waiting;
      for (const auto& event : *events) {
        bool own_definition = event->breadcrumb_id == loaded()->spec.definition_id;
        if (own_definition && !DispatchByPriority(waiting)) return;
        if (!FollowDefinition(*event)) return;
        loaded()->executor->Observe(*event);
        AnswersPaused(*event, true);
        waiting.push_back(event);
      }
      if (!DispatchByPriority(waiting)) return;
    }
  }

  // Whether the executor's trigger selectors have different priorities.
  bool Prioritised() {
    std::shared_ptr<const Loaded> current = loaded();
    std::optional<int> seen;
    for (const auto& sub : current->spec.subscriptions) {
      if (sub.role != model::SubscriptionRole::kTrigger) continue;
      if (seen && *seen != sub.priority) return true;
      seen = sub.priority;
    }
    return false;
  }

  // The priority of the highest trigger selector `event` matches.
  int PriorityOf(const model::Event& event) {
    std::shared_ptr<const Loaded> current = loaded();
    std::optional<int> best;
    for (const auto& sub : current->spec.subscriptions) {
      if (model::TriggerMatches(sub, event) && (!best || sub.priority > *best)) best = sub.priority;
    }
    return best.value_or(0);
  }

  // Considers `events` (read in seq order), highest priority first, and moves the read position
  // past them. False when stopping or out of run slots: the rest are held (DispatchHeld) and the
  // read position stays before them all.
  bool DispatchByPriority(std::vector<bus::EventPtr>& events) {
    if (events.empty()) return true;
    std::vector<std::pair<int, bus::EventPtr>> ordered;
    for (const auto& event : events) ordered.emplace_back(PriorityOf(*event), event);
    std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (size_t i = 0; i < ordered.size(); ++i) {
      if (Consider(ordered[i].second, true)) continue;
      std::deque<bus::EventPtr> rest;
      for (size_t j = i; j < ordered.size(); ++j) rest.push_back(ordered[j].second);
      Hold(std::move(rest), events.back()->seq);
      events.clear();
      return false;
    }
    std::lock_guard lock(mu_);
    read_pos_ = events.back()->seq;
    events.clear();
    return true;
  }

  // Keeps `events` for the next step (DispatchHeld), which moves the read position to `until`
  // once they are all dispatched.
  void Hold(std::deque<bus::EventPtr> events, int64_t until) {
    held_ = std::move(events);
    held_until_ = until;
  }

  // Hands an event about the executor's own definition to the follower. False when the consumer
  // retires (it stops after this event).
  bool FollowDefinition(const model::Event& event) {
    std::shared_ptr<const Loaded> current = loaded();  // kept: a reload may replace loaded_ meanwhile
    const std::string& definition_id = current->spec.definition_id;
    if (!follow_ || definition_id.empty() || event.breadcrumb_id != definition_id) return true;
    if (follow_(event)) return true;
    std::lock_guard lock(mu_);
    read_pos_ = event.seq;
    stop_ = true;
    return false;
  }

  bool Stopping() {
    std::lock_guard lock(mu_);
    return stop_;
  }

  // Dispatches `event` if it triggers this executor. Returns false, doing nothing, when stopping
  // or when the executor is at its concurrency limit (a finishing run wakes the consumer).
  bool Consider(const bus::EventPtr& event, bool live) {
    std::shared_ptr<const Loaded> current = loaded();
    const ExecutorSpec& spec = current->spec;
    if (event->owner_id != TenantOf(spec, *event) || event->created_by == spec.actor) return true;
    bool triggered = false;
    for (const auto& sub : spec.subscriptions) triggered = triggered || model::TriggerMatches(sub, *event);
    if (!triggered || !current->executor->Accepts(*event)) return true;
    if (event->trace.depth > shared_->options.max_depth) {
      // Past the guard: the refusal at max_depth was the answer; answering refusals with more
      // refusals would be a loop of its own.
      if (shared_->dropped) shared_->dropped->Increment();
      CAIRN_LOG_DEBUG("executor {}: dropped {} at trace depth {}", spec.actor, event->breadcrumb_id, event->trace.depth);
      return true;
    }
    std::string key = spec.consumer_id + " " + TriggerKey(*event);
    {
      std::lock_guard lock(shared_->in_flight_mu);
      if (shared_->in_flight.count(key)) return true;
    }
    {
      std::lock_guard lock(mu_);
      int limit = std::max(1, std::min(loaded_->spec.concurrency, shared_->options.max_concurrency));
      if (stop_ || running_ >= limit) return false;
      ++running_;
      if (live) unsettled_.insert(event->seq);
    }
    {
      std::lock_guard lock(shared_->in_flight_mu);
      shared_->in_flight.insert(key);
    }
    WorkerPool& pool = current->spec.waits_on_executors ? shared_->runtime.waiting_pool() : shared_->runtime.pool();
    bool submitted = shared_->jobs.Submit(pool, [self = shared_from_this(), current, event, key, live] {
      self->RunJob(*current, *event, key, live);
    });
    if (!submitted) Finish(key);
    return true;
  }

  // Records the claim. Returns its attempt, or nullopt when an earlier attempt already finished
  // (its execution record exists).
  Result<std::optional<int64_t>> Claim(const ExecutorSpec& spec, const model::Event& event) {
    store::TriggerClaim claim{spec.consumer_id, TriggerKey(event), event.breadcrumb_id, spec.owner_id, event.seq, 1, 0};
    CAIRN_ASSIGN_OR_RETURN(int64_t attempt, shared_->claims.ClaimTrigger(claim));
    if (attempt == 1) return std::optional<int64_t>(attempt);
    // Claimed before: by a run that finished (its record exists; the claim was not yet released)
    // or by one a crash interrupted.
    CAIRN_ASSIGN_OR_RETURN(bool finished, Finished(spec, event));
    if (finished) {
      NoteReleasable(event.seq, claim.trigger_key);
      return std::optional<int64_t>();
    }
    return std::optional<int64_t>(attempt);
  }

  // Whether the run's record says it ended (a paused run's record does not).
  Result<bool> Finished(const ExecutorSpec& spec, const model::Event& event) {
    CAIRN_ASSIGN_OR_RETURN(auto record, StoredRecord(spec, ExecutionIdFor(spec, event)));
    return record.has_value() && !IsActiveStatus(ExecutionStatus(record->context));
  }

  Result<std::optional<model::Breadcrumb>> StoredRecord(const ExecutorSpec& spec, const std::string& execution_id) {
    model::BreadcrumbQuery query;
    query.path = ExecutionRecordPath(execution_id);
    query.include_context = true;
    query.limit = 1;
    CAIRN_ASSIGN_OR_RETURN(store::Page page, shared_->store.List(spec.owner_id, query));
    if (page.items.empty()) return std::optional<model::Breadcrumb>();
    return std::optional<model::Breadcrumb>(std::move(page.items.front()));
  }

  // Notes that the run of `trigger` is paused until one of `awaiting` is answered; an answer
  // stored already makes it run again at once. Called after its paused record is committed.
  void NotePaused(const model::Event& trigger, const std::vector<std::string>& awaiting) {
    auto event = std::make_shared<const model::Event>(trigger);
    {
      std::lock_guard lock(paused_mu_);
      for (const auto& id : awaiting) paused_[id] = event;
    }
    // After the note: an answer committed later is seen on the bus, one committed before is found here.
    for (const auto& id : awaiting) {
      auto stored = AnswerStored(shared_->store, trigger.owner_id, id);
      if (stored.ok() && !*stored) continue;
      std::lock_guard lock(paused_mu_);
      if (paused_.count(id)) TakePausedLocked(paused_.at(id));
      break;
    }
    Wake();
  }

  // Queues the paused runs of `owner_id` whose trigger is `trigger_id` or whose execution, parent
  // or root is `execution_id` (a cancelled tree's: they start cancelled). Returns how many.
 public:
  size_t WakePaused(const std::string& owner_id, const std::string& execution_id, const std::string& trigger_id) {
    std::shared_ptr<const Loaded> current = loaded();
    size_t woken = 0;
    {
      std::lock_guard lock(paused_mu_);
      std::set<bus::EventPtr> matched;
      for (const auto& [id, trigger] : paused_) {
        if (!owner_id.empty() && trigger->owner_id != owner_id) continue;
        Lineage lineage = LineageOf(*trigger, ExecutionIdFor(current->spec, *trigger));
        bool tree = !execution_id.empty() &&
                    (execution_id == lineage.parent_execution_id || execution_id == lineage.root_execution_id ||
                     execution_id == ExecutionIdFor(current->spec, *trigger));
        if (tree || (!trigger_id.empty() && trigger->breadcrumb_id == trigger_id)) matched.insert(trigger);
      }
      for (const auto& trigger : matched) TakePausedLocked(trigger);
      woken = matched.size();
    }
    if (woken > 0) Wake();
    return woken;
  }

 private:
  // Whether `event` answers a paused run; with `take`, that run is queued to run again.
  bool AnswersPaused(const model::Event& event, bool take) {
    std::string id = AnsweredRequest(event);
    if (id.empty()) return false;
    std::lock_guard lock(paused_mu_);
    if (!paused_.count(id)) return false;
    if (take) TakePausedLocked(paused_.at(id));
    return true;
  }

  void Wake() { member_->Wake(); }

  // paused_mu_ held: queues the paused run of `trigger` and forgets everything it awaited.
  void TakePausedLocked(bus::EventPtr trigger) {
    for (auto it = paused_.begin(); it != paused_.end();) {
      it = it->second == trigger ? paused_.erase(it) : std::next(it);
    }
    CAIRN_LOG_DEBUG("executor: {} was answered; its paused run goes on", TriggerKey(*trigger));
    again_.push_back(std::move(trigger));
  }

  // Starts the runs queued to run again (answered paused runs, interrupted runs found at start),
  // in a consumer step. False when one could not start (stopping, no run slot): it stays queued.
  bool RunAgain() {
    while (!Stopping()) {
      bus::EventPtr trigger;
      {
        std::lock_guard lock(paused_mu_);
        if (again_.empty()) return true;
        trigger = again_.front();
      }
      if (!Consider(trigger, false)) return false;
      std::lock_guard lock(paused_mu_);
      again_.pop_front();
    }
    return false;
  }

  void RunJob(const Loaded& loaded, const model::Event& event, const std::string& key, bool live) {
    const ExecutorSpec& spec = loaded.spec;
    if (shared_->stopping || HandingOver()) return Finish(key);  // unsettled: run again after restart
    RunTimes times;
    if (spec.record_executions) {
      auto claim = RetryWhenBusy(shared_->stopping, [&] { return Claim(spec, event); });
      if (!claim.ok()) {
        CAIRN_LOG_ERROR("executor {}: claiming {} failed: {}", spec.actor, key, claim.status().message());
        return Finish(key);
      }
      if (live) Settle(event.seq);
      if (!*claim) {
        if (shared_->skipped) shared_->skipped->Increment();
        return Finish(key);
      }
      times.attempt = **claim;
    }
    times.started_micros = shared_->clock.NowMicros();
    auto started = std::chrono::steady_clock::now();
    json::object trigger = TriggerView(event);
    std::atomic<bool> cancelled{false};
    ExecutionRecord record = RunningRecord(spec, event, times);
    RunRegistry::Registration registration =
        shared_->runtime.runs().Add(TenantOf(spec, event), ExecutionContext(record), event.breadcrumb_id, &cancelled);
    JobGroup::Watch stop_watch = shared_->jobs.WatchCancel(&cancelled);
    json::object context;
    json::value mapped_input;
    RunRequest request{record.id, record.lineage, event, trigger, context, cancelled};
    request.first_attempt = spec.record_executions && times.attempt == 1;
    // The executor's refusal, its record naming the host's reason when the executor gave none.
    auto refuse = [&](const std::string& code, const std::string& message) {
      RunResult refused = loaded.executor->Refuse(request, code, message);
      if (refused.error_code.empty()) refused.error_code = code;
      return refused;
    };
    RunResult result;
    json::array context_dropped;  // what the context budget left out (context_budget.h)
    if (event.trace.depth >= shared_->options.max_depth) {
      result = refuse("depth_exceeded",
                                       "trace depth " + std::to_string(event.trace.depth) + " reached the maximum of " +
                                           std::to_string(shared_->options.max_depth) + "; " + spec.actor +
                                           " did not run (a loop of executors triggering each other?)");
    } else if (auto input = TriggerInput(spec, event); !input.ok()) {
      result = refuse("invalid_input", input.status().message());
    } else {
      if (*input) {
        mapped_input = std::move(**input);
        request.input = &mapped_input;
        record.input = BoundedCopy(mapped_input);  // what the run was given
      }
      context = AssembleContext(shared_->store, TenantOf(spec, event), event, trigger, spec.subscriptions,
                                shared_->options.searcher,
                                ContextAccess{TriggerReader(shared_->options.reader_for, event), spec.allow_secret_context});
      context_dropped = ApplyContextBudget(context, spec.subscriptions, spec.context_budget_tokens);
      uint64_t token = shared_->runtime.watchdog().Arm(Watchdog::Clock::now() + spec.timeout, &cancelled);
      RunFlags flags{&cancelled};
      if (!BeginInterruptible(&flags)) {
        shared_->runtime.watchdog().Disarm(token);
        return Finish(key);  // its shard is being handed over: the next holder runs it
      }
      try {
        result = loaded.executor->Run(request);
      } catch (const std::exception& e) {
        // A module edge: an executor's bug must answer the trigger, not end the process (which
        // would run the claimed trigger again at every start).
        CAIRN_LOG_ERROR("executor {}: run of {} threw: {}", spec.actor, key, e.what());
        result = refuse("internal", spec.actor + " failed: " + e.what());
      }
      bool interrupted = EndInterruptible(&flags);
      bool fired = shared_->runtime.watchdog().Disarm(token);
      // Cancelled by shutdown or a hand-over: run again after restart, or by the shard's next holder.
      if (shared_->stopping || interrupted) return Finish(key);
      if (fired) {
        result = refuse("timeout",
                                         spec.actor + " timed out after " + std::to_string(spec.timeout.count()) + " ms");
      }
    }
    times.completed_micros = shared_->clock.NowMicros();
    if (registration.cancel_requested() && result.paused) result = refuse("cancelled", spec.actor + " was cancelled");
    if (registration.cancel_requested()) result.cancelled = true;
    if (!context_dropped.empty()) result.metadata["context_dropped"] = std::move(context_dropped);
    std::vector<std::string> awaiting = result.awaiting;
    bool paused = WriteResult(loaded, event, times, std::move(result), request, record);
    if (!spec.record_executions && live) Settle(event.seq);
    if (shared_->run_seconds) {
      shared_->run_seconds->Observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    }
    Finish(key);
    // After Finish: an answer that comes now runs it again (a run in flight would be skipped).
    if (paused) NotePaused(event, awaiting);
  }

  // `running` is the run's record as it started (id and lineage computed once, at the start).
  // True when the run was recorded paused.
  bool WriteResult(const Loaded& loaded, const model::Event& event, const RunTimes& times, RunResult result,
                   const RunRequest& request, const ExecutionRecord& running) {
    const ExecutorSpec& spec = loaded.spec;
    model::WriteContext ctx{TenantOf(spec, event), spec.actor, true};
    std::vector<store::WriteOp> ops;
    bool paused = result.paused && spec.record_executions && !result.cancelled && !result.failed;
    if (result.respond && !paused) {
      result.response.trace = ChildTrace(event);
      // A recorded run is answered once because its record's path is unique (same transaction);
      // an unrecorded one by the response's idempotency key.
      std::string key = spec.record_executions ? "" : "response:" + spec.consumer_id + ":" + TriggerKey(event);
      ops.push_back(store::WriteOp::Create(std::move(result.response), std::move(key)));
    }
    if (spec.record_executions) ops.push_back(RecordWrite(spec, EndedRecord(running, times, result), times));
    for (auto& op : result.also) ops.push_back(std::move(op));
    if (ops.empty()) return false;
    auto written = RetryWhenBusy(shared_->stopping, [&] { return shared_->store.Apply(ctx, ops); });
    if (written.ok() && paused) return true;
    if (written.ok()) {
      if (spec.record_executions) NoteReleasable(event.seq, TriggerKey(event));
      LabeledCounters* by_tenant = result.failed ? shared_->failed.get() : shared_->completed.get();
      if (by_tenant) by_tenant->For(TenantOf(spec, event)).Increment();
      return false;
    }
    CAIRN_LOG_ERROR("executor {}: writing the result for {} failed: {}", spec.actor, event.breadcrumb_id,
                    written.status().message());
    StatusCode code = written.status().code();
    if (spec.record_executions && !Transient(code) && code != StatusCode::kInternal) {
      // The response itself was refused (validation, a taken path): answer with an error saying
      // so, and record the run failed, so the trigger is neither left unanswered nor run forever.
      // A store failure (kInternal, e.g. the disk) leaves the claim for the next start instead.
      std::string why = "the response could not be written: " + written.status().message();
      std::vector<store::WriteOp> fallback;
      RunResult refusal = loaded.executor->Refuse(request, "internal", why);
      if (refusal.respond) {
        refusal.response.trace = ChildTrace(event);
        fallback.push_back(store::WriteOp::Create(std::move(refusal.response)));
      }
      RunResult failed;
      failed.failed = true;
      failed.error_code = "internal";
      failed.error_message = why;
      fallback.push_back(RecordWrite(spec, EndedRecord(running, times, failed), times));
      auto marked = shared_->store.Apply(ctx, fallback);
      if (marked.ok()) NoteReleasable(event.seq, TriggerKey(event));
      if (!marked.ok()) CAIRN_LOG_ERROR("executor {}: recording the failed run: {}", spec.actor, marked.status().message());
    }
    return false;
  }

  // The write of the run's record: a new one, or an update of the record an earlier attempt left
  // paused (which keeps the run's first start; only a resumed run can have one).
  store::WriteOp RecordWrite(const ExecutorSpec& spec, ExecutionRecord record, const RunTimes& times) {
    std::optional<model::Breadcrumb> earlier;
    if (times.attempt > 1) {
      auto found = StoredRecord(spec, record.id);
      if (found.ok() && *found && IsActiveStatus(ExecutionStatus((*found)->context))) earlier = std::move(**found);
    }
    if (!earlier) return store::WriteOp::Create(ExecutionDraft(record));
    const json::object& before = earlier->context.as_object();
    for (auto [field, micros] : {std::pair{"created_at", &record.created_micros}, std::pair{"started_at", &record.started_micros}}) {
      if (auto at = ParseRfc3339Micros(StringMember(before, field))) *micros = *at;
    }
    model::BreadcrumbDraft draft = ExecutionDraft(record);
    model::BreadcrumbPatch patch;
    patch.tags.Set(std::move(draft.tags));
    patch.context.Set(std::move(draft.context));
    return store::WriteOp::Update(earlier->id, std::move(patch), earlier->version);
  }

  // A finished run's claim. It is released once the saved cursor is past its trigger: a claim
  // must outlive every replay of its event, or a replay would take the trigger for a new one.
  void NoteReleasable(int64_t seq, const std::string& trigger_key) {
    std::lock_guard lock(mu_);
    releasable_.emplace(seq, trigger_key);
  }

  void Settle(int64_t seq) {
    std::lock_guard lock(mu_);
    unsettled_.erase(seq);
  }

  void Finish(const std::string& key) {
    {
      std::lock_guard lock(shared_->in_flight_mu);
      shared_->in_flight.erase(key);
    }
    {
      std::lock_guard lock(mu_);
      --running_;
    }
    member_->Wake();  // a run slot is free
  }

  // Saves the position before the oldest unsettled event, when it moved (at most once per
  // interval unless `force`).
  void SaveCursor(bool force) {
    int64_t watermark;
    std::string id;
    {
      std::lock_guard lock(mu_);
      // Never past the read position: triggers dispatched by priority may be claimed before
      // earlier ones of their batch are dispatched at all.
      watermark = unsettled_.empty() ? read_pos_ : std::min(read_pos_, *unsettled_.begin() - 1);
      id = loaded_->spec.consumer_id;
      auto now = std::chrono::steady_clock::now();
      // A consumer with no finished run to release only passed events by: its position is saved
      // less often (a thousand quiet executors would otherwise write a thousand cursors per
      // interval), at the price of reading a few more seconds of events after a crash.
      auto interval = releasable_.empty() ? std::max(shared_->options.cursor_save_interval, kQuietCursorSaveInterval)
                                          : shared_->options.cursor_save_interval;
      bool due = force || now - last_save_ >= interval;
      if (!due || (watermark == saved_ && releasable_.empty())) return;
      last_save_ = now;
    }
    // Iterators stay valid while runs note more (a multimap's nodes do not move).
    std::vector<std::multimap<int64_t, std::string>::iterator> released_here;
    std::vector<std::string> releasable;
    {
      std::lock_guard lock(mu_);
      for (auto it = releasable_.begin(); it != releasable_.end() && it->first <= watermark; ++it) {
        released_here.push_back(it);
        releasable.push_back(it->second);
      }
    }
    if (watermark != saved_ && releasable.empty() && !force) {
      // Nothing waits for this save (no claim to release): it rides on the writer's next commit
      // instead of costing one of its own. A save lost in a crash only replays events whose
      // triggers are recognised by their claims.
      shared_->cursors.SaveCursorSoon(id, watermark);
    } else if (watermark != saved_) {
      Status saved = shared_->cursors.SaveCursor(id, watermark);
      if (!saved.ok()) {
        CAIRN_LOG_WARN("executor {}: saving the cursor failed: {}", id, saved.message());
        return;
      }
    }
    {
      std::lock_guard lock(mu_);
      saved_ = watermark;
      for (auto it : released_here) releasable_.erase(it);
    }
    if (releasable.empty()) return;
    if (Status released = shared_->claims.ReleaseClaims(id, releasable); !released.ok()) {
      CAIRN_LOG_WARN("executor {}: releasing finished claims failed: {}", id, released.message());
    }
  }

  // Runs again what a previous process claimed and did not finish.
  void Recover() {
    std::shared_ptr<const Loaded> current = loaded();
    const ExecutorSpec& spec = current->spec;
    if (!spec.record_executions) return;
    auto claims = shared_->claims.ListClaims(spec.consumer_id);
    if (!claims.ok()) {
      CAIRN_LOG_WARN("executor {}: listing unfinished runs failed: {}", spec.actor, claims.status().message());
      return;
    }
    for (const auto& claim : *claims) {
      // The trigger exactly as it was claimed, from the log; else rebuilt from the stored record.
      model::Event event;
      bool found = false;
      if (auto logged = shared_->bus.Read(claim.trigger_seq - 1, 1);
          logged.ok() && !logged->empty() && TriggerKey(*logged->front()) == claim.trigger_key) {
        event = *logged->front();
        found = true;
      }
      auto trigger = found ? Result<model::Breadcrumb>(model::Breadcrumb{}) : shared_->store.Get(claim.owner_id, claim.trigger_id);
      if (!trigger.ok() && trigger.status().code() != StatusCode::kNotFound) {
        CAIRN_LOG_WARN("executor {}: reading the trigger of unfinished run {} failed: {}; trying again at the next start",
                       spec.actor, claim.trigger_key, trigger.status().message());
        continue;
      }
      if (!found && trigger.ok()) event = EventFromRecord(*trigger, claim.trigger_seq);
      if (!found && (!trigger.ok() || TriggerKey(event) != claim.trigger_key)) {
        // Changed or deleted since: a later event (if any) triggers the current version; record
        // that this attempt ended.
        CAIRN_LOG_WARN("executor {}: the trigger of unfinished run {} changed or is gone", spec.actor, claim.trigger_key);
        NoteReleasable(claim.trigger_seq, claim.trigger_key);
        continue;
      }
      auto done = Finished(spec, event);
      if (done.ok() && *done) {
        NoteReleasable(claim.trigger_seq, claim.trigger_key);
        continue;
      }
      CAIRN_LOG_INFO("executor {}: running {} again after an interrupted attempt", spec.actor, claim.trigger_key);
      std::lock_guard lock(paused_mu_);
      again_.push_back(std::make_shared<const model::Event>(std::move(event)));
    }
  }

  // A run that Interrupt may cancel (mu_).
  struct RunFlags {
    std::atomic<bool>* cancelled;
    bool interrupted = false;
  };
  bool HandingOver() {
    std::lock_guard lock(mu_);
    return handing_over_;
  }
  // False (registering nothing) once the consumer is being handed over.
  bool BeginInterruptible(RunFlags* flags) {
    std::lock_guard lock(mu_);
    if (handing_over_) return false;
    interruptible_.insert(flags);
    return true;
  }
  // Whether Interrupt reached the run before it returned.
  bool EndInterruptible(RunFlags* flags) {
    std::lock_guard lock(mu_);
    interruptible_.erase(flags);
    return flags->interrupted;
  }

  std::shared_ptr<Shared> shared_;
  const DefinitionFollower follow_;
  const ExecutorRefresh refresh_;
  const int64_t start_seq_;
  std::mutex mu_;
  bool stop_ = false;
  bool recovered_ = false;  // the first step looked for interrupted runs
  std::shared_ptr<const Loaded> loaded_;
  std::mutex interest_mu_;
  std::shared_ptr<const Loaded> interest_;  // loaded_, for Concerns on the bus thread (interest_mu_)
  int running_ = 0;
  bool handing_over_ = false;            // Interrupt was called (mu_)
  std::set<RunFlags*> interruptible_;    // runs inside Executor::Run (mu_)
  std::set<int64_t> unsettled_;      // seqs dispatched whose claim is not committed yet
  // Paused runs (RunResult::paused): the request ids they wait for -> their trigger; and those
  // answered, to run again. paused_mu_ is taken last and never held while calling out.
  std::mutex paused_mu_;
  std::map<std::string, bus::EventPtr> paused_;
  std::deque<bus::EventPtr> again_;  // runs to start again: answered while paused, or interrupted
  // Read and observed but not yet dispatched (no run slot was free), and where the read position
  // goes once they are: only the consumer's steps touch them.
  std::deque<bus::EventPtr> held_;
  int64_t held_until_ = 0;
  std::multimap<int64_t, std::string> releasable_;  // trigger seq -> key of finished runs' claims
  int64_t read_pos_ = 0;
  int64_t saved_ = 0;
  std::chrono::steady_clock::time_point last_save_{};
  // The bus's judgement (Concerns) lets the consumer skip events unread (SkipUnconcerned).
  bus::InterestSkip skip_;
  bool observes_ = false;  // the executor observes every event (mu_)
  std::unique_ptr<bus::ConsumerPool::Member> member_;  // before subscription_: it wakes the member
  std::unique_ptr<bus::Subscription> subscription_;
};

ExecutorHost::ExecutorHost(store::Store& store, store::CursorStore& cursors, store::ClaimStore& claims,
                           bus::EventBus& bus, const Clock& clock, Runtime& runtime, HostOptions options,
                           MetricsRegistry* metrics)
    : shared_(std::make_shared<Shared>(store, cursors, claims, bus, clock, runtime, options)) {
  // A cancelled tree's paused runs (not in flight) run again to answer, cancelled.
  runtime.runs().SetPausedWaker([this](const std::string& owner_id, const std::string& execution_id,
                                       const std::string& trigger_id) {
    return WakePaused(owner_id, execution_id, trigger_id);
  });
  if (metrics) {
    shared_->completed = std::make_unique<LabeledCounters>(*metrics, "cairn_executor_runs_total", "Executor runs finished",
                                                           "tenant", "status=\"completed\"");
    shared_->failed = std::make_unique<LabeledCounters>(*metrics, "cairn_executor_runs_total", "Executor runs finished",
                                                        "tenant", "status=\"failed\"");
    shared_->skipped = &metrics->GetCounter("cairn_executor_claims_skipped_total", "Triggers already handled");
    shared_->dropped = &metrics->GetCounter("cairn_executor_triggers_dropped_total",
                                            "Triggers past the depth limit, dropped without an answer");
    shared_->run_seconds = &metrics->GetHistogram("cairn_executor_run_seconds", "Executor run time, claim to response");
    // Weak: the registry may outlive the host.
    metrics->AddGauge("cairn_executor_consumers", "Executors following the event stream (on cairn_executor_consumer_threads)",
                      [weak = std::weak_ptr<Shared>(shared_)] {
                        auto shared = weak.lock();
                        return shared ? static_cast<double>(shared->consumers.members()) : 0.0;
                      });
    if (options.shards > 0) {
      metrics->AddGauge("cairn_executor_shards_held",
                        "Shards of the executors this process runs (of the cluster's; docs/deploy.md)",
                        [weak = std::weak_ptr<Shared>(shared_)] {
                          auto shared = weak.lock();
                          return shared ? static_cast<double>(shared->shards_held.load()) : 0.0;
                        });
    }
    metrics->AddGauge("cairn_executor_consumer_threads", "Threads that read the event stream for every executor",
                      [weak = std::weak_ptr<Shared>(shared_)] {
                        auto shared = weak.lock();
                        return shared ? static_cast<double>(shared->consumers.threads()) : 0.0;
                      });
  }
}

ExecutorHost::~ExecutorHost() { Stop(); }

size_t ExecutorHost::WakePaused(const std::string& owner_id, const std::string& execution_id,
                                const std::string& trigger_id) {
  std::vector<std::shared_ptr<Consumer>> consumers;
  {
    std::lock_guard lock(mu_);
    for (const auto& [id, consumer] : consumers_) consumers.push_back(consumer);
  }
  size_t woken = 0;
  for (const auto& consumer : consumers) woken += consumer->WakePaused(owner_id, execution_id, trigger_id);
  return woken;
}

Status ExecutorHost::Upsert(ExecutorSpec spec, std::shared_ptr<Executor> executor, int64_t start_seq,
                            DefinitionFollower follow, ExecutorRefresh refresh) {
  std::lock_guard lock(mu_);
  if (stopped_) return Status::Unavailable("executors are stopping");
  std::string id = spec.consumer_id;
  auto it = consumers_.find(id);
  if (it != consumers_.end()) {
    it->second->Reload(std::move(spec), std::move(executor));
    return Status::Ok();
  }
  Dormant entry{std::move(spec), std::move(executor), start_seq, std::move(follow), std::move(refresh)};
  if (!HeldLocked(id)) {
    dormant_[id] = std::move(entry);
    return Status::Ok();
  }
  return StartLocked(std::move(entry));
}

bool ExecutorHost::HeldLocked(const std::string& consumer_id) const {
  int shards = shared_->options.shards;
  return shards <= 0 || held_shards_.count(ShardOf(consumer_id, shards)) > 0;
}

Status ExecutorHost::StartLocked(Dormant entry) {
  std::string id = entry.spec.consumer_id;
  int64_t start_seq = entry.start_seq;
  dormant_.erase(id);
  auto consumer = std::make_shared<Consumer>(shared_, std::move(entry));
  if (Status started = consumer->Start(start_seq); !started.ok()) {
    // Sharded, it waits dormant for the next Tick (it reads its cursor when it starts).
    if (shared_->options.shards > 0) dormant_.try_emplace(id, consumer->AsDormant());
    return started;
  }
  consumers_.emplace(id, std::move(consumer));
  return Status::Ok();
}

void ExecutorHost::Tick() {
  std::set<int> retry;
  {
    std::lock_guard lock(mu_);
    for (const auto& [id, entry] : dormant_) {
      int shard = ShardOf(id, shared_->options.shards);
      if (held_shards_.count(shard)) retry.insert(shard);
    }
  }
  for (int shard : retry) TakeShard(shard);
}

void ExecutorHost::Remove(const std::string& consumer_id, bool forget_cursor) {
  std::shared_ptr<Consumer> consumer;
  {
    std::lock_guard lock(mu_);
    bool was_dormant = dormant_.erase(consumer_id) > 0;
    auto it = consumers_.find(consumer_id);
    if (it == consumers_.end()) {
      if (!was_dormant || !forget_cursor) return;
    } else {
      consumer = std::move(it->second);
      consumers_.erase(it);
    }
  }
  if (consumer) consumer->Stop();
  if (forget_cursor) {
    Status deleted = shared_->cursors.DeleteCursor(consumer_id);
    if (!deleted.ok()) CAIRN_LOG_WARN("executor {}: deleting the cursor failed: {}", consumer_id, deleted.message());
    // Its claims too: nothing will run them again (runs still in flight finish and answer).
    if (auto claims = shared_->claims.ListClaims(consumer_id); claims.ok() && !claims->empty()) {
      std::vector<std::string> keys;
      for (const auto& claim : *claims) keys.push_back(claim.trigger_key);
      Status released = shared_->claims.ReleaseClaims(consumer_id, keys);
      if (!released.ok()) CAIRN_LOG_WARN("executor {}: deleting its claims failed: {}", consumer_id, released.message());
    }
  }
}

bool ExecutorHost::Runs(const std::string& consumer_id) {
  std::lock_guard lock(mu_);
  return consumers_.count(consumer_id) > 0;
}

void ExecutorHost::TakeShard(int shard) {
  const int shards = shared_->options.shards;
  std::vector<Dormant> waking;
  {
    std::lock_guard lock(mu_);
    if (stopped_ || shards <= 0) return;
    held_shards_.insert(shard);
    shared_->shards_held = held_shards_.size();
    waking = ExtractShard(dormant_, shard, shards);
  }
  // Refreshed outside the lock: a refresh reads the store, and a definition supervisor calls
  // Upsert while holding locks of its own.
  for (Dormant& entry : waking) {
    if (entry.refresh) {
      auto refreshed = entry.refresh();
      if (!refreshed.ok()) {
        CAIRN_LOG_WARN("executor {}: reading its definition again failed ({}); starting it as it was",
                       entry.spec.consumer_id, refreshed.status().message());
      } else if (!refreshed->has_value()) {
        // Gone or not usable any more. With a position to catch up from, the executor as it was
        // still answers what came before that change, and retires at it in its own stream (as in
        // one process); without one it never ran, or retired already.
        auto cursor = shared_->cursors.LoadCursor(entry.spec.consumer_id);
        if (cursor.ok() && !cursor->has_value()) continue;
        if (!cursor.ok()) {
          CAIRN_LOG_WARN("executor {}: reading its cursor failed: {}; trying again", entry.spec.consumer_id,
                         cursor.status().message());
          std::lock_guard lock(mu_);
          dormant_.try_emplace(entry.spec.consumer_id, std::move(entry));  // Tick tries again
          continue;
        }
      } else {
        entry.spec = std::move((*refreshed)->first);
        entry.executor = std::move((*refreshed)->second);
      }
    }
    std::lock_guard lock(mu_);
    // An Upsert since the shard was marked held started the consumer already.
    if (stopped_ || !held_shards_.count(shard) || consumers_.count(entry.spec.consumer_id)) continue;
    std::string id = entry.spec.consumer_id;
    if (Status started = StartLocked(std::move(entry)); !started.ok()) {
      CAIRN_LOG_WARN("executor {}: starting it failed: {}", id, started.message());
    }
  }
}

void ExecutorHost::ReleaseShard(int shard) {
  const int shards = shared_->options.shards;
  std::vector<std::shared_ptr<Consumer>> stopping;
  {
    std::lock_guard lock(mu_);
    if (shards <= 0 || !held_shards_.erase(shard)) return;
    shared_->shards_held = held_shards_.size();
    stopping = ExtractShard(consumers_, shard, shards);
    releasing_[shard] = Releasing{stopping, std::chrono::steady_clock::now() + shared_->options.handover_grace};
  }
  for (const auto& consumer : stopping) consumer->Stop();  // waits for a step in progress
}

bool ExecutorHost::ShardReleased(int shard) {
  std::vector<std::shared_ptr<Consumer>> stopped;
  {
    std::lock_guard lock(mu_);
    auto it = releasing_.find(shard);
    if (it == releasing_.end()) return !held_shards_.count(shard);
    Releasing& release = it->second;
    bool running = false;
    for (const auto& consumer : release.consumers) running = running || consumer->Running() > 0;
    if (running) {
      // A run may wait for another executor of this shard, stopped here and not started elsewhere
      // until this one ends: after the grace, the runs go with the shard.
      if (!release.interrupted && std::chrono::steady_clock::now() >= release.deadline) {
        release.interrupted = true;
        CAIRN_LOG_INFO("executors: the runs of shard {} still in flight after {} ms continue in the shard's next "
                       "holder",
                       shard, shared_->options.handover_grace.count());
        for (const auto& consumer : release.consumers) consumer->Interrupt();
      }
      return false;
    }
    stopped = std::move(release.consumers);
    releasing_.erase(it);
  }
  for (const auto& consumer : stopped) consumer->SaveStopped();
  std::lock_guard lock(mu_);
  for (const auto& consumer : stopped) {
    Dormant entry = consumer->AsDormant();
    std::string id = entry.spec.consumer_id;
    // An Upsert while it stopped left a newer one.
    if (!stopped_ && !consumers_.count(id)) dormant_.try_emplace(id, std::move(entry));
  }
  return true;
}

size_t ExecutorHost::ShardsHeld() { return shared_->shards_held.load(); }

void ExecutorHost::Stop() {
  std::map<std::string, std::shared_ptr<Consumer>> consumers;
  {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  shared_->runtime.runs().SetPausedWaker(nullptr);  // waits for a wake in progress
  {
    std::lock_guard lock(mu_);
    consumers.swap(consumers_);
    dormant_.clear();
    releasing_.clear();  // stopped already; their runs are cancelled with the rest below
  }
  shared_->stopping = true;
  for (auto& [id, consumer] : consumers) consumer->Stop();
  shared_->consumers.Stop();
  shared_->jobs.Stop();  // cancels the runs in flight and waits for them
}

size_t ExecutorHost::CancelRunsOf(const std::string& trigger_id) { return shared_->runtime.runs().CancelTrigger(trigger_id); }

void ExecutorHost::CancelTreeSoon(const std::string& owner_id, const std::string& execution_id) {
  shared_->jobs.Submit(shared_->runtime.pool(), [shared = shared_.get(), owner_id, execution_id] {
    shared->runtime.runs().CancelTree(owner_id, execution_id);
  });
}

RunRegistry& ExecutorHost::runs() { return shared_->runtime.runs(); }

std::vector<std::string> ExecutorHost::ConsumerIds() {
  std::lock_guard lock(mu_);
  std::vector<std::string> ids;
  for (const auto& [id, consumer] : consumers_) ids.push_back(id);
  return ids;
}

}  // namespace cairn::exec
