#include "sessions/session_worker.h"


#include "base/log.h"
#include "base/shard.h"
#include "base/time_format.h"
#include "exec/agents/agent_run.h"
#include "model/tool_definition.h"
#include "sessions/execution_recorder.h"
#include "sessions/records.h"
#include "sessions/session_service.h"
#include "store/record_pages.h"

namespace cairn::sessions {
namespace json = boost::json;

// Turns the agent loop's events into the session's info messages.
class SessionWorker::Observer final : public exec::AgentRunObserver {
 public:
  Observer(SessionWorker& worker, std::string session_id, std::string execution_id)
      : worker_(worker), session_id_(std::move(session_id)), execution_id_(std::move(execution_id)) {}

  std::vector<store::WriteOp> OnEvent(const exec::AgentEvent& event) override {
    using Type = exec::AgentEvent::Type;
    std::string step = std::to_string(event.step);
    switch (event.type) {
      case Type::kStepStarted:
        return Info("Step " + step + " started", "step.started", json::object{{"step", event.step}});
      case Type::kStepCompleted:
        return Info("Step " + step + " completed", "step.completed",
                    json::object{{"step", event.step}, {"usage", UsageJson(event.usage)}});
      case Type::kToolCalled: {
        const auto& call = *event.call;
        return Info("Calling " + call.call.name, "tool.called",
                    json::object{{"step", event.step}, {"tool", call.call.name}, {"request_id", call.request_id},
                                 {"arguments", call.call.arguments}});
      }
      case Type::kToolCompleted: {
        const auto& call = *event.call;
        bool failed = call.result && call.result->rfind("{\"error\"", 0) == 0;
        return Info(call.call.name + (failed ? " failed" : " finished"), "tool.completed",
                    json::object{{"step", event.step}, {"tool", call.call.name}, {"request_id", call.request_id},
                                 {"status", failed ? "error" : "success"}});
      }
    }
    return {};
  }

 private:
  std::vector<store::WriteOp> Info(const std::string& text, const std::string& event_type, json::object metadata) {
    std::vector<store::WriteOp> ops;
    ops.push_back(store::WriteOp::Create(
        MessageDraft(session_id_, worker_.ids_.Next(), "info", text, execution_id_, event_type, std::move(metadata))));
    return ops;
  }

