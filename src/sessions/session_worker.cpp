#include "sessions/session_worker.h"

#include <boost/json/serialize.hpp>

#include "base/log.h"
#include "base/time_format.h"
#include "exec/agents/agent_run.h"
#include "exec/execution_record.h"
#include "exec/retry.h"
#include "model/agent_definition.h"
#include "model/tool_definition.h"
#include "sessions/records.h"
#include "sessions/session_service.h"

namespace cairn::sessions {
namespace json = boost::json;
namespace {

constexpr size_t kHistoryMessages = 20;
constexpr const char* kActor = "system:sessions";

json::object UsageJson(const exec::llm::Usage& usage) {
  return json::object{{"input", usage.prompt}, {"output", usage.completion}, {"total", usage.total}};
}

// A conversation record as the prompt renders it (exec/agents/prompt.h).
json::object TurnRecord(const json::object& message) {
  bool user = Str(message, "role") == "user";
  return json::object{
      {"id", Str(message, "id")},
      {"schema_name", user ? model::kUserMessageSchema : model::kAgentResponseSchema},
      {"context", json::object{{user ? "content" : "message", Str(message, "content")}}}};
}

}  // namespace

struct SessionWorker::Running {
  std::atomic<bool> cancelled{false};         // the run's flag: cancel, timeout or shutdown
  std::atomic<bool> cancel_requested{false};  // by the user
  std::mutex mu;
  std::set<std::string> open_requests;  // tool request ids without an answer yet
};

// Turns the agent loop's events into the session's info messages.
class SessionWorker::Observer final : public exec::AgentRunObserver {
 public:
  Observer(SessionWorker& worker, std::string session_id, std::string execution_id, Running& running)
      : worker_(worker), session_id_(std::move(session_id)), execution_id_(std::move(execution_id)), running_(running) {}

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
        if (!call.request_id.empty() && !call.result) {
          std::lock_guard lock(running_.mu);
          running_.open_requests.insert(call.request_id);
        }
        return Info("Calling " + call.call.name, "tool.called",
                    json::object{{"step", event.step}, {"tool", call.call.name}, {"request_id", call.request_id},
                                 {"arguments", call.call.arguments}});
      }
      case Type::kToolCompleted: {
        const auto& call = *event.call;
        {
          std::lock_guard lock(running_.mu);
          running_.open_requests.erase(call.request_id);
        }
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
  Running& running_;
};

SessionWorker::SessionWorker(store::Store& store, exec::AgentDeps deps, exec::ExecutorHost* host, const Clock& clock,
                             model::Limits limits, int workers)
    : store_(store), deps_(std::move(deps)), host_(host), clock_(clock), limits_(limits), worker_count_(workers),
      ids_(clock) {}

SessionWorker::~SessionWorker() { Stop(); }

Status SessionWorker::Start() {
  for (int i = 0; i < worker_count_; ++i) threads_.emplace_back([this] { Loop(); });
  // Every session with unfinished work, oldest first (all tenants).
  model::BreadcrumbQuery query;
  query.schema_name = std::string(kExecutionSchema);
  query.all_tags = {"session-execution"};
  query.any_tags = {"status:pending", "status:running"};
  query.include_context = true;
  query.order = model::SortOrder::kOldestFirst;
  query.limit = 500;
  while (true) {
    CAIRN_ASSIGN_OR_RETURN(store::Page page, store_.List("default", query));
    for (const auto& crumb : page.items) {
      if (crumb.context.is_object()) Schedule(crumb.owner_id, Str(crumb.context.as_object(), "session_id"));
    }
    if (!page.next_cursor) break;
    query.cursor = page.next_cursor;
  }
  return Status::Ok();
}

void SessionWorker::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stop_ && threads_.empty()) return;
    stop_ = true;
    stopping_ = true;
    for (auto& [id, run] : running_) run->cancelled = true;
  }
  cv_.notify_all();
  for (auto& thread : threads_) thread.join();
  threads_.clear();
  watchdog_.Stop();
}

