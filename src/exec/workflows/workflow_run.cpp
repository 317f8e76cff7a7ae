#include "exec/workflows/workflow_run.h"

#include <algorithm>
#include <boost/json/serialize.hpp>
#include <chrono>

#include "base/json_util.h"
#include "base/log.h"
#include "exec/execution_record.h"
#include "exec/retry.h"
#include "store/record_pages.h"

namespace cairn::exec {
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

constexpr size_t kMaxHelpers = 32;  // helper jobs of one run in the pool at once

std::string UnitKey(const std::string& step_id, int64_t index) {
  return index < 0 ? step_id : step_id + "/" + std::to_string(index);
}

}  // namespace

struct WorkflowRun::Unit {
  size_t step = 0;
  int64_t index = -1;  // the item's index; -1: the step has no for_each
  json::value item;
  std::string key;        // UnitKey: the record's path under executions/<id>/steps/
  std::string record_id;  // its workflow.step.v1 record, "" until written
  std::string status = "pending";  // pending, running, completed, failed
  int64_t attempt = 0;             // the last attempt recorded
  bool request_written = false;    // loaded as running: that attempt's request exists
  json::value output;
  std::string code, message;
};

struct WorkflowRun::StepState {
  enum class Phase { kWaiting, kStarted, kEnded } phase = Phase::kWaiting;
  std::string status;  // once ended: completed, failed or skipped
  json::value output;
  std::vector<Unit*> units;
  int running = 0;
  bool skipped_record = false;  // a skipped record was loaded
};

WorkflowRun::WorkflowRun(const model::WorkflowDefinition& def, const CompiledWorkflow& compiled, WorkflowDeps deps,
                         const RunRequest& request, json::value input)
    : def_(def),
      compiled_(compiled),
      deps_(deps),
      request_(request),
      input_(std::move(input)),
      actor_("workflow:" + def.name),
      steps_(def.steps.size()) {}

WorkflowRun::~WorkflowRun() {
  abort_ = true;
  helpers_.Stop();
}

Status WorkflowRun::LoadRecords() {
  std::map<std::string, size_t> step_index;
  for (size_t i = 0; i < def_.steps.size(); ++i) step_index[def_.steps[i].id] = i;
  model::BreadcrumbQuery query;
  query.schema_name = std::string(model::kWorkflowStepSchema);
  query.all_tags = {"execution:" + request_.execution_id};
  query.include_context = true;
  query.limit = 500;
  return store::ForEachRecord(deps_.store, request_.trigger_event.owner_id, query, [&](const model::Breadcrumb& crumb) {
    if (!crumb.context.is_object()) return;
    const json::object& c = crumb.context.as_object();
    auto step = step_index.find(StringMember(c, "step"));
    if (step == step_index.end()) return;  // a step the definition no longer has
    const json::value* index = c.if_contains("index");
    int64_t item_index = index && index->is_int64() ? index->as_int64() : -1;
    std::string status = StringMember(c, "status");
    if (status == "skipped") {
      steps_[step->second].skipped_record = true;
      return;
    }
    auto unit = std::make_unique<Unit>();
    unit->step = step->second;
    unit->index = item_index;
    unit->key = UnitKey(step->first, item_index);
    unit->record_id = crumb.id;
    unit->status = status == "completed" || status == "failed" ? status : "running";
    const json::value* attempt = c.if_contains("attempt");
    unit->attempt = attempt && attempt->is_int64() ? attempt->as_int64() : 1;
    unit->request_written = unit->status == "running";
    if (const json::value* output = c.if_contains("output")) unit->output = *output;
    if (const json::value* error = c.if_contains("error"); error && error->is_object()) {
      unit->code = StringMember(error->as_object(), "code");
      unit->message = StringMember(error->as_object(), "message");
    }
    units_[unit->key] = std::move(unit);
  });
}

json::value WorkflowRun::StepsView() const {
  json::object view;
  for (size_t i = 0; i < steps_.size(); ++i) {
    if (steps_[i].phase != StepState::Phase::kEnded) continue;
    view[def_.steps[i].id] = json::object{{"status", steps_[i].status}, {"output", steps_[i].output}};
  }
  return view;
}

bool WorkflowRun::AllEnded() const {
  return std::all_of(steps_.begin(), steps_.end(), [](const StepState& s) { return s.phase == StepState::Phase::kEnded; });
}