  SessionWorker& worker_;
  std::string session_id_;
  std::string execution_id_;
};

SessionWorker::SessionWorker(store::Store& store, exec::AgentDeps deps, exec::Runtime& runtime, const Clock& clock,
                             model::Limits limits, int max_sessions)
    : store_(store),
      deps_(std::move(deps)),
      runtime_(runtime),
      clock_(clock),
      limits_(limits),
      ids_(clock),
      lanes_(runtime.waiting_pool(), jobs_, max_sessions,
             [this](const exec::LaneScheduler::Lane& lane) { RunSession(lane.owner_id, lane.id); }) {}

SessionWorker::~SessionWorker() { Stop(); }

void SessionWorker::EnableShards(int shards, std::function<std::vector<std::string>()> tenants) {
  std::lock_guard lock(shard_mu_);
  shards_ = shards;
  tenants_ = std::move(tenants);
}

Status SessionWorker::Start(const std::vector<std::string>& tenants) {
  // From here on Schedule() runs sessions; what it was told before is found by the scan below.
  started_ = true;
  bool sharded;
  {
    std::lock_guard lock(shard_mu_);
    sharded = shards_ > 0;
  }
  if (!sharded) return ScanUnfinished(tenants, 0, {});
  Tick();  // each shard's sessions are scanned for as it is taken (any taken before this: now)
  return Status::Ok();
}

void SessionWorker::TakeShard(int shard) {
  {
    std::lock_guard lock(shard_mu_);
    if (shards_ <= 0) return;
    held_shards_.insert(shard);
    unscanned_.insert(shard);  // the next Tick scans for every shard taken since, at once
  }
}

void SessionWorker::Tick() {
  if (!started_) return;
  std::function<std::vector<std::string>()> tenants;
  std::set<int> unscanned;
  int shards;
  {
    std::lock_guard lock(shard_mu_);
    unscanned.swap(unscanned_);
    tenants = tenants_;
    shards = shards_;
  }
  if (unscanned.empty() || !tenants) return;
  Status scanned = ScanUnfinished(tenants(), shards, unscanned);
  if (scanned.ok()) return;
  CAIRN_LOG_WARN("sessions: looking for the unfinished executions of {} shards taken failed: {}; trying again",
                 unscanned.size(), scanned.message());
  std::lock_guard lock(shard_mu_);
  for (int shard : unscanned) {
    if (held_shards_.count(shard)) unscanned_.insert(shard);
  }
}

void SessionWorker::ReleaseShard(int shard) {
  std::lock_guard lock(shard_mu_);
  held_shards_.erase(shard);
  unscanned_.erase(shard);
}

bool SessionWorker::ShardReleased(int shard) {
  std::lock_guard lock(shard_mu_);
  auto running = running_by_shard_.find(shard);
  return !held_shards_.count(shard) && (running == running_by_shard_.end() || running->second == 0);
}

size_t SessionWorker::ShardsHeld() {
  std::lock_guard lock(shard_mu_);
  return held_shards_.size();
}

bool SessionWorker::Enter(const std::string& session_id) {
  std::lock_guard lock(shard_mu_);
  if (shards_ <= 0) return true;
  int shard = ShardOf(session_id, shards_);
  if (!held_shards_.count(shard)) return false;
  ++running_by_shard_[shard];
  return true;
}

void SessionWorker::Leave(const std::string& session_id) {
  std::lock_guard lock(shard_mu_);
  if (shards_ > 0) --running_by_shard_[ShardOf(session_id, shards_)];
}

Status SessionWorker::ScanUnfinished(const std::vector<std::string>& tenants, int shards,
                                     const std::set<int>& only) {
  // Every session with unfinished work, oldest first, in every tenant.
  for (const std::string& tenant : tenants) {
    model::BreadcrumbQuery query;
    query.schema_name = std::string(kExecutionSchema);
    query.all_tags = {"session-execution"};
    query.any_tags = {"status:pending", "status:running"};
    query.include_context = true;
    query.order = model::SortOrder::kOldestFirst;
    query.limit = 500;
    CAIRN_RETURN_IF_ERROR(store::ForEachRecord(store_, tenant, query, [&](const model::Breadcrumb& crumb) {
      if (!crumb.context.is_object()) return;
      std::string session_id = Str(crumb.context.as_object(), "session_id");
      if (shards == 0 || only.count(ShardOf(session_id, shards))) Schedule(crumb.owner_id, session_id);
    }));
  }
  return Status::Ok();
}

void SessionWorker::Stop() {
  stopping_ = true;
  lanes_.Stop();
  jobs_.Stop();  // cancels the runs in flight and waits for them
}

void SessionWorker::Schedule(const std::string& owner_id, const std::string& session_id) {
  if (!started_) return;  // sessions run only where the worker was started (docs/deploy.md)
  lanes_.Schedule({owner_id, session_id});
}

bool SessionWorker::Holds(const std::string& session_id) {
  std::lock_guard lock(shard_mu_);
  return shards_ <= 0 || held_shards_.count(ShardOf(session_id, shards_)) > 0;
}

bool SessionWorker::Cancel(const std::string& owner_id, const std::string& execution_id) {
  exec::RunRegistry& runs = runtime_.runs();
  bool here = runs.Find(owner_id, execution_id).has_value();
  // The run and the tools it waits for stop (a process tool is killed, a stream aborted).
  runs.CancelTree(owner_id, execution_id);
  return here;
}

void SessionWorker::CancelSoon(const std::string& owner_id, const std::string& execution_id) {
  if (!started_) return;
  jobs_.Submit(runtime_.pool(), [this, owner_id, execution_id] { Cancel(owner_id, execution_id); });
}

void SessionWorker::RunSession(const std::string& owner_id, const std::string& session_id) {
  // Sharded, a session whose shard went elsewhere since it was scheduled does not run here.
  if (!Enter(session_id)) return;
  RunHeldSession(owner_id, session_id);
  Leave(session_id);
}

void SessionWorker::RunHeldSession(const std::string& owner_id, const std::string& session_id) {
  std::string last_run;
  while (true) {
    if (jobs_.stopping()) return;
    if (!Holds(session_id)) return;  // its shard was given up: the next holder goes on
    model::BreadcrumbQuery query;
    query.schema_name = std::string(kExecutionSchema);
    query.all_tags = {ActiveTag(session_id)};
    query.include_context = true;
    query.order = model::SortOrder::kOldestFirst;
    query.limit = 1;
    auto found = store_.List(owner_id, query);
    if (!found.ok()) {
      CAIRN_LOG_WARN("session {}: reading its executions failed: {}", session_id, found.status().message());
      return;
    }
    // Nothing to do, or the oldest waits for the user: later ones wait behind it.
    if (found->items.empty() || !found->items.front().context.is_object() ||
        Str(found->items.front().context.as_object(), "status") == "paused") {
      return;
    }
    // The same execution again right after its run: its end could not be recorded (the store
    // failing); it is tried again when the session is next scheduled or at the next start.
    std::string id = Str(found->items.front().context.as_object(), "id");
    if (id == last_run) return;
    last_run = id;
    if (!RunExecution(owner_id, found->items.front())) return;
  }
}

bool SessionWorker::RunExecution(const std::string& owner_id, const model::Breadcrumb& execution) {
  const json::object& fields = execution.context.as_object();
  std::string execution_id = Str(fields, "id");
  std::string session_id = Str(fields, "session_id");
  std::atomic<bool> cancelled{false};  // the run's flag: cancel, timeout or shutdown
  exec::JobGroup::Watch stop_watch = jobs_.WatchCancel(&cancelled);
  if (jobs_.stopping()) return false;
  ExecutionRecorder record(store_, ids_, clock_, stopping_, owner_id, session_id, execution_id);
  auto input = LoadRunInput(store_, owner_id, fields, limits_, deps_.searcher, deps_.reader_for);
  if (!input.ok()) {
    record.Fail(input.status().code() == StatusCode::kNotFound ? "not_found" : "invalid_definition",
                input.status().message());
    return true;
  }

  // Registered before it shows as running, so a cancel that sees it running always reaches it.
  json::object in_flight = fields;
  in_flight["status"] = "running";
  exec::RunRegistry::Registration registration =
      runtime_.runs().Add(owner_id, std::move(in_flight), input->trigger_event.breadcrumb_id, &cancelled);

  bool resumed = Str(fields, "status") == "running";
  std::vector<store::WriteOp> started;
  started.push_back(record.Info(resumed ? "Execution resumed" : "Execution started", "execution.started"));
  // The first step starts with the execution (one write less per run).
  if (!resumed) started.push_back(record.Info("Step 1 started", "step.started", json::object{{"step", 1}}));
  json::object start_changes{
      {"definition", json::object{{"id", input->definition_id}, {"version", input->definition_version}}}};
  if (!resumed) start_changes["started_at"] = FormatRfc3339Micros(clock_.NowMicros());
  if (!input->context_dropped.empty()) {  // what the context budget left out, as a bus-triggered run records it
    const json::value* before = fields.if_contains("metadata");
    json::object metadata = before && before->is_object() ? before->as_object() : json::object{};
    metadata["context_dropped"] = input->context_dropped;
    start_changes["metadata"] = std::move(metadata);
  }
  if (Status moved = record.Move("running", std::move(start_changes), std::move(started)); !moved.ok()) {
    CAIRN_LOG_WARN("session execution {}: cannot start: {}", execution_id, moved.message());
    // Cancelled meanwhile: the session goes on with the next one. Anything else (the store
    // failing) would fail again at once: leave the session until it is scheduled again.
    return moved.code() == StatusCode::kConflict || moved.code() == StatusCode::kNotFound;
  }
  exec::RunRequest request{execution_id, exec::Lineage{"", execution_id, 0, session_id}, input->trigger_event,
                           input->trigger, input->context, cancelled};
  request.first_attempt = !resumed;
  Observer observer(*this, session_id, execution_id);
  exec::AgentRunOptions options;
  options.observer = &observer;
  options.user_input = true;
  options.debug_snapshots = Str(fields, "snapshot_policy") == "debug";
  options.first_step_announced = !resumed;
  exec::AgentRun run(input->definition, deps_, request, options);
  exec::Watchdog& watchdog = runtime_.watchdog();
  uint64_t token =
      watchdog.Arm(exec::Watchdog::Clock::now() + std::chrono::milliseconds(input->definition.timeout_ms), &cancelled);
  exec::AgentOutcome outcome = run.Execute();
  bool cancel_requested = registration.cancel_requested();
  bool timed_out = watchdog.Disarm(token) && !cancel_requested;
  if (jobs_.stopping() && !cancel_requested) return false;  // shutdown: it continues after the next start
  const exec::AgentState& state = outcome.state;
  Status ended;
  if (cancel_requested) {
    std::vector<store::WriteOp> also;
    also.push_back(record.Info("Execution cancelled", "execution.cancelled"));
    ended = record.Move("cancelled",
                        json::object{{"step_count", state.step},
                                     {"token_usage", UsageJson(state.usage)},
                                     {"completed_at", FormatRfc3339Micros(clock_.NowMicros())}},
                        std::move(also), /*totals=*/true);
  } else if (timed_out && outcome.kind == exec::AgentOutcome::Kind::kError) {
    // The deadline stopped the run (an answer that came just in time is kept).
    record.Fail("timeout", "timed out after " + std::to_string(input->definition.timeout_ms) + " ms", state.usage);
  } else if (outcome.kind == exec::AgentOutcome::Kind::kError) {
    record.Fail(outcome.code, outcome.message, state.usage);
  } else if (outcome.kind == exec::AgentOutcome::Kind::kPaused) {
    // The question is this run's, or a sub-agent's of its tree (which the notification names).
    json::object awaiting = outcome.awaiting_input;
    awaiting["request_id"] = outcome.input_request_id;
    awaiting["question"] = outcome.question;
    std::string asker = Str(awaiting, "execution_id");
    bool sub_agent = !asker.empty() && asker != execution_id;
    std::string text = sub_agent ? "The sub-agent " + Str(awaiting, "agent_id") + " asks: " + outcome.question : outcome.question;
    json::object metadata{{"request_id", outcome.input_request_id}};
    if (sub_agent) {
      metadata["agent_id"] = awaiting.at("agent_id");
      metadata["asked_by_execution_id"] = asker;
      metadata["question"] = outcome.question;
    }
    std::vector<store::WriteOp> also;
    also.push_back(store::WriteOp::Create(MessageDraft(session_id, ids_.Next(), "notification", text, execution_id,
                                                       "execution.paused", std::move(metadata))));
    ended = record.Move("paused",
                        json::object{{"step_count", state.step},
                                     {"token_usage", UsageJson(state.usage)},
                                     {"awaiting_input", std::move(awaiting)}},
                        std::move(also));
  } else {
    ended = record.Complete(outcome, fields, input->definition.agent_id, input->trigger_event);
    if (!ended.ok() && ended.code() != StatusCode::kConflict) record.Fail("internal", "recording the answer failed: " + ended.message(), state.usage);
  }
  if (!ended.ok()) CAIRN_LOG_WARN("session execution {}: recording its end failed: {}", execution_id, ended.message());
  return true;
}

}  // namespace cairn::sessions