void SessionWorker::Schedule(const std::string& owner_id, const std::string& session_id) {
  {
    std::lock_guard lock(mu_);
    auto key = std::make_pair(owner_id, session_id);
    if (stop_ || !queued_.insert(key).second) return;
    queue_.push_back(key);
  }
  cv_.notify_one();
}

bool SessionWorker::Cancel(const std::string& execution_id) {
  std::shared_ptr<Running> run;
  {
    std::lock_guard lock(mu_);
    auto it = running_.find(execution_id);
    if (it == running_.end()) return false;
    run = it->second;
  }
  run->cancel_requested = true;
  run->cancelled = true;
  // The tools it waits for stop too (a process tool is killed).
  std::set<std::string> open;
  {
    std::lock_guard lock(run->mu);
    open = run->open_requests;
  }
  for (const auto& request_id : open) {
    if (!host_) break;
    model::BreadcrumbQuery query;
    query.schema_name = std::string(model::kToolRequestSchema);
    query.all_tags = {"request:" + request_id};
    query.limit = 1;
    auto found = store_.List("default", query);
    if (found.ok() && !found->items.empty()) host_->CancelRunsOf(found->items.front().id);
  }
  return true;
}

void SessionWorker::Loop() {
  while (true) {
    std::pair<std::string, std::string> key;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] {
        if (stop_) return true;
        for (const auto& k : queue_) {
          if (!busy_.count(k)) return true;
        }
        return false;
      });
      if (stop_) return;
      auto it = std::find_if(queue_.begin(), queue_.end(), [&](const auto& k) { return !busy_.count(k); });
      key = *it;
      queue_.erase(it);
      queued_.erase(key);
      busy_.insert(key);
    }
    RunSession(key.first, key.second);
    {
      std::lock_guard lock(mu_);
      busy_.erase(key);
    }
    cv_.notify_all();
  }
}

