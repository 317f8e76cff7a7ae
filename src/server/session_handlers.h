// The sessions API (docs/sessions.md): sessions, their messages and snapshots through
// sessions::SessionService, executions of every kind through exec::ExecutionIndex (GET
// /executions, /executions/{id}, /executions/{id}/tree; cancel), and GET /sessions/{id}/events,
// the session's event stream.
//
// Every route reads its query with QueryReader (request_support.h): an unknown or repeated
// parameter, an empty value, a bad `limit` (1..limits.max_list_limit), a malformed cursor or a bad
// enum value is a 400 naming the parameter. Bodies are JSON objects (ParseJsonBody: Content-Type,
// depth; the server bounds their size); a body that breaks a rule is a 422 naming the field.
//
// The stream is an SseStream (sse_stream.h) over the events tagged `session:<id>`
// (breadcrumb.created and agent.token) with its own views: a stored message
// (agent.session.message.v1) becomes
//   id: <seq>
//   data: {session_id, message_id, execution_id, parent_execution_id (null), event_type, role,
//          content, metadata, timestamp}
// the end of a run descending from a session run (its agent.execution.v1 record, written when
// it ends) the same shape with parent_execution_id set, event_type execution.<status>, role
// info and metadata {kind, executor, status, depth, root_execution_id, duration_ms, error,
// token_usage}; an agent.token the same payload without id (event_type "agent.token", content
// the delta).
#pragma once

#include <boost/json/object.hpp>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "bus/ephemeral_hub.h"
#include "bus/event_bus.h"
#include "exec/execution_index.h"
#include "model/event.h"
#include "model/limits.h"
#include "server/router.h"
#include "sessions/session_service.h"

namespace cairn::server {

struct SseSpec;

// Registers the routes on `router`. `service` and `bus` (the stream's resume point and retention)
// must outlive the router.
void AddSessionRoutes(Router& router, sessions::SessionService& service, exec::ExecutionIndex& executions,
                      bus::EventBus& bus, const model::Limits& limits);

// --- The session stream (exposed for tests) ---

// The stream of session `session_id` of tenant `owner_id`, delivering events with seq > after_seq.
std::shared_ptr<SseSpec> SessionStreamSpec(const std::string& owner_id, const std::string& session_id,
                                           int64_t after_seq);

// The payload of a stored event of the session: nullopt unless it is the creation of a session
// message (schema agent.session.message.v1, type breadcrumb.created), the creation or update of
// the record of a descendant run (agent.execution.v1 with a parent: execution.<status>; a paused
// sub-agent's carries its question), or of a task of the session's tree (agent.task.v1:
// task.<status>). `message_id` is the message's id (context.id; the breadcrumb id only when that
// is missing), "" for a run or a task.
std::optional<boost::json::object> SessionMessagePayload(const std::string& session_id, const model::Event& event);

// The payload of an agent.token event of the session.
boost::json::object SessionTokenPayload(const std::string& session_id, const bus::EphemeralEvent& event);

// The payload of a tool.progress event (an MCP tool's notifications/progress) of a run working for
// the session: a step of that tool's run (docs/mcp.md).
boost::json::object SessionToolProgressPayload(const std::string& session_id, const bus::EphemeralEvent& event);

// --- Query parsing (exposed for tests) ---

// GET /sessions: status (active|archived|closed), user_id, agent_id, related_type, related_id,
// limit (default 50), cursor.
Result<sessions::SessionFilter> ParseSessionFilter(const QueryParams& query, const model::Limits& limits);
// GET /sessions/{id}/messages: after, limit (default 100), roles (comma list of user, assistant,
// info, notification), fold_info (true|false).
Result<sessions::MessageFilter> ParseMessageFilter(const QueryParams& query, const model::Limits& limits);
// GET /executions: kind (tool|agent|workflow), executor, status (pending|running|paused|
// completed|failed|cancelled), session_id, parent, root, agent_id (kind agent + executor),
// user_id, limit (default 50), cursor.
Result<exec::ExecutionListFilter> ParseExecutionFilter(const QueryParams& query, const model::Limits& limits);

}  // namespace cairn::server
