#include "exec/context_assembler.h"

#include <algorithm>
#include <boost/json/array.hpp>

#include "base/json_util.h"
#include "base/log.h"
#include "model/breadcrumb_codec.h"
#include "model/context_rule_eval.h"
#include "search/record_text.h"

namespace cairn::exec {
namespace json = boost::json;
namespace {

// A path glob filters records after the query: read them in pages of this size, at most this many
// pages (so a glob scans at most 2,000 of the newest records that match everything else).
constexpr size_t kGlobPageSize = 200;
constexpr int kMaxGlobPages = 10;

bool HasWildcard(std::string_view segment) { return segment == "*" || segment == "**"; }

}  // namespace

model::BreadcrumbQuery QueryForSelector(const model::Selector& selector, size_t limit) {
  model::BreadcrumbQuery query;
  query.schema_name = selector.schema_name;
  query.all_tags = selector.all_tags;
  query.any_tags = selector.any_tags;
  query.context_match = selector.context_match;
  query.order = model::SortOrder::kNewestFirst;
  query.include_context = true;
  query.limit = limit;
  if (selector.path) {
    std::string literal;
    bool wildcard = false;
    size_t start = 0;
    const std::string& glob = *selector.path;
    while (start <= glob.size()) {
      size_t slash = glob.find('/', start);
      std::string_view segment(glob.data() + start, (slash == std::string::npos ? glob.size() : slash) - start);
      if (HasWildcard(segment)) {
        wildcard = true;
        break;
      }
      literal += (literal.empty() ? "" : "/") + std::string(segment);
      if (slash == std::string::npos) break;
      start = slash + 1;
    }
    if (!wildcard) {
      query.path = glob;
    } else if (!literal.empty()) {
      query.path_prefix = literal;
    }
  }
  return query;
}

std::optional<model::AccessScope> TriggerReader(const ReaderFor& reader_for, const model::Event& trigger_event) {
  if (!reader_for) return std::nullopt;
  return reader_for(trigger_event.owner_id, trigger_event.created_by);
}

Result<std::vector<model::Breadcrumb>> FetchMatching(store::Store& store, const std::string& owner_id,
                                                     const model::Selector& selector, size_t limit,
                                                     const ContextAccess& access) {
  model::BreadcrumbQuery query = QueryForSelector(selector, limit);
  query.reader = access.reader;
  query.exclude_secret = !access.allow_secret;
  bool glob = selector.path && !query.path;
  if (glob) query.limit = std::max(limit, kGlobPageSize);
  std::vector<model::Breadcrumb> out;
  for (int page = 0; page < (glob ? kMaxGlobPages : 1); ++page) {
    CAIRN_ASSIGN_OR_RETURN(store::Page found, store.List(owner_id, query));
    for (auto& crumb : found.items) {
      if (glob && (!crumb.path || !model::PathGlobMatches(*selector.path, *crumb.path))) continue;
      out.push_back(std::move(crumb));
      if (out.size() == limit) return out;
    }
    if (!found.next_cursor) break;
    query.cursor = found.next_cursor;
  }
  return out;
}

Result<std::vector<model::Breadcrumb>> FetchSimilar(const search::Searcher& searcher, const std::string& owner_id,
                                                    const model::Selector& selector, search::Mode mode,
                                                    const std::string& text, const std::string& exclude_id,
                                                    size_t limit, const ContextAccess& access) {
  search::SearchRequest request;
  request.query.reader = access.reader;
  request.query.exclude_secret = !access.allow_secret;
  request.mode = mode;
  request.query.text = search::QueryWords(text);
  if (request.query.text.empty()) return std::vector<model::Breadcrumb>();  // nothing to compare with
  // The index filters by schema, tags and path prefix; the rest of the selector (any_tags, context
  // rules, a path glob or exact path) is checked here, on a deeper list.
  model::BreadcrumbQuery query = QueryForSelector(selector, limit);
  request.query.schema_name = query.schema_name;
  request.query.all_tags = query.all_tags;
  request.query.path_prefix = query.path ? query.path : query.path_prefix;
  const bool post_filter = !query.any_tags.empty() || !query.context_match.empty() || selector.path.has_value();
  request.query.limit = std::min(store::kMaxSearchLimit, (limit + 1) * (post_filter ? 4 : 1));
  CAIRN_ASSIGN_OR_RETURN(std::vector<search::SearchHit> hits, searcher.Search(owner_id, request));
  std::vector<model::Breadcrumb> out;
  for (auto& hit : hits) {
    model::Breadcrumb& crumb = hit.breadcrumb;
    if (crumb.id == exclude_id) continue;
    if (selector.path && (!crumb.path || !model::PathGlobMatches(*selector.path, *crumb.path))) continue;
    if (!query.any_tags.empty() && std::none_of(query.any_tags.begin(), query.any_tags.end(), [&](const std::string& t) {
          return std::find(crumb.tags.begin(), crumb.tags.end(), t) != crumb.tags.end();
        })) {
      continue;
    }
    if (!model::AllRulesHold(query.context_match, crumb.context)) continue;
    out.push_back(std::move(crumb));
    if (out.size() == limit) break;
  }
  return out;
}

Result<std::string> SearchText(const model::Subscription& subscription, const model::Event& trigger_event) {
  if (!subscription.query_expression) {
    model::Breadcrumb said;  // the trigger's text: its title and context strings
    said.title = trigger_event.title;
    said.context = trigger_event.context;
    return search::RecordText(said);
  }
  CAIRN_ASSIGN_OR_RETURN(json::value text, subscription.query_expression->Evaluate(trigger_event));
  if (!text.is_string()) {
    return Status::InvalidArgument("the query `" + subscription.query + "` gave " + std::string(JsonKindName(text)) +
                                   ", not a string");
  }
  return std::string(text.as_string());
}

json::object AssembleContext(store::Store& store, const std::string& owner_id, const model::Event& trigger_event,
                             const json::object& trigger, const std::vector<model::Subscription>& subscriptions,
                             const search::Searcher* searcher, const ContextAccess& access) {
  json::object context;
  context["trigger"] = trigger;
  if (!access.allow_secret && trigger_event.sensitivity == "secret") {
    json::object withheld = trigger;
    withheld["context"] = json::object{{"withheld", "sensitivity secret: this agent's definition does not set "
                                                    "allow_secret_context"}};
    context["trigger"] = std::move(withheld);
  }
  const json::value shown_trigger = context["trigger"];
  // Sections in descending priority, then in the order the definition gives them.
  std::vector<const model::Subscription*> ordered;
  for (const auto& sub : subscriptions) {
    if (sub.role == model::SubscriptionRole::kContext) ordered.push_back(&sub);
  }
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const model::Subscription* a, const model::Subscription* b) { return a->priority > b->priority; });
  for (const model::Subscription* entry : ordered) {
    const model::Subscription& sub = *entry;
    if (sub.fetch == model::FetchMethod::kEventData) {
      if (model::Matches(sub.selector, trigger_event)) context[sub.key] = shown_trigger;
      continue;
    }
    size_t limit = sub.fetch == model::FetchMethod::kLatest ? 1 : sub.limit;
    model::Selector selector = sub.selector;
    if (!sub.same_tag_prefix.empty()) {
      for (const auto& tag : trigger_event.tags) {
        if (tag.rfind(sub.same_tag_prefix, 0) == 0) selector.all_tags.push_back(tag);
      }
      if (selector.all_tags.size() == sub.selector.all_tags.size()) continue;  // nothing to correlate with
    }
    Result<std::vector<model::Breadcrumb>> found = std::vector<model::Breadcrumb>();
    if (sub.fetch == model::FetchMethod::kSearch || sub.fetch == model::FetchMethod::kVector) {
      if (searcher == nullptr) {
        CAIRN_LOG_WARN("context fetch for key '{}': search is not available here", sub.key);
        continue;
      }
      auto text = SearchText(sub, trigger_event);
      if (!text.ok()) {
        CAIRN_LOG_WARN("context fetch for key '{}': {}", sub.key, text.status().message());
        continue;
      }
      found = FetchSimilar(*searcher, owner_id, selector,
                           sub.fetch == model::FetchMethod::kSearch ? search::Mode::kText : search::Mode::kVector,
                           *text, trigger_event.breadcrumb_id, limit, access);
    } else {
      found = FetchMatching(store, owner_id, selector, limit, access);
    }
    if (!found.ok()) {
      CAIRN_LOG_WARN("context fetch for key '{}' failed: {}", sub.key, found.status().message());
      continue;
    }
    if (sub.fetch == model::FetchMethod::kLatest) {
      if (!found->empty()) context[sub.key] = model::FullView(found->front());
    } else {
      json::array items;
      for (const auto& crumb : *found) items.push_back(model::FullView(crumb));
      context[sub.key] = std::move(items);
    }
  }
  return context;
}

}  // namespace cairn::exec
