// The context budget (docs/agents.md "Context budget"): an agent's `context_budget_tokens`
// bounds the context assembled for a run (context_assembler.h) before it becomes the prompt.
//
// Tokens are estimated in one place, EstimateTokens: the bytes of the compact JSON of a value
// divided by 4, rounded up (about 4 bytes of English/JSON per token for the common BPE
// tokenizers). It is an estimate, not a tokenizer: it overcounts the rendered prompt (which drops
// JSON keys and ids) rather than undercounts it.
//
// ApplyContextBudget trims `context` ({"trigger", <key>: ...}, as AssembleContext returns it)
// until EstimateTokens(context) <= budget_tokens:
//   - the trigger is never dropped (a trigger alone over the budget leaves just the trigger);
//   - sections go in ascending subscription `priority` (lowest first; among equals, the one the
//     definition gives last first), so higher-priority sections are kept;
//   - inside an array section (recent, search, vector) records go from its end first: the oldest
//     of `recent` (newest first) and the least similar of `search`/`vector` (most similar first);
//     an emptied array stays as `[]` so the prompt shows the section had nothing left;
//   - an object section (latest, event_data) is removed whole.
// It returns what was dropped, one entry per trimmed section, in the order trimmed:
//   {"key", "fetch", "priority", "dropped": <records>, "kept": <records left>, "ids": [...]}
// (ids of the dropped records, at most kMaxDroppedIds of them). Empty when nothing was dropped
// or budget_tokens <= 0 (no budget).
#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <vector>

#include "model/subscription.h"

namespace cairn::exec {

inline constexpr size_t kMaxDroppedIds = 50;

// Estimated tokens of `value`: ceil(bytes of its compact JSON / 4).
int64_t EstimateTokens(const boost::json::value& value);

boost::json::array ApplyContextBudget(boost::json::object& context,
                                      const std::vector<model::Subscription>& subscriptions, int64_t budget_tokens);

}  // namespace cairn::exec
