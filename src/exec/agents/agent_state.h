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
  std::optional<std::string> result;  // the tool message's content, once known (snapshots keep it
                                      // only for calls answered without a request)
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
  size_t snapshot_messages = 0;  // messages covered by the snapshots written so far (not stored)
};

// Snapshots store the messages added since the previous snapshot ("messages_from" > 0, a delta)
// and the whole state every kFullSnapshotEvery snapshots, so a long run does not write O(n²).
inline constexpr int64_t kFullSnapshotEvery = 8;

// The state; `messages_from` > 0 stores only messages[messages_from..] (and says so).
boost::json::object StateToJson(const AgentState& state, size_t messages_from = 0);
// kInternal when `json` is not what StateToJson wrote. A delta's messages are only those stored
// in it; `messages_from` says where they start.
Result<AgentState> StateFromJson(const boost::json::value& json, size_t* messages_from = nullptr);

// The full state of the snapshot record `snapshot_id` (deltas resolved through
// parent_snapshot_id), with its id as last_snapshot_id.
class SnapshotReader {
 public:
  virtual ~SnapshotReader() = default;
  virtual Result<boost::json::object> Context(const std::string& snapshot_id) = 0;  // the record's context
};
Result<AgentState> LoadFullState(SnapshotReader& reader, const std::string& snapshot_id);

}  // namespace cairn::exec
