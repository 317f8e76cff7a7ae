// Conversation: an agent execution's messages as its snapshots hold them (GET
// /executions/{id}/messages): system, user, assistant (with tool_calls) and tool (with
// tool_call_id) messages in order, plus the last reply's tool calls whose
// tool messages are not in the conversation yet.
#pragma once

#include <boost/json/object.hpp>
#include <string>

#include "base/status.h"
#include "store/store.h"

namespace cairn::exec {

// {execution_id, agent_id, step, snapshot_id, messages: [...], pending: [{id, name, arguments}],
//  usage} from the newest agent.snapshot.v1 of `execution_id` (deltas resolved); no snapshot yet
// (a run before its first reply, or not an agent): messages [] and snapshot_id null. Only
// snapshots cairn wrote on the execution's own path count (clients cannot write that schema).
Result<boost::json::object> ExecutionConversation(store::Store& store, const std::string& owner_id,
                                                  const std::string& execution_id);

}  // namespace cairn::exec
