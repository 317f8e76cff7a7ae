// AgentState: where an agent execution stands — what its agent.snapshot.v1 records hold, and what
// a resumed execution continues from (docs/agents.md "Durability").
//
// Invariants the loop keeps: a model reply is in `messages` before anything it asked for is
// done; `pending` lists the tool calls of the last reply that have no tool message yet, each with
// the request id its tool.request.v1 was written with (in the same transaction as the snapshot
// that lists it), or with its result when it was answered without a request (unknown tool,
// arguments that are not JSON).
#pragma once

#include <boost/json/object.hpp>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "exec/llm/llm_provider.h"

namespace cairn::exec {

struct PendingCall {
  llm::ToolCallRequest call;
  std::string request_id;             // empty: answered without a request
  std::optional<std::string> result;  // the tool message's content, once known
};

struct AgentState {
  int64_t step = 0;  // model replies received
  std::vector<llm::ChatMessage> messages;
  std::vector<PendingCall> pending;
  llm::Usage usage;
  std::map<std::string, int64_t> call_counts;  // "<tool>\n<arguments>" -> times asked
  bool repair_asked = false;                   // the one output repair round was used
  int64_t snapshots = 0;                       // snapshots written so far
  std::string last_snapshot_id;
};

boost::json::object StateToJson(const AgentState& state);
// kInternal when `json` is not what StateToJson wrote.
Result<AgentState> StateFromJson(const boost::json::value& json);

}  // namespace cairn::exec
