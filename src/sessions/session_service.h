// SessionService: the user-facing facade for talking to agents (DESIGN.md §6, docs/sessions.md).
//
// Sessions, their messages, the executions that do the work and their snapshots are breadcrumbs
// with reserved schemas; this is the only code that writes them (the HTTP handlers call it):
//
//   agent.session.v1          sessions/<id>                        tag session:<id>
//   agent.session.message.v1  (no path)                            tags session:<sid>, role:<role>
//   agent.execution.v1        executions/<id> (exec/execution_record.h)  + tags session-execution, active:<sid>
//   agent.snapshot.v1         snapshots/<execution id>/<n>         (written by the agent loop)
//
// Every change a user should see is a session message; lifecycle changes also write an `info`
// message whose metadata.event_type names the session event (execution.queued, .started,
// step.started, tool.called, tool.completed, step.completed, execution.paused, .completed,
// .failed, .cancelled), in the same transaction as the change. The session's event stream is
// those message events (session_events.h), so it is durable and resumable by seq.
//
// All methods are thread-safe. Errors: kNotFound (unknown id, or another tenant's), kValidation
// (bad input, naming the field), kConflict (an invalid status transition, a message refused by
// the session's `reject` policy), kConflict also for a message to a closed session.
#pragma once

#include <array>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "base/uuid.h"
#include "exec/execution_record.h"
#include "model/breadcrumb.h"
#include "model/limits.h"
#include "store/store.h"

namespace cairn::sessions {

inline constexpr std::string_view kSessionSchema = model::kSessionSchema;
inline constexpr std::string_view kMessageSchema = model::kSessionMessageSchema;
inline constexpr std::string_view kExecutionSchema = exec::kExecutionSchema;
inline constexpr std::string_view kSnapshotSchema = model::kAgentSnapshotSchema;
inline constexpr std::string_view kDefaultAgent = "default-chat-assistant";

// Who is asking: the tenant and the actor (X-Cairn-Actor) of the request.
struct Caller {
  std::string owner_id = model::kDefaultTenant;
  std::string actor = "anonymous";
  // Set for a principal below developer (a `user`, a `reader`): it sees only the sessions it
  // created and their executions and snapshots (others are kNotFound, and left out of lists).
  std::optional<std::string> only_creator = std::nullopt;
};

// One page of a listing, newest first.
struct Listing {
  std::vector<boost::json::object> items;
  std::optional<std::string> next_cursor;
};

struct SessionFilter {
  std::optional<std::string> status, user_id, agent_id, related_type, related_id;
  size_t limit = 50;
  std::optional<std::string> cursor;
};

struct MessageFilter {
  std::optional<std::string> after;       // a message id: only messages after it
  size_t limit = 100;
  std::vector<std::string> roles;         // empty: all
  bool fold_info = false;                 // leave out info messages
};

// What a new message started: ids for the 202 answer.
struct Accepted {
  std::string session_id;
  std::string message_id;
  std::string execution_id;  // the new execution, or the paused one the message answered
};

class SessionService {
 public:
  // Called after a commit that made an execution runnable (queued, answered, resumed) or asked
  // to cancel one: the worker picks it up. May be empty.
  using Notify = std::function<void(const std::string& owner_id, const std::string& session_id)>;
  using CancelRunning = std::function<bool(const std::string& owner_id, const std::string& execution_id)>;

  SessionService(store::Store& store, const Clock& clock, model::Limits limits);

  void SetNotify(Notify notify) { notify_ = std::move(notify); }
  // Asks the worker to stop a running execution; true when it was running there.
  void SetCancelRunning(CancelRunning cancel) { cancel_running_ = std::move(cancel); }

