// Executor: the part of the pipeline that differs between agents, tools and workflows — the
// execute step and the shape of the response (DESIGN.md §5). Everything else (subscriptions,
// claims, guards, context assembly, durable cursors, execution records, the response write) is
// the ExecutorHost's and is the same for every kind.
#pragma once

#include <atomic>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "model/breadcrumb.h"
#include "model/event.h"
#include "model/reserved.h"
#include "model/subscription.h"
#include "store/store.h"

namespace cairn::exec {

// What the host knows of an executor: who it is and what it listens to.
struct ExecutorSpec {
  std::string consumer_id;     // durable cursor name; "exec:<definition id>"
  std::string actor;           // created_by of its writes, e.g. "tool:echo"; never triggered by itself
  std::string kind;            // "tool", "agent", "workflow": for execution records
  std::string name;            // the definition's name
  std::string owner_id = model::kDefaultTenant;
  std::string definition_id;   // empty for system executors
  int64_t definition_version = 0;
  std::vector<model::Subscription> subscriptions;
  int concurrency = 4;
  std::chrono::milliseconds timeout{30000};
  // Whether runs are claimed and recorded as agent.execution.v1 breadcrumbs. Off only for
  // system responders whose response write is itself idempotent (the unknown-tool answerer).
  bool record_executions = true;
  // A system executor that takes the triggers of every tenant, not only `owner_id`'s, each run
  // reading and writing in its trigger's tenant (the unknown-tool answerer). Only with
  // record_executions off: claims and execution records belong to one tenant.
  bool every_tenant = false;
  // Runs that wait for other executors' answers (agents waiting for tool responses) go to a pool
  // of their own, so they can never take every worker from the executors they wait for.
  bool waits_on_executors = false;
  // Bounds the assembled context to this many estimated tokens (context_budget.h); 0: no bound.
  int64_t context_budget_tokens = 0;
  // Whether `secret` records may enter its context (model/access.h): an agent's only when its
  // definition sets allow_secret_context, since its context goes into an LLM prompt.
  bool allow_secret_context = true;
};

// Where a run sits in its tree of executions. A root has no parent, its own id as root, depth 0.
struct Lineage {
  std::string parent_execution_id;
  std::string root_execution_id;
  int64_t depth = 0;
  std::string session_id;  // the session the tree works for, "" when none
};

// One run's input.
struct RunRequest {
  std::string execution_id;         // the run's agent.execution.v1 id (execution_record.h)
  Lineage lineage;
  const model::Event& trigger_event;
  const boost::json::object& trigger;  // the trigger as a record (TriggerView)
  const boost::json::object& context;  // {trigger, <key>: ...}
  const std::atomic<bool>& cancelled;  // set at the run's timeout and at shutdown
  // When the run was taken up; a refusal after a timeout reports the real time spent from here.
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  // The run's first attempt for certain (its claim is new, a session execution never ran): no
  // earlier attempt can have left snapshots to resume from, so none are looked for.
  bool first_attempt = false;
  // The value of the trigger subscription's `input` expression (subscription.h), when it has
  // one: tools and workflows take it as their input instead of the trigger's.
  const boost::json::value* input = nullptr;
};

struct TokenUsage {
  int64_t input = 0;
  int64_t output = 0;
  int64_t total = 0;
};

// One run's outcome: the response to write (the host fills in trace and actor), or none, and
// what the run's agent.execution.v1 record says of it.
struct RunResult {
  bool respond = true;
  model::BreadcrumbDraft response;
  bool failed = false;        // the execution ends `failed` rather than `completed`
  bool cancelled = false;     // ... or `cancelled` (someone asked it to stop)
  std::string error_code;     // recorded on the execution when failed
  std::string error_message;
  boost::json::value output;  // null: none (the record keeps small outputs only)
  int64_t step_count = 0;
  TokenUsage token_usage;
  std::string last_snapshot_id;
  boost::json::object metadata;  // what is particular to the kind (an agent's model, stop reason)
  // The run waits for answers that may take long (a user's, through its session): it gives up its
  // worker. The host records it `paused` (no response) and runs it again — the same execution,
  // from its snapshots — when one of `awaiting` (request ids) is answered by a tool.response.v1
  // or an agent.response.v1, and at the next start.
  bool paused = false;
  std::vector<std::string> awaiting;
  boost::json::value awaiting_input;  // on the paused record: the question asked (null: none)
  // Written in the transaction of the run's record (a paused sub-agent's task record).
  std::vector<store::WriteOp> also;
};

class Executor {
 public:
  virtual ~Executor() = default;

  // Sees every event the executor's consumer reads, in seq order, before trigger matching (on the
  // consumer thread). For executors whose answers depend on what came before (the unknown-tool
  // responder follows the tool definitions this way).
  virtual void Observe(const model::Event& /*event*/) {}
  // True for an executor that overrides Observe: its consumer then reads every event (others skip,
  // unread, the events the bus found of no interest to them).
  virtual bool Observes() const { return false; }
  // True for an executor whose runs may end paused (RunResult::paused): its consumer is woken by
  // the answers they await at once (any executor's paused run goes on, at the latest at the
  // consumer's next tick).
  virtual bool MayPause() const { return false; }

  // A cheap check on the consumer thread before a trigger is dispatched (no claim, no worker):
  // false skips it. For executors that answer only some of what their selectors match.
  virtual bool Accepts(const model::Event& /*trigger*/) { return true; }

  // Executes one trigger. Called on a worker thread, concurrently up to the spec's concurrency.
  // Must return soon after `request.cancelled` becomes true.
  virtual RunResult Run(const RunRequest& request) = 0;

  // The response for a trigger the host will not run: `code` is "depth_exceeded", "timeout",
  // "cancelled" or "internal"; `message` says why. Every trigger gets an answer.
  virtual RunResult Refuse(const RunRequest& request, const std::string& code, const std::string& message) = 0;
};

// The trigger event as a record: model::EventView (type, seq, version, schema_name, title, tags,
// path, owner_id, created_by, trace, at, context) with the breadcrumb's id as "id".
boost::json::object TriggerView(const model::Event& event);

}  // namespace cairn::exec