store::WriteOp WorkflowRun::StepRecordOp(Unit& unit, const std::string& status, const StepAnswer* answer) {
  const model::WorkflowStep& step = def_.steps[unit.step];
  json::value error = nullptr;
  if (answer && answer->kind == StepAnswer::Kind::kFailed) {
    error = json::object{{"code", answer->code}, {"message", answer->message}};
  }
  json::object context{{"execution_id", request_.execution_id},
                       {"workflow", def_.name},
                       {"step", step.id},
                       {"index", unit.index < 0 ? json::value(nullptr) : json::value(unit.index)},
                       {"kind", std::string(model::StepKindName(step.kind))},
                       {"target", step.target},
                       {"status", status},
                       {"attempt", unit.attempt},
                       {"request_id", unit.attempt > 0 ? json::value(StepRequestId(request_.execution_id, step.id,
                                                                                     unit.index, unit.attempt))
                                                        : json::value(nullptr)},
                       {"output", answer && answer->kind == StepAnswer::Kind::kSucceeded ? answer->output : json::value()},
                       {"error", error}};
  std::vector<std::string> tags = {"workflow-step", "execution:" + request_.execution_id, "step:" + step.id,
                                   "status:" + status};
  if (!unit.record_id.empty()) {
    model::BreadcrumbPatch patch;
    patch.context.Set(std::move(context));
    patch.tags.Set(std::move(tags));
    return store::WriteOp::Update(unit.record_id, std::move(patch));
  }
  model::BreadcrumbDraft draft;
  draft.schema_name = std::string(model::kWorkflowStepSchema);
  draft.title = def_.name + ": " + unit.key;
  draft.path = ExecutionRecordPath(request_.execution_id) + "/steps/" + unit.key;
  draft.tags = std::move(tags);
  draft.context = std::move(context);
  draft.trace = ChildTrace(request_.trigger_event);
  return store::WriteOp::Create(std::move(draft));
}

Status WorkflowRun::WriteStepRecord(Unit& unit, const std::string& status, const StepAnswer* answer) {
  std::vector<store::WriteOp> ops;
  ops.push_back(StepRecordOp(unit, status, answer));
  model::WriteContext ctx{request_.trigger_event.owner_id, actor_, true};
  std::atomic<bool> never{false};  // an end is recorded even while the run stops
  auto written = RetryWhenBusy(never, [&] { return deps_.store.Apply(ctx, ops); });
  if (!written.ok()) return written.status();
  unit.record_id = written->front().breadcrumb.id;
  return Status::Ok();
}

bool WorkflowRun::StartReadySteps(std::unique_lock<std::mutex>&) {
  bool changed = true;
  while (changed && !failure_) {
    changed = false;
    for (size_t i = 0; i < def_.steps.size() && !failure_; ++i) {
      StepState& state = steps_[i];
      const model::WorkflowStep& step = def_.steps[i];
      if (state.phase != StepState::Phase::kWaiting) continue;
      bool ready = std::all_of(step.needs.begin(), step.needs.end(), [&](const std::string& need) {
        auto it = std::find_if(def_.steps.begin(), def_.steps.end(), [&](const auto& s) { return s.id == need; });
        return steps_[it - def_.steps.begin()].phase == StepState::Phase::kEnded;
      });
      if (!ready) continue;
      changed = true;
      json::value view = StepsView();
      WorkflowScope scope{&input_, &view, nullptr, 0};
      bool runs = !state.skipped_record;
      if (runs) {
        auto when = compiled_.When(i, scope);
        if (!when.ok()) {
          failure_ = WorkflowOutcome{WorkflowOutcome::Kind::kFailed, "expression_error",
                                     "step " + step.id + ": when: " + when.status().message(), nullptr, 0};
          break;
        }
        runs = *when;
        if (!runs) {
          Unit skipped;
          skipped.step = i;
          skipped.key = step.id;
          if (Status written = WriteStepRecord(skipped, "skipped", nullptr); !written.ok()) {
            failure_ = WorkflowOutcome{WorkflowOutcome::Kind::kFailed, "internal",
                                       "recording step " + step.id + " failed: " + written.message(), nullptr, 0};
            break;
          }
        }
      }
      if (!runs) {
        state.phase = StepState::Phase::kEnded;
        state.status = "skipped";
        continue;
      }
      std::vector<std::pair<int64_t, json::value>> items;
      if (step.for_each.empty()) {
        items.emplace_back(-1, nullptr);
      } else {
        auto listed = compiled_.Items(i, scope);
        if (!listed.ok()) {
          failure_ = WorkflowOutcome{WorkflowOutcome::Kind::kFailed, "expression_error",
                                     "step " + step.id + ": for_each: " + listed.status().message(), nullptr, 0};
          break;
        }
        for (size_t n = 0; n < listed->size(); ++n) items.emplace_back(static_cast<int64_t>(n), (*listed)[n]);
      }
      state.phase = StepState::Phase::kStarted;
      for (auto& [index, item] : items) {
        std::string key = UnitKey(step.id, index);
        auto& slot = units_[key];
        if (!slot) {
          slot = std::make_unique<Unit>();
          slot->step = i;
          slot->index = index;
          slot->key = key;
        }
        slot->item = std::move(item);
        state.units.push_back(slot.get());
        if (slot->status != "completed" && slot->status != "failed") ready_.push_back(slot.get());
      }
      EndStepIfDone(i);
    }
  }
  return !failure_;
}

