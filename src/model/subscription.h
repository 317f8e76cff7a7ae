// Subscription: what an executor listens to (DESIGN.md §5) — a selector plus its role, the key
// its data goes under in the assembled context, and how that data is fetched.
//
// JSON form (one entry of a definition's `subscriptions.selectors`): the selector's own fields
// (see selector.h) plus
//   "role":  "trigger" (default) | "context"
//   "key":   where the data goes in the assembled context (default: the selector's schema_name;
//            required when the selector has none; "trigger" is reserved)
//   "fetch": "event_data" | "latest" | "recent" | "search" | "vector", or {"method": ..., "limit": N}
//            (default: "latest" for context subscriptions; triggers always carry the event);
//            "search" and "vector": the matching records most similar to the trigger's text, by
//            full text (BM25) or by vector (docs/search.md)
//   "limit": for "recent", "search" and "vector", how many (1..100, default 10)
//   "same_tag_prefix": context selectors only: fetch only records that carry the trigger's tags
//            starting with this prefix (e.g. "session:" keeps a conversation's history to its
//            session); a trigger without such a tag fetches nothing for this key
//   "comment": why the executor listens to this (up to 1,024 bytes; kept, never interpreted)
//   "query": context selectors with fetch "search" or "vector" only (also accepted inside the fetch
//            object): a CEL expression over event, record and before (event_expression.h) whose
//            string value is the text to search with, instead of the trigger's title and context
//            strings, e.g. "record.context.question"
//   "priority": -1000..1000, default 0. Context selectors: sections of the assembled context
//            come in descending priority (then in the order given). Trigger selectors: among the
//            triggers an executor has read and not yet started, higher priority starts first.
#pragma once

#include <boost/json/value.hpp>
#include <string>
#include <vector>

#include "base/status.h"
#include "model/limits.h"
#include "model/selector.h"

namespace cairn::model {

enum class SubscriptionRole { kTrigger, kContext };
enum class FetchMethod { kEventData, kLatest, kRecent, kSearch, kVector };

// Whether `method` fetches a list of `limit` records (recent, search, vector).
inline bool FetchesMany(FetchMethod method) {
  return method == FetchMethod::kRecent || method == FetchMethod::kSearch || method == FetchMethod::kVector;
}

struct Subscription {
  Selector selector;
  SubscriptionRole role = SubscriptionRole::kTrigger;
  std::string key;
  FetchMethod fetch = FetchMethod::kEventData;
  size_t limit = 10;  // FetchesMany() methods only
  std::string same_tag_prefix;  // kContext only; empty: no correlation with the trigger's tags
  std::string comment;
  int priority = 0;
  // Trigger selectors only: a CEL expression over event, record and before (event_expression.h)
  // whose value is the run's input, e.g. {'task': record.id}; empty: the executor's default.
  std::string input;
  std::shared_ptr<const EventExpression> input_expression;  // compiled `input`
  // Context selectors with fetch kSearch or kVector only: a CEL expression over the trigger whose
  // string value is the search text; empty: the trigger's title and context strings.
  std::string query;
  std::shared_ptr<const EventExpression> query_expression;  // compiled `query`

  bool operator==(const Subscription& other) const {
    return selector == other.selector && role == other.role && key == other.key && fetch == other.fetch &&
           limit == other.limit && same_tag_prefix == other.same_tag_prefix && comment == other.comment &&
           priority == other.priority && input == other.input && query == other.query;
  }
};

inline constexpr size_t kMaxSubscriptions = 32;
inline constexpr size_t kMaxRecentLimit = 100;
// The longest explicit key: that of a schema name (Limits::max_schema_name_bytes), which is the key of
// a subscription that names none.
inline constexpr size_t kMaxSubscriptionKeyBytes = 256;

// Parses an array of subscription objects; errors name the entry under `field`
// ("subscriptions.selectors[1].fetch"). At most kMaxSubscriptions entries; keys must be unique.
Result<std::vector<Subscription>> ParseSubscriptions(const boost::json::value& selectors, const std::string& field,
                                                     const Limits& limits);

// The entry as JSON; ParseSubscriptions gives it back unchanged.
boost::json::object SubscriptionToJson(const Subscription& subscription);

// Whether the event should start a run of a subscriber with this trigger subscription: the
// selector matches and, when the selector names no event types, the event is a create or update
// (a deletion triggers only subscribers that ask for breadcrumb.deleted).
bool TriggerMatches(const Subscription& subscription, const Event& event);

// Prefixes the field of a kValidation status with `prefix` ("selectors[0]" + "types[1]" ->
// "selectors[0].types[1]"); other statuses are returned unchanged.
Status PrefixField(const Status& status, const std::string& prefix);

}  // namespace cairn::model
