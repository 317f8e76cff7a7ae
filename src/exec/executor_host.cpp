#include "exec/executor_host.h"

#include <condition_variable>
#include <set>
#include <thread>

#include "base/log.h"
#include "exec/context_assembler.h"
#include "exec/execution_record.h"

namespace cairn::exec {
namespace json = boost::json;

struct ExecutorHost::Shared {
  Shared(store::Store& s, store::CursorStore& c, bus::EventBus& b, const Clock& clk, HostOptions o)
      : store(s), cursors(c), bus(b), clock(clk), options(o), pool(o.workers) {}
  store::Store& store;
  store::CursorStore& cursors;
  bus::EventBus& bus;
  const Clock& clock;
  HostOptions options;
  WorkerPool pool;
  Watchdog watchdog;
  std::atomic<bool> stopping{false};
  // "<consumer id> <trigger key>" of the runs in flight, host-wide: a consumer replaced while its
  // runs go on (Remove then Upsert) must not take them over as if their process had died.
  std::mutex in_flight_mu;
  std::set<std::string> in_flight;
  Counter* completed = nullptr;
  Counter* failed = nullptr;
  Counter* skipped = nullptr;
  Counter* dropped = nullptr;
  Histogram* run_seconds = nullptr;
};

namespace {

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

int64_t IntOf(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_int64() ? v->as_int64() : 0;
}

std::string StringOf(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : "";
}

bool Transient(StatusCode code) { return code == StatusCode::kUnavailable || code == StatusCode::kResourceExhausted; }

// Runs `write` again while it fails with a full write queue (kResourceExhausted), a few times
// with a growing pause: a claim or a response lost to a burst would otherwise wait for a restart.
template <typename Fn>
auto RetryWhenBusy(const std::atomic<bool>& stopping, Fn write) -> decltype(write()) {
  auto result = write();
  for (int attempt = 0; attempt < 6 && !result.ok() && result.status().code() == StatusCode::kResourceExhausted &&
                        !stopping;
       ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20 << attempt));
    result = write();
  }
  return result;
}

}  // namespace

class ExecutorHost::Consumer : public std::enable_shared_from_this<Consumer> {
 public:
  struct Loaded {
    ExecutorSpec spec;
    std::shared_ptr<Executor> executor;
  };

  Consumer(std::shared_ptr<Shared> shared, ExecutorSpec spec, std::shared_ptr<Executor> executor)
      : shared_(std::move(shared)), loaded_(std::make_shared<Loaded>(Loaded{std::move(spec), std::move(executor)})) {}

  Status Start(int64_t start_seq) {
    const std::string& id = loaded_->spec.consumer_id;
    CAIRN_ASSIGN_OR_RETURN(std::optional<int64_t> stored, shared_->cursors.LoadCursor(id));
    read_pos_ = stored.value_or(start_seq);
    if (!stored) CAIRN_RETURN_IF_ERROR(shared_->cursors.SaveCursor(id, read_pos_));
    saved_ = read_pos_;
    subscription_ = shared_->bus.Subscribe([this] {
      std::lock_guard lock(mu_);
      woken_ = true;
      cv_.notify_all();
    });
    thread_ = std::thread([this] { Loop(); });
    return Status::Ok();
  }

  void Reload(ExecutorSpec spec, std::shared_ptr<Executor> executor) {
    std::lock_guard lock(mu_);
    loaded_ = std::make_shared<Loaded>(Loaded{std::move(spec), std::move(executor)});
    cv_.notify_all();
  }

