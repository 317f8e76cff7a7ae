// Context assembly (DESIGN.md §5): when a trigger matches, what the executor subscribed to is
// fetched from the store, on the server side, with the same selector engine.
//
// The assembled context is {"trigger": <trigger record>, <key>: <fetched>}, keys in descending
// subscription priority (then definition order), where, per context subscription:
//   event_data -> the trigger record, when the trigger matches this subscription's selector;
//   latest     -> the newest matching record (an object);
//   recent     -> the newest `limit` matching records (an array, newest first, possibly empty);
//   search     -> the `limit` matching records most similar to the trigger by full text (BM25);
//   vector     -> the same by vector similarity (an array, most similar first, never the trigger
//                 itself). The trigger's text is its title and the string values of its context
//                 (its first distinct words, as a search query is bounded); without a `searcher`
//                 (or with vector search off, for `vector`) the key is absent and a warning logged.
// With same_tag_prefix, latest/recent fetch only records carrying the trigger's tags with that
// prefix (a trigger without one leaves the key absent).
// A key with nothing to fetch (no match for latest, event_data not matching) is absent. A failed
// fetch leaves its key absent and is logged; assembly never fails. Trigger subscriptions add
// nothing beyond "trigger". Records are full views (model::FullView) of the owner's records.
#pragma once

#include <boost/json/object.hpp>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/event.h"
#include "model/query.h"
#include "model/subscription.h"
#include "search/searcher.h"
#include "store/store.h"

namespace cairn::exec {

// The record-access scope (model/access.h) of principal `principal` of `tenant`: a run reads what
// the principal that triggered it may read. nullopt (or no function: --auth=none): everything.
using ReaderFor =
    std::function<std::optional<model::AccessScope>(const std::string& tenant, const std::string& principal)>;

// What a run's context may hold (docs/security.md "Record access").
struct ContextAccess {
  // Whose read rights limit the fetched records; absent: every record of the owner.
  std::optional<model::AccessScope> reader;
  // False for an agent whose definition does not set allow_secret_context: `secret` records are
  // never fetched, and a secret trigger's context is replaced by a note that it was withheld.
  bool allow_secret = true;
};

// The scope of the principal that wrote `trigger_event` (its actor), through `reader_for`.
std::optional<model::AccessScope> TriggerReader(const ReaderFor& reader_for, const model::Event& trigger_event);

boost::json::object AssembleContext(store::Store& store, const std::string& owner_id, const model::Event& trigger_event,
                                    const boost::json::object& trigger,
                                    const std::vector<model::Subscription>& subscriptions,
                                    const search::Searcher* searcher = nullptr, const ContextAccess& access = {});

// The text a fetch: search|vector subscription searches with: its `query` expression's value for
// the trigger (kInvalidArgument when it fails or is not a string), else the trigger's title and
// context strings.
Result<std::string> SearchText(const model::Subscription& subscription, const model::Event& trigger_event);

// Up to `limit` records matching `selector` most similar to `text` by `mode` (text or vector),
// best first, `exclude_id` left out.
Result<std::vector<model::Breadcrumb>> FetchSimilar(const search::Searcher& searcher, const std::string& owner_id,
                                                    const model::Selector& selector, search::Mode mode,
                                                    const std::string& text, const std::string& exclude_id,
                                                    size_t limit, const ContextAccess& access = {});

// The store query that finds a selector's records, newest first: the schema, tags and context
// rules as they are; a path glob becomes its literal leading segments as a prefix (the glob
// itself is checked on each record by the caller). Event types do not apply to records.
model::BreadcrumbQuery QueryForSelector(const model::Selector& selector, size_t limit);

// Up to `limit` records matching `selector` (path glob included), newest first (by creation). A
// glob is checked on at most the 2,000 newest records that match the rest of the selector.
Result<std::vector<model::Breadcrumb>> FetchMatching(store::Store& store, const std::string& owner_id,
                                                     const model::Selector& selector, size_t limit,
                                                     const ContextAccess& access = {});

}  // namespace cairn::exec