  // POST /sessions: {title?, user_id?, agent_id?, related_type?, related_id?, initial_context_url?,
  // metadata?, policy? (enqueue|reject|interrupt), snapshot_policy? (final|steps|debug)}.
  Result<boost::json::object> CreateSession(const Caller& caller, const boost::json::value& body);
  Result<boost::json::object> GetSession(const Caller& caller, const std::string& id);
  Result<Listing> ListSessions(const Caller& caller, const SessionFilter& filter);
  // PATCH: {title?, status? (active|archived|closed), metadata?}.
  Result<boost::json::object> UpdateSession(const Caller& caller, const std::string& id, const boost::json::value& body);

  // POST /sessions/{id}/messages {content, metadata?, related_type?, related_id?, context_url?,
  // snapshot_policy?}: the user message + a pending execution + "Execution queued", in one
  // transaction (or, while an execution waits for user input, the message is its answer).
  Result<Accepted> PostMessage(const Caller& caller, const std::string& session_id, const boost::json::value& body);
  // POST /sessions/messages: as above, creating the session first ({session: {...}} fields or
  // top-level title/agent_id/user_id/initial_context_url).
  Result<Accepted> PostFirstMessage(const Caller& caller, const boost::json::value& body);
  Result<Listing> ListMessages(const Caller& caller, const std::string& session_id, const MessageFilter& filter);

  // Executions are read through exec::ExecutionIndex (every kind). These act on session runs;
  // kNotFound for any other execution.
  Result<boost::json::object> CancelExecution(const Caller& caller, const std::string& id);
  Result<boost::json::object> ResumeExecution(const Caller& caller, const std::string& id);
  // POST /executions/{id}/input {content}: answers a paused execution's user_input question. A
  // paused sub-agent's (bus-triggered) is answered through its session's run, which waits for the
  // same question: the answer resumes both, and the view returned is the session run's.
  Result<boost::json::object> AnswerExecution(const Caller& caller, const std::string& id, const boost::json::value& body);
  Result<Listing> ListSnapshots(const Caller& caller, const std::string& execution_id, size_t limit,
                                const std::optional<std::string>& cursor);
  // GET /snapshots/{id}: with the full state (deltas resolved).
  Result<boost::json::object> GetSnapshot(const Caller& caller, const std::string& id);
  // kNotFound when caller.only_creator is set and execution `id` is not one it created (a run of
  // one of its sessions); Ok otherwise.
  Status CheckExecutionAccess(const Caller& caller, const std::string& id);

 private:
  Result<model::BreadcrumbDraft> SessionDraft(const boost::json::object& body, const std::string& id,
                                              const std::string& default_title);
  Result<model::Breadcrumb> LoadSession(const Caller& caller, const std::string& id);
  Result<model::Breadcrumb> LoadExecution(const Caller& caller, const std::string& id);
  // The session's pending, running and paused executions, oldest first.
  Result<std::vector<model::Breadcrumb>> ActiveExecutions(const std::string& owner_id, const std::string& session_id);
  // Moves execution `id` to status `to` (409 when the lifecycle forbids it) with `changes` and
  // the writes `also`, in one transaction guarded by the record's version.
  Result<boost::json::object> Transition(const Caller& caller, const std::string& id, const std::string& to,
                                         boost::json::object changes, std::vector<store::WriteOp> also = {});
  // Answers a paused execution's question: the user's message, the user_input tool response and
  // the move back to running.
  // `from_user` false (a resume): the tool result is `text`, the session gets an info message.
  Result<boost::json::object> Answer(const Caller& caller, const std::string& id, const std::string& text,
                                     boost::json::object metadata, bool from_user = true);
  // The session run that takes the answer for execution `id`: itself, or a paused sub-agent's root.
  Result<std::string> AnsweringRun(const Caller& caller, const std::string& id);
  // Messages of one session are posted one at a time (policies look at what is active).
  std::mutex& SessionLock(const std::string& session_id);

  store::Store& store_;
  const Clock& clock_;
  model::Limits limits_;
  UuidV7Generator ids_;
  Notify notify_;
  CancelRunning cancel_running_;
  std::array<std::mutex, 64> session_locks_;
};

}  // namespace cairn::sessions