  void Stop() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
    subscription_.reset();
  }

  std::string consumer_id() {
    std::lock_guard lock(mu_);
    return loaded_->spec.consumer_id;
  }

 private:
  std::shared_ptr<const Loaded> loaded() {
    std::lock_guard lock(mu_);
    return loaded_;
  }

  void Loop() {
    Recover();
    while (true) {
      {
        std::unique_lock lock(mu_);
        cv_.wait_for(lock, shared_->options.cursor_save_interval, [this] { return stop_ || woken_; });
        if (stop_) break;
        woken_ = false;
      }
      ReadAvailable();
      SaveCursor(false);
    }
    SaveCursor(true);
  }

  void ReadAvailable() {
    while (!Stopping()) {
      auto events = shared_->bus.Read(read_pos_, shared_->options.read_batch);
      if (!events.ok()) {
        CAIRN_LOG_WARN("executor {}: reading events failed: {}", loaded()->spec.consumer_id, events.status().message());
        return;
      }
      if (events->empty()) return;
      for (const auto& event : *events) {
        if (!Consider(event, true)) return;  // stopping
        std::lock_guard lock(mu_);
        read_pos_ = event->seq;
      }
    }
  }

  bool Stopping() {
    std::lock_guard lock(mu_);
    return stop_;
  }

  // Dispatches `event` if it triggers this executor. Blocks while the executor is at its
  // concurrency limit. Returns false when stopping (the event stays unread).
  bool Consider(const bus::EventPtr& event, bool live) {
    std::shared_ptr<const Loaded> current = loaded();
    const ExecutorSpec& spec = current->spec;
    if (event->owner_id != spec.owner_id || event->created_by == spec.actor) return true;
    bool triggered = false;
    for (const auto& sub : spec.subscriptions) triggered = triggered || model::TriggerMatches(sub, *event);
    if (!triggered) return true;
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
      std::unique_lock lock(mu_);
      int limit = std::max(1, std::min(loaded_->spec.concurrency, shared_->options.max_concurrency));
      cv_.wait(lock, [&] { return stop_ || running_ < limit; });
      if (stop_) return false;
      ++running_;
      if (live) unsettled_.insert(event->seq);
    }
    {
      std::lock_guard lock(shared_->in_flight_mu);
      shared_->in_flight.insert(key);
    }
    bool submitted = shared_->pool.Submit([self = shared_from_this(), current, event, key, live] {
      self->RunJob(*current, *event, key, live);
    });
    if (!submitted) Finish(key);
    return true;
  }

  // The claim: the id, version and context of the `running` record, or nullopt when the trigger
  // was handled already.
  struct Claimed {
    std::string id;
    int64_t version = 0;
    json::value context;
  };
  Result<std::optional<Claimed>> Claim(const ExecutorSpec& spec, const model::Event& event) {
    model::WriteContext ctx{spec.owner_id, spec.actor};
    auto created = shared_->store.Create(ctx, ClaimDraft(spec, event, shared_->clock.NowMicros()), "");
    if (created.ok()) return std::optional<Claimed>(Claimed{created->breadcrumb.id, 1, created->breadcrumb.context});
    if (created.status().code() != StatusCode::kConflict) return created.status();
    model::BreadcrumbQuery query;
    query.path = ExecutionPath(spec, event);
    query.include_context = true;
    query.limit = 1;
    CAIRN_ASSIGN_OR_RETURN(store::Page page, shared_->store.List(spec.owner_id, query));
    if (page.items.empty()) return Status::Conflict("claim path taken but its record is gone: " + *query.path);
    const model::Breadcrumb& record = page.items.front();
    if (ExecutionStatus(record.context) != "running") return std::optional<Claimed>();
    // Left `running` by a process that died: this process is the only runner, so take it over.
    auto taken = shared_->store.Update(ctx, record.id, TakeoverPatch(record.context, shared_->clock.NowMicros()),
                                       record.version);
    if (!taken.ok() && taken.status().code() == StatusCode::kFailedPrecondition) return std::optional<Claimed>();
    if (!taken.ok()) return taken.status();
    return std::optional<Claimed>(Claimed{taken->id, taken->version, taken->context});
  }

  void RunJob(const Loaded& loaded, const model::Event& event, const std::string& key, bool live) {
    const ExecutorSpec& spec = loaded.spec;
    if (shared_->stopping) return Finish(key);  // unsettled: run again after restart
    std::optional<Claimed> claimed;
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
      claimed = std::move(*claim);
    }
    auto started = std::chrono::steady_clock::now();
    json::object trigger = TriggerView(event);
    std::atomic<bool> cancelled{false};
    json::object context;
    RunRequest request{claimed ? claimed->id : "", event, trigger, context, cancelled};
    RunResult result;
    if (event.trace.depth >= shared_->options.max_depth) {
      result = loaded.executor->Refuse(request, "depth_exceeded",
                                       "trace depth " + std::to_string(event.trace.depth) + " reached the maximum of " +
                                           std::to_string(shared_->options.max_depth) + "; " + spec.actor +
                                           " did not run (a loop of executors triggering each other?)");
    } else {
      context = AssembleContext(shared_->store, spec.owner_id, event, trigger, spec.subscriptions);
      uint64_t token = shared_->watchdog.Arm(Watchdog::Clock::now() + spec.timeout, &cancelled);
      result = loaded.executor->Run(request);
      bool fired = shared_->watchdog.Disarm(token);
      if (shared_->stopping) return Finish(key);  // cancelled by shutdown: run again after restart
      if (fired) {
        result = loaded.executor->Refuse(request, "timeout",
                                         spec.actor + " timed out after " + std::to_string(spec.timeout.count()) + " ms");
      }
    }
    WriteResult(spec, event, claimed, std::move(result));
    if (!spec.record_executions && live) Settle(event.seq);
    if (shared_->run_seconds) {
      shared_->run_seconds->Observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    }
    Finish(key);
  }

  void WriteResult(const ExecutorSpec& spec, const model::Event& event, const std::optional<Claimed>& claimed,
                   RunResult result) {
    model::WriteContext ctx{spec.owner_id, spec.actor};
    std::vector<store::WriteOp> ops;
    std::string key = "response:" + spec.consumer_id + ":" + TriggerKey(event);
    if (result.respond) {
      result.response.trace = ChildTrace(event);
      if (claimed) result.response.tags.push_back("execution:" + claimed->id);
      ops.push_back(store::WriteOp::Create(std::move(result.response), key));
    }
    auto finish = [&](bool failed, const std::string& error) {
      return store::WriteOp::Update(claimed->id,
                                    FinishPatch(claimed->context, spec.actor, failed, error, shared_->clock.NowMicros()),
                                    claimed->version);
    };
    if (claimed) ops.push_back(finish(result.failed, result.error_message));
    if (ops.empty()) return;
    auto written = RetryWhenBusy(shared_->stopping, [&] { return shared_->store.Apply(ctx, ops); });
    if (written.ok()) {
      Counter* counter = result.failed ? shared_->failed : shared_->completed;
      if (counter) counter->Increment();
      return;
    }
    CAIRN_LOG_ERROR("executor {}: writing the result for {} failed: {}", spec.actor, event.breadcrumb_id,
                    written.status().message());
    if (claimed && !Transient(written.status().code())) {
      // The response itself was refused: record why, so the run is not repeated forever.
      auto marked = shared_->store.Apply(ctx, {finish(true, "the response could not be written: " +
                                                               written.status().message())});
      if (!marked.ok()) CAIRN_LOG_ERROR("executor {}: marking the run failed: {}", spec.actor, marked.status().message());
    }
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
    cv_.notify_all();
  }

  // Saves the position before the oldest unsettled event, when it moved (at most once per
  // interval unless `force`).
  void SaveCursor(bool force) {
    int64_t watermark;
    std::string id;
    {
      std::lock_guard lock(mu_);
      watermark = unsettled_.empty() ? read_pos_ : *unsettled_.begin() - 1;
      id = loaded_->spec.consumer_id;
      auto now = std::chrono::steady_clock::now();
      if (watermark == saved_ || (!force && now - last_save_ < shared_->options.cursor_save_interval)) return;
      last_save_ = now;
    }
    Status saved = shared_->cursors.SaveCursor(id, watermark);
    if (!saved.ok()) {
      CAIRN_LOG_WARN("executor {}: saving the cursor failed: {}", id, saved.message());
      return;
    }
    std::lock_guard lock(mu_);
    saved_ = watermark;
  }

  // Runs again what a previous process claimed and did not finish.
  void Recover() {
    std::shared_ptr<const Loaded> current = loaded();
    const ExecutorSpec& spec = current->spec;
    if (!spec.record_executions) return;
    model::BreadcrumbQuery query;
    query.schema_name = std::string(kExecutionSchema);
    query.context_match = {model::ContextRule{"$.consumer", model::RuleOp::kEq, json::value(spec.consumer_id)},
                           model::ContextRule{"$.status", model::RuleOp::kEq, json::value("running")}};
    query.include_context = true;
    query.order = model::SortOrder::kOldestFirst;
    query.limit = 100;
    auto page = shared_->store.List(spec.owner_id, query);
    if (!page.ok()) {
      CAIRN_LOG_WARN("executor {}: listing unfinished runs failed: {}", spec.actor, page.status().message());
      return;
    }
    for (const auto& record : page->items) {
      const json::object& rc = record.context.as_object();
      std::string trigger_id = StringOf(rc, "trigger_id");
      auto trigger = shared_->store.Get(spec.owner_id, trigger_id);
      if (!trigger.ok() || trigger->version != IntOf(rc, "trigger_version")) {
        model::WriteContext ctx{spec.owner_id, spec.actor};
        auto closed = shared_->store.Update(ctx, record.id,
                                            FinishPatch(record.context, spec.actor, true,
                                                        "the trigger was changed or deleted before the run finished",
                                                        shared_->clock.NowMicros()),
                                            record.version);
        if (!closed.ok()) CAIRN_LOG_WARN("executor {}: closing run {} failed", spec.actor, record.id);
        continue;
      }
      CAIRN_LOG_INFO("executor {}: running {} again after an interrupted attempt", spec.actor, trigger_id);
      auto event = std::make_shared<const model::Event>(EventFromRecord(*trigger, IntOf(rc, "trigger_seq")));
      if (!Consider(event, false)) return;
    }
  }

  std::shared_ptr<Shared> shared_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool woken_ = true;  // read once at start
  std::shared_ptr<const Loaded> loaded_;
  int running_ = 0;
  std::set<int64_t> unsettled_;      // seqs dispatched whose claim is not committed yet
  int64_t read_pos_ = 0;
  int64_t saved_ = 0;
  std::chrono::steady_clock::time_point last_save_{};
  std::unique_ptr<bus::Subscription> subscription_;
  std::thread thread_;
};

