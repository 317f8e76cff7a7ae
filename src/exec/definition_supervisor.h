// DefinitionSupervisor: keeps one executor running per definition breadcrumb of one schema
// (tool.v1, agent.def.v1; DESIGN.md §5 "definitions are data").
//
// - Start() starts an executor for every stored definition, then follows the schema's events: a
//   create starts the new executor at once (after the event that created it, so it never answers
//   older triggers); a running executor follows its own definition in its own event stream
//   (ExecutorHost::DefinitionFollower): an update reloads it exactly between the triggers written
//   before and after it, and a delete retires it there (everything written before is still
//   answered), after which the supervisor removes it and forgets its cursor. A known definition
//   resumes at its durable cursor.
// - Without executors (`run_executors` false) it only gives every definition its starting cursor,
//   so what is written meanwhile is processed when executors start.
// Definitions are read from every tenant passed to Start(); those of a tenant created later are
// followed from its events like any definition written while the supervisor runs.
// - With a sharded host (several workers: ExecutorHost::TakeShard) the executors of shards held by
//   other processes are dormant here: the supervisor keeps them current from the schema's events
//   (an unusable or deleted one is no longer followed here, and the host keeps it as it was, to
//   catch up to that change where its shard is taken next), and a dormant one starts from its
//   definition as stored when its shard comes to this process.
#pragma once

#include <boost/json/value.hpp>
#include <condition_variable>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bus/event_bus.h"
#include "exec/executor_host.h"
#include "store/cursor_store.h"
#include "store/store.h"

namespace cairn::exec {

// The consumer (durable cursor, claims, execution ids) of the executor of definition `id`.
std::string DefinitionConsumerId(const std::string& definition_id);

// The CursorStore key of a once-per-tenant marker (built-ins installed): `marker` itself for the
// default tenant (as before tenants existed), `marker@tenant` for the others.
std::string TenantMarker(const std::string& marker, const std::string& tenant);

struct DefinitionKind {
  std::string schema_name;  // the definitions' schema, e.g. "tool.v1"
  std::string label;        // for logs: "tool", "agent"
  // The executor of a definition (spec.consumer_id, definition_id and definition_version are
  // filled in by the supervisor). An error means the definition cannot be run (logged).
  using Built = std::pair<ExecutorSpec, std::shared_ptr<Executor>>;
  std::function<Result<Built>(const std::string& owner_id, const boost::json::value& context)> build;
};

class DefinitionSupervisor {
 public:
  // Everything passed in must outlive the supervisor.
  DefinitionSupervisor(store::Store& store, bus::EventBus& bus, store::CursorStore& cursors, ExecutorHost& host,
                       DefinitionKind kind);
  ~DefinitionSupervisor();  // Stop()s
  DefinitionSupervisor(const DefinitionSupervisor&) = delete;
  DefinitionSupervisor& operator=(const DefinitionSupervisor&) = delete;

  // Loads the stored definitions of every tenant in `tenants` and follows the events (of all
  // tenants) after `start_seq` (the bus position taken before anything was read from the store).
  Status Start(bool run_executors, int64_t start_seq, const std::vector<std::string>& tenants);
  // Stops following definitions (the host keeps running its executors until it stops). Idempotent.
  void Stop();

  // Gives `consumer` the cursor `start_seq` unless it has one.
  Status EnsureCursor(const std::string& consumer, int64_t start_seq);

 private:
  // The executor of the definition, its spec filled in; an error (logged) when it is not usable.
  Result<DefinitionKind::Built> Build(const std::string& id, int64_t version, const std::string& owner_id,
                                      const boost::json::value& context);
  // The executor of the definition as stored now; nullopt when it is gone or not usable
  // (ExecutorRefresh of a dormant consumer).
  Result<std::optional<DefinitionKind::Built>> Reread(const std::string& id, const std::string& owner_id);
  bool ApplyDefinition(const std::string& id, int64_t version, const std::string& owner_id,
                       const boost::json::value& context, int64_t start_seq);
  // Stops following a definition (deleted or unusable) whose consumer does not run here.
  void Forget(const std::string& id);
  bool Follow(const model::Event& event);
  bool IsDefinition(const model::Event& event) const;
  void Loop(int64_t after);
  void ReapRetired();

  store::Store& store_;
  bus::EventBus& bus_;
  store::CursorStore& cursors_;
  ExecutorHost& host_;
  DefinitionKind kind_;
  bool run_executors_ = true;
  std::mutex apply_mu_;                    // ApplyDefinition from the loop and from followers
  std::map<std::string, int64_t> loaded_;  // definition id -> version applied (apply_mu_)
  std::vector<std::pair<std::string, bool>> retired_;  // (definition id, deleted) to remove (apply_mu_)
  // The ids in loaded_, for the bus's wake-up filter (its own mutex, never held while calling out).
  std::mutex known_mu_;
  std::set<std::string> known_;
  void NoteKnown(const std::string& id, bool known);
  bool Concerns(const model::Event& event);
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool woken_ = false;
  std::unique_ptr<bus::Subscription> subscription_;
  std::thread thread_;
};

}  // namespace cairn::exec