void WorkflowRun::EndStepIfDone(size_t index) {
  StepState& state = steps_[index];
  if (state.phase != StepState::Phase::kStarted) return;
  for (const Unit* unit : state.units) {
    if (unit->status != "completed" && unit->status != "failed") return;
  }
  const model::WorkflowStep& step = def_.steps[index];
  state.phase = StepState::Phase::kEnded;
  const Unit* failed = nullptr;
  json::array outputs;
  for (const Unit* unit : state.units) {
    if (unit->status == "failed" && !failed) failed = unit;
    outputs.push_back(unit->output);
  }
  state.status = failed ? "failed" : "completed";
  state.output = step.for_each.empty() ? (state.units.empty() ? json::value() : state.units.front()->output)
                                       : json::value(std::move(outputs));
  if (failed && !step.continue_on_error && !failure_) {
    failure_ = WorkflowOutcome{WorkflowOutcome::Kind::kFailed, "step_failed",
                               "step " + failed->key + " failed: " + failed->code + ": " + failed->message, nullptr, 0};
    abort_ = true;
  }
}

WorkflowRun::Unit* WorkflowRun::TakeUnit() {
  for (auto it = ready_.begin(); it != ready_.end(); ++it) {
    Unit* unit = *it;
    StepState& state = steps_[unit->step];
    if (state.running >= def_.steps[unit->step].concurrency) continue;
    ready_.erase(it);
    ++state.running;
    ++running_units_;
    return unit;
  }
  return nullptr;
}

void WorkflowRun::RunUnit(Unit& unit) {
  const model::WorkflowStep& step = def_.steps[unit.step];
  json::value view;
  {
    std::lock_guard lock(mu_);
    view = StepsView();
  }
  WorkflowScope scope{&input_, &view, unit.index < 0 ? nullptr : &unit.item, std::max<int64_t>(unit.index, 0)};
  std::optional<StepAnswer> ended;
  auto input = compiled_.Input(unit.step, scope);
  if (!input.ok()) {
    ended = StepAnswer{StepAnswer::Kind::kFailed, nullptr, "expression_error", "input: " + input.status().message()};
  }
  StepCall call(deps_, def_.name, request_, step);
  int64_t backoff = step.retry.backoff_ms;
  while (!ended) {
    bool written_before = unit.request_written;
    if (!written_before) ++unit.attempt;
    unit.request_written = false;
    std::string request_id = StepRequestId(request_.execution_id, step.id, unit.index, unit.attempt);
    std::vector<store::WriteOp> also;
    if (!written_before) also.push_back(StepRecordOp(unit, "running", nullptr));
    std::vector<std::string> written;
    StepAnswer answer = call.Run(request_id, *input, written_before, std::move(also), abort_, &written);
    if (!written.empty()) unit.record_id = written.front();
    // Cancelling the run cancels its children, whose error answers may come first: the run
    // ends cancelled, not failed by them.
    if (request_.cancelled) answer = StepAnswer{StepAnswer::Kind::kCancelled, nullptr, "cancelled", "the run was cancelled"};
    if (answer.kind != StepAnswer::Kind::kFailed || unit.attempt >= step.retry.max_attempts || abort_) {
      ended = std::move(answer);
      break;
    }
    CAIRN_LOG_INFO("workflow {}: step {} attempt {} failed ({}: {}); retrying in {} ms", def_.name, unit.key,
                   unit.attempt, answer.code, answer.message, backoff);
    // The run's cancel flag has no wake-up of its own: look at it at least every 50 ms.
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(backoff);
    std::unique_lock lock(mu_);
    while (!abort_ && !request_.cancelled && std::chrono::steady_clock::now() < until) {
      changed_.wait_for(lock, std::min<std::chrono::steady_clock::duration>(until - std::chrono::steady_clock::now(), 50ms));
    }
    if (abort_ || request_.cancelled) {
      ended = StepAnswer{StepAnswer::Kind::kCancelled, nullptr, "cancelled", "the run stopped"};
      break;
    }
    backoff = std::min(backoff * 2, step.retry.max_backoff_ms);
  }
  Finish(unit, std::move(*ended));
}