ExecutorHost::ExecutorHost(store::Store& store, store::CursorStore& cursors, bus::EventBus& bus, const Clock& clock,
                           HostOptions options, MetricsRegistry* metrics)
    : shared_(std::make_shared<Shared>(store, cursors, bus, clock, options)) {
  if (metrics) {
    shared_->completed = &metrics->GetCounter("cairn_executor_runs_total", "Executor runs finished", "status=\"completed\"");
    shared_->failed = &metrics->GetCounter("cairn_executor_runs_total", "Executor runs finished", "status=\"failed\"");
    shared_->skipped = &metrics->GetCounter("cairn_executor_claims_skipped_total", "Triggers already handled");
    shared_->dropped = &metrics->GetCounter("cairn_executor_triggers_dropped_total",
                                            "Triggers past the depth limit, dropped without an answer");
    shared_->run_seconds = &metrics->GetHistogram("cairn_executor_run_seconds", "Executor run time, claim to response");
  }
}

ExecutorHost::~ExecutorHost() { Stop(); }

Status ExecutorHost::Upsert(ExecutorSpec spec, std::shared_ptr<Executor> executor, int64_t start_seq) {
  std::lock_guard lock(mu_);
  if (stopped_) return Status::Unavailable("executors are stopping");
  std::string id = spec.consumer_id;
  auto it = consumers_.find(id);
  if (it != consumers_.end()) {
    it->second->Reload(std::move(spec), std::move(executor));
    return Status::Ok();
  }
  auto consumer = std::make_shared<Consumer>(shared_, std::move(spec), std::move(executor));
  CAIRN_RETURN_IF_ERROR(consumer->Start(start_seq));
  consumers_.emplace(id, std::move(consumer));
  return Status::Ok();
}

