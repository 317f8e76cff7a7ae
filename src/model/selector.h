// Selector: the one filter over events used by SSE streams, webhooks and (later) executors
// (DESIGN.md §1, §4, §5). Pure: parsing, validation, serialisation and matching in memory.
//
// Parsing is strict: a malformed selector is a kValidation error whose field() names the bad
// part ("types[0]", "path", "context_match[1].op", "any_tags[2]"), never a selector that silently
// matches everything or nothing.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "model/event_expression.h"
#include "model/event.h"
#include "model/limits.h"
#include "model/query.h"

namespace cairn::model {

struct Selector {
  std::optional<std::string> schema_name;  // exact
  std::vector<std::string> any_tags;       // at least one present (empty: no condition)
  std::vector<std::string> all_tags;       // every one present
  // Glob over '/'-separated segments: '*' is exactly one segment, '**' any number (zero or
  // more); other segments are literal. An event without a path never matches a selector with one.
  std::optional<std::string> path;
  std::vector<ContextRule> context_match;  // all must hold, evaluated on the event's context
  // Event types: breadcrumb.created|updated|deleted (stored) and agent.token (ephemeral, see
  // below); empty = every stored type. An ephemeral type is only selected when named here.
  std::vector<std::string> types;
  // A CEL condition over event, record and before (event_expression.h); empty: none. `condition` is
  // its compiled form, set whenever `when` is (by the parsers).
  std::string when;
  std::shared_ptr<const EventExpression> condition;

  bool operator==(const Selector& other) const {
    return schema_name == other.schema_name && any_tags == other.any_tags && all_tags == other.all_tags &&
           path == other.path && context_match == other.context_match && types == other.types && when == other.when;
  }
};

// Ephemeral events (bus/ephemeral_hub.h) are never stored: they reach only the SSE streams open
// when they are published, never webhooks, executors or a resumed stream. They are matched by
// the same engine as an Event with type = their type, seq 0, their owner and tags, context =
// their data, and no schema_name or path: so a selector's any_tags, all_tags and context_match
// apply to them, while a selector with schema_name or path never matches one.
inline constexpr std::string_view kAgentTokenEventType = "agent.token";
// A running MCP tool call's notifications/progress (exec/mcp, docs/mcp.md).
inline constexpr std::string_view kToolProgressEventType = "tool.progress";

// True for the types of stored events: breadcrumb.created, breadcrumb.updated, breadcrumb.deleted.
bool IsStoredEventType(std::string_view type);
// True for the types of ephemeral events: agent.token, tool.progress.
bool IsEphemeralEventType(std::string_view type);
// Whether `selector` can match stored events (its `types` is empty or names a stored type).
bool SelectsStoredEvents(const Selector& selector);
// Whether `selector` names an ephemeral type in `types` (empty `types` selects none).
bool SelectsEphemeralEvents(const Selector& selector);

// Parses a selector given as a JSON object {"schema_name", "any_tags", "all_tags", "path",
// "context_match", "types", "when"}: all optional; unknown keys, null values and empty `any_tags` or
// `types` arrays are rejected. Tags (deduplicated, order kept) follow ValidateTag, the schema name
// ValidateSchemaName, context rules ParseContextRules; types must be breadcrumb.created,
// breadcrumb.updated, breadcrumb.deleted or agent.token; `when` must compile (EventExpression).
Result<Selector> ParseSelector(const boost::json::value& json, const Limits& limits);

// Parses a selector from URL query parameters (already percent-decoded): schema_name,
// any_tags=a,b, all_tags=a,b, tag (repeatable; adds to all_tags), path, types=a,b,
// context_match=<JSON: a rule or an array of rules> and when=<CEL>. Parameters named in `ignored` (e.g. "since",
// "selector_id") are skipped; any other unknown parameter, a repeated one (other than `tag`) or
// an empty list item is a kValidation error naming the parameter.
Result<Selector> ParseSelectorQuery(const std::vector<std::pair<std::string, std::string>>& params,
                                    const std::vector<std::string>& ignored, const Limits& limits);

// The selector as JSON (only the conditions it has); ParseSelector gives it back unchanged.
boost::json::object SelectorToJson(const Selector& selector);

// Whether `event` satisfies every condition of `selector` (`when` last, after the cheap ones).
// An empty selector matches every event.
bool Matches(const Selector& selector, const Event& event);

// Whether `path` matches `glob` segment by segment ('*' one segment, '**' zero or more). Both are
// split on '/'; an empty string has no segments.
bool PathGlobMatches(std::string_view glob, std::string_view path);

}  // namespace cairn::model
