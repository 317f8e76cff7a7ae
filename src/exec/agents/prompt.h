// The prompt of an agent run (docs/agents.md "Prompt"): deterministic, so the same context always
// gives the same messages (and a resumed run the same conversation).
//
//   1. system: the agent's system_prompt (omitted when empty);
//   2. system: "Context:" and one section per key of the assembled context other than the
//      trigger, in subscription order (omitted when there are none). A breadcrumb renders as a heading
//      "<title> [<schema_name>]" and its context: through its llm_hints (include/exclude, then
//      the template's text) when it has valid ones, else compact JSON. An array renders each
//      item. user.message.v1 / agent.response.v1 records in an array (e.g. the default agent's
//      `history`) are not rendered there: they become user/assistant turns, oldest first, the
//      trigger itself left out (the array's other records stay in its section);
//   3. the conversation turns;
//   4. user: the trigger — its `content` (or `message`) when that is a string, else the whole
//      record rendered as above, through the llm_hints of its stored record (AgentRun adds them:
//      events do not carry them); the trigger is the last message, so the model answers it.
#pragma once

#include <boost/json/object.hpp>
#include <string>
#include <vector>

#include "exec/llm/llm_provider.h"

namespace cairn::exec {

std::vector<llm::ChatMessage> BuildPrompt(const std::string& system_prompt, const boost::json::object& context);

// One record (a FullView/TriggerView object) as text for the model, per the rules above.
std::string RenderRecord(const boost::json::value& record);

// The user's text in a trigger record: context.content or context.message when a string; "" else.
std::string UserTextOf(const boost::json::value& record);

}  // namespace cairn::exec