void ExecutorHost::Remove(const std::string& consumer_id, bool forget_cursor) {
  std::shared_ptr<Consumer> consumer;
  {
    std::lock_guard lock(mu_);
    auto it = consumers_.find(consumer_id);
    if (it == consumers_.end()) return;
    consumer = std::move(it->second);
    consumers_.erase(it);
  }
  consumer->Stop();
  if (forget_cursor) {
    Status deleted = shared_->cursors.DeleteCursor(consumer_id);
    if (!deleted.ok()) CAIRN_LOG_WARN("executor {}: deleting the cursor failed: {}", consumer_id, deleted.message());
  }
}

void ExecutorHost::Stop() {
  std::map<std::string, std::shared_ptr<Consumer>> consumers;
  {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    stopped_ = true;
    consumers.swap(consumers_);
  }
  shared_->stopping = true;
  for (auto& [id, consumer] : consumers) consumer->Stop();
  shared_->watchdog.Stop();  // cancels the runs in flight
  shared_->pool.Stop();
}

std::vector<std::string> ExecutorHost::ConsumerIds() {
  std::lock_guard lock(mu_);
  std::vector<std::string> ids;
  for (const auto& [id, consumer] : consumers_) ids.push_back(id);
  return ids;
}

}  // namespace cairn::exec