void SessionWorker::RunSession(const std::string& owner_id, const std::string& session_id) {
  std::string last_run;
  while (true) {
    {
      std::lock_guard lock(mu_);
      if (stop_) return;
    }
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
  auto running = std::make_shared<Running>();
  {
    std::lock_guard lock(mu_);
    if (stop_) return false;
    running_[execution_id] = running;
  }
  struct Unregister {
    SessionWorker& worker;
    std::string id;
    ~Unregister() {
      std::lock_guard lock(worker.mu_);
      worker.running_.erase(id);
    }
  } unregister{*this, execution_id};
  model::WriteContext ctx{owner_id, kActor, true};
  auto info = [&](const std::string& text, const std::string& event_type, json::object metadata = {}) {
    return store::WriteOp::Create(MessageDraft(session_id, ids_.Next(), "info", text, execution_id, event_type,
                                               std::move(metadata)));
  };
  // Moves the execution (as last read) to `to` with `changes` and `also`, in one transaction.
  model::Breadcrumb current = execution;
  // An end (`totals`) also updates the session's last_* fields and token totals, in the same
  // transaction; a concurrent change of either record (a PATCH) makes it read both again.
  auto move = [&](const std::string& to, json::object changes, std::vector<store::WriteOp> also,
                  bool totals = false) -> Status {
    changes["status"] = to;
    for (int attempt = 0;; ++attempt) {
      CAIRN_ASSIGN_OR_RETURN(current, FindAt(store_, owner_id, kExecutionSchema, ExecutionPath(execution_id), "execution"));
      std::string from = Str(current.context.as_object(), "status");
      if (!CanMove(from, to)) return Status::Conflict("execution " + execution_id + " is " + from);
      std::vector<store::WriteOp> ops;
      ops.push_back(store::WriteOp::Update(current.id, ExecutionPatch(current, changes), current.version));
      for (const auto& op : also) ops.push_back(op);
      if (totals) {
        json::object ended = current.context.as_object();
        for (const auto& [key, value] : changes) ended[key] = value;
        auto session_op = SessionTotals(owner_id, session_id, ended);
        if (session_op.ok()) {
          ops.push_back(std::move(session_op).value());
        } else if (session_op.status().code() != StatusCode::kNotFound) {  // a deleted session has no totals
          return session_op.status();
        }
      }
      auto written = exec::RetryWhenBusy(stopping_, [&] { return store_.Apply(ctx, ops); });
      if (written.ok()) {
        current = written->front().breadcrumb;
        return Status::Ok();
      }
      if (written.status().code() != StatusCode::kFailedPrecondition || attempt == 4) return written.status();
    }
  };

  bool resumed = Str(fields, "status") == "running";
  std::vector<store::WriteOp> started;
  started.push_back(info(resumed ? "Execution resumed" : "Execution started", "execution.started"));
  // The first step starts with the execution (one write less per run).
  if (!resumed) started.push_back(info("Step 1 started", "step.started", json::object{{"step", 1}}));
  json::object start_changes;
  if (!resumed) start_changes["started_at"] = FormatRfc3339Micros(clock_.NowMicros());
  if (Status moved = move("running", std::move(start_changes), std::move(started)); !moved.ok()) {
    CAIRN_LOG_WARN("session execution {}: cannot start: {}", execution_id, moved.message());
    // Cancelled meanwhile: the session goes on with the next one. Anything else (the store
    // failing) would fail again at once: leave the session until it is scheduled again.
    return moved.code() == StatusCode::kConflict || moved.code() == StatusCode::kNotFound;
  }

  // What the run needs: the session, its agent, the message and the history before it.
  auto fail = [&](const std::string& why, const exec::llm::Usage& usage = {}) {
    std::vector<store::WriteOp> also;
    also.push_back(info("Execution failed: " + why, "execution.failed"));
    Status moved = move("failed", json::object{{"error_message", why},
                                              {"completed_at", FormatRfc3339Micros(clock_.NowMicros())},
                                              {"token_usage", UsageJson(usage)}},
                        std::move(also), /*totals=*/true);
    if (!moved.ok()) CAIRN_LOG_WARN("session execution {}: recording the failure failed: {}", execution_id, moved.message());
    return true;
  };
  auto session = FindAt(store_, owner_id, kSessionSchema, SessionPath(session_id), "session " + session_id);
  if (!session.ok()) return fail(session.status().message());
  const json::object& session_fields = session->context.as_object();
  std::string agent_id = Str(session_fields, "agent_id");
  auto agent_record = FindAt(store_, owner_id, model::kAgentSchema, model::AgentPath(agent_id), "agent");
  if (!agent_record.ok()) {
    return fail("the agent " + agent_id + " does not exist (define it as an agent.def.v1 record at agents/" + agent_id + ")");
  }
  auto definition = model::ParseAgentDefinition(agent_record->context, limits_);
  if (!definition.ok()) return fail("the agent " + agent_id + " is not usable: " + definition.status().message());

  std::string message_id;
  if (const json::value* input = fields.if_contains("input"); input && input->is_object()) {
    message_id = Str(input->as_object(), "message_id");
  }
  model::BreadcrumbQuery history_query;
  history_query.schema_name = std::string(kMessageSchema);
  history_query.all_tags = {TurnTag(session_id)};
  history_query.include_context = true;
  history_query.limit = 2 * kHistoryMessages + 8;  // room for messages queued after this one
  auto recent = store_.List(owner_id, history_query);
  if (!recent.ok()) return fail("reading the session's messages failed: " + recent.status().message());
  // The execution's own message, by its execution tag: with many messages queued after it, it
  // may be older than the history window.
  model::BreadcrumbQuery own_query;
  own_query.schema_name = std::string(kMessageSchema);
  own_query.all_tags = {"execution:" + execution_id, "role:user"};
  own_query.include_context = true;
  own_query.order = model::SortOrder::kOldestFirst;
  own_query.limit = 1;
  auto own = store_.List(owner_id, own_query);
  if (!own.ok()) return fail("reading the execution's message failed: " + own.status().message());
  json::object trigger;
  model::Event trigger_event;
  json::array history;
  // Newest first. User messages newer than this one belong to executions queued after it; the
  // answers of earlier executions may be newer (written while this one waited) and belong in.
  bool seen_trigger = false;
  if (!own->items.empty() && own->items.front().context.is_object() &&
      Str(own->items.front().context.as_object(), "id") == message_id) {
    const model::Breadcrumb& crumb = own->items.front();
    trigger = TurnRecord(crumb.context.as_object());
    trigger["title"] = crumb.title;
    trigger_event.breadcrumb_id = crumb.id;
    trigger_event.trace = crumb.trace;
  }
  for (const auto& crumb : recent->items) {
    if (!crumb.context.is_object()) continue;
    const json::object& message = crumb.context.as_object();
    if (Str(message, "id") == message_id) {
      seen_trigger = true;
    } else if ((seen_trigger || Str(message, "role") == "assistant") && history.size() < kHistoryMessages) {
      history.push_back(TurnRecord(message));
    }
  }
  if (trigger.empty()) return fail("the execution's message " + message_id + " was not found");
  trigger_event.owner_id = owner_id;
  trigger_event.type = "breadcrumb.created";
  trigger_event.schema_name = std::string(kMessageSchema);
  trigger_event.tags = {SessionTag(session_id)};
  trigger_event.context = trigger.at("context");
  json::object context{{"trigger", trigger}};
  if (!Str(session_fields, "initial_context_url").empty()) {
    context["initial_context"] = json::object{
        {"title", "The page the session started from"},
        {"context", json::object{{"url", Str(session_fields, "initial_context_url")}}}};
  }
  if (!history.empty()) context["history"] = std::move(history);

  exec::RunRequest request{ExecutionPath(execution_id), trigger_event, trigger, context, running->cancelled};
  Observer observer(*this, session_id, execution_id, *running);
  exec::AgentRunOptions options;
  options.execution_id = execution_id;
  options.observer = &observer;
  options.user_input = true;
  options.debug_snapshots = Str(fields, "snapshot_policy") == "debug";
  options.first_step_announced = !resumed;
  exec::AgentRun run(*definition, deps_, request, options);
  uint64_t token = watchdog_.Arm(exec::Watchdog::Clock::now() + std::chrono::milliseconds(definition->timeout_ms),
                                 &running->cancelled);
  exec::AgentOutcome outcome = run.Execute();
  bool timed_out = watchdog_.Disarm(token) && !running->cancel_requested;
  {
    std::lock_guard lock(mu_);
    if (stop_ && !running->cancel_requested) return false;  // shutdown: it continues after the next start
  }
  const exec::AgentState& state = outcome.state;
  json::object end{{"step_count", state.step},
                   {"token_usage", UsageJson(state.usage)},
                   {"last_snapshot_id", state.last_snapshot_id.empty() ? json::value(nullptr) : json::value(state.last_snapshot_id)}};
  Status ended;
  if (running->cancel_requested) {
    end["completed_at"] = FormatRfc3339Micros(clock_.NowMicros());
    std::vector<store::WriteOp> also;
    also.push_back(info("Execution cancelled", "execution.cancelled"));
    ended = move("cancelled", std::move(end), std::move(also), /*totals=*/true);
  } else if (timed_out) {
    return fail("timed out after " + std::to_string(definition->timeout_ms) + " ms", state.usage);
  } else if (outcome.kind == exec::AgentOutcome::Kind::kError) {
    return fail(outcome.code + ": " + outcome.message, state.usage);
  } else if (outcome.kind == exec::AgentOutcome::Kind::kPaused) {
    end["awaiting_input"] = json::object{{"request_id", outcome.input_request_id}, {"question", outcome.question}};
    std::vector<store::WriteOp> also;
    also.push_back(store::WriteOp::Create(MessageDraft(session_id, ids_.Next(), "notification", outcome.question,
                                                       execution_id, "execution.paused",
                                                       json::object{{"request_id", outcome.input_request_id}})));
    ended = move("paused", std::move(end), std::move(also));
  } else {
    // The final snapshot's id goes into the execution and the session.
    std::string final_id = state.last_snapshot_id;
    if (!outcome.final_snapshot) {  // the run's last snapshot is not the whole final state: write it
      model::BreadcrumbDraft snapshot;
      snapshot.schema_name = std::string(kSnapshotSchema);
      snapshot.title = "agent " + agent_id + " final";
      snapshot.path = "snapshots/" + execution_id + "/final";
      snapshot.tags = {"snapshot", "execution:" + execution_id, "agent:" + agent_id, "final"};
      snapshot.trace = exec::ChildTrace(trigger_event);
      snapshot.context = json::object{
          {"agent_execution_id", execution_id},
          {"execution_path", ExecutionPath(execution_id)},
          {"parent_snapshot_id", state.last_snapshot_id.empty() ? json::value(nullptr) : json::value(state.last_snapshot_id)},
          {"agent_id", agent_id},
          {"agent_name", agent_id},
          {"step_number", state.step},
          {"is_final", true},
          {"debug_mode", Str(fields, "snapshot_policy") == "debug"},
          {"state", exec::StateToJson(state)}};
      auto created = store_.Create(ctx, snapshot, "");
      Result<model::Breadcrumb> written =
          created.ok() ? Result<model::Breadcrumb>(created->breadcrumb)
                       : FindAt(store_, owner_id, kSnapshotSchema, *snapshot.path, "final snapshot");  // before a crash
      if (!written.ok()) return fail("saving the final snapshot failed: " + written.status().message(), state.usage);
      final_id = written->id;
    }
    std::string answer = outcome.output.is_object() ? json::serialize(outcome.output) : outcome.message;
    end["completed_at"] = FormatRfc3339Micros(clock_.NowMicros());
    end["last_snapshot_id"] = final_id;
    json::object output{{"content", answer}};
    if (outcome.output.is_object()) output["structured"] = outcome.output;
    if (!outcome.stop_reason.empty()) output["stop_reason"] = outcome.stop_reason;
    end["output"] = std::move(output);
    std::vector<store::WriteOp> also;
    also.push_back(store::WriteOp::Create(MessageDraft(session_id, ids_.Next(), "assistant", answer, execution_id, "")));
    also.push_back(info("Execution completed", "execution.completed",
                        json::object{{"step_count", state.step}, {"token_usage", UsageJson(state.usage)}}));
    if (Str(fields, "snapshot_policy") == "final") {
      // Step snapshots served the run's durability; the final one is what this policy keeps.
      model::BreadcrumbQuery steps;
      steps.schema_name = std::string(kSnapshotSchema);
      steps.all_tags = {"execution:" + execution_id};
      steps.limit = 1000;
      auto found = store_.List(owner_id, steps);
      if (found.ok()) {
        for (const auto& crumb : found->items) {
          if (crumb.id != final_id) also.push_back(store::WriteOp::Delete(crumb.id));
        }
      }
    }
    ended = move("completed", std::move(end), std::move(also), /*totals=*/true);
  }
  if (!ended.ok()) CAIRN_LOG_WARN("session execution {}: recording its end failed: {}", execution_id, ended.message());
  return true;
}

Result<store::WriteOp> SessionWorker::SessionTotals(const std::string& owner_id, const std::string& session_id,
                                                    const json::object& execution) {
  CAIRN_ASSIGN_OR_RETURN(model::Breadcrumb session, FindAt(store_, owner_id, kSessionSchema, SessionPath(session_id), "session"));
  json::object context = session.context.as_object();
  context["last_execution_id"] = execution.at("id");
  if (execution.contains("last_snapshot_id") && !execution.at("last_snapshot_id").is_null()) {
    context["last_snapshot_id"] = execution.at("last_snapshot_id");
  }
  auto number = [](const json::value* usage, const char* key) -> int64_t {
    const json::value* v = usage && usage->is_object() ? usage->as_object().if_contains(key) : nullptr;
    return v && v->is_int64() ? v->as_int64() : 0;
  };
  const json::value* before = context.if_contains("token_usage");
  const json::value* added = execution.if_contains("token_usage");
  json::object totals;
  for (const char* key : {"input", "output", "total"}) totals[key] = number(before, key) + number(added, key);
  context["token_usage"] = std::move(totals);
  model::BreadcrumbPatch patch;
  patch.context.Set(std::move(context));
  return store::WriteOp::Update(session.id, std::move(patch), session.version);
}

}  // namespace cairn::sessions