void WorkflowRun::Finish(Unit& unit, StepAnswer answer) {
  std::string status;
  if (answer.kind != StepAnswer::Kind::kCancelled) {
    status = answer.kind == StepAnswer::Kind::kSucceeded ? "completed" : "failed";
    if (Status written = WriteStepRecord(unit, status, &answer); !written.ok()) {
      answer = StepAnswer{StepAnswer::Kind::kFailed, nullptr, "internal", "recording the step failed: " + written.message()};
      status = "failed";
    }
  }
  std::lock_guard lock(mu_);
  --steps_[unit.step].running;
  --running_units_;
  if (!status.empty()) {  // a cancelled attempt records nothing: it runs again after a restart
    unit.status = status;
    unit.output = std::move(answer.output);
    unit.code = std::move(answer.code);
    unit.message = std::move(answer.message);
    EndStepIfDone(unit.step);
  }
  changed_.notify_all();
}

void WorkflowRun::HelpWithUnits() {
  std::unique_lock lock(mu_);
  --helpers_queued_;
  while (!abort_) {
    Unit* unit = TakeUnit();
    if (!unit) break;
    lock.unlock();
    RunUnit(*unit);
    lock.lock();
  }
}

WorkflowOutcome WorkflowRun::Execute() {
  if (Status loaded = LoadRecords(); !loaded.ok()) {
    return WorkflowOutcome{WorkflowOutcome::Kind::kFailed, "internal", "reading the run's steps failed: " + loaded.message(),
                           nullptr, 0};
  }
  bool cancelled = false;
  std::unique_lock lock(mu_);
  while (true) {
    if (request_.cancelled && !abort_) {
      cancelled = true;
      abort_ = true;
    }
    if (!abort_ && !StartReadySteps(lock)) abort_ = true;
    if (abort_ && running_units_ == 0) break;
    if (!abort_ && AllEnded()) break;
    Unit* unit = abort_ ? nullptr : TakeUnit();
    if (unit) {
      // Others that may run now go to helpers; whatever they do not take, this thread runs next.
      while (helpers_queued_ < ready_.size() && helpers_queued_ < kMaxHelpers) {
        ++helpers_queued_;
        if (!helpers_.Submit(deps_.runtime.waiting_pool(), [this] { HelpWithUnits(); })) {
          --helpers_queued_;
          break;
        }
      }
      lock.unlock();
      RunUnit(*unit);
      lock.lock();
      continue;
    }
    // The cancel flag has no wake-up of its own: look at it at least every 50 ms.
    changed_.wait_for(lock, 50ms);
  }
  lock.unlock();
  helpers_.Stop();
  lock.lock();
  int64_t ended = 0;
  for (const auto& [key, unit] : units_) ended += unit->status == "completed" || unit->status == "failed";
  if (cancelled || request_.cancelled) return WorkflowOutcome{WorkflowOutcome::Kind::kCancelled, "cancelled", "the run was cancelled", nullptr, ended};
  if (failure_) {
    failure_->units_ended = ended;
    return *failure_;
  }
  json::value view = StepsView();
  WorkflowScope scope{&input_, &view, nullptr, 0};
  auto output = compiled_.Output(scope);
  if (!output.ok()) {
    return WorkflowOutcome{WorkflowOutcome::Kind::kFailed, "expression_error", "output: " + output.status().message(),
                           nullptr, ended};
  }
  json::value result;
  if (*output) {
    result = std::move(**output);
  } else {
    // The outputs of the steps no other step needs.
    json::object last;
    for (size_t i = 0; i < def_.steps.size(); ++i) {
      bool needed = std::any_of(def_.steps.begin(), def_.steps.end(), [&](const model::WorkflowStep& other) {
        return std::find(other.needs.begin(), other.needs.end(), def_.steps[i].id) != other.needs.end();
      });
      if (!needed) last[def_.steps[i].id] = steps_[i].output;
    }
    result = std::move(last);
  }
  return WorkflowOutcome{WorkflowOutcome::Kind::kCompleted, "", "", std::move(result), ended};
}

}  // namespace cairn::exec
