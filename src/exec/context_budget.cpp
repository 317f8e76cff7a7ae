#include "exec/context_budget.h"

#include <algorithm>
#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>
#include <string_view>

namespace cairn::exec {
namespace json = boost::json;
namespace {

std::string_view FetchName(model::FetchMethod method) {
  switch (method) {
    case model::FetchMethod::kEventData: return "event_data";
    case model::FetchMethod::kLatest: return "latest";
    case model::FetchMethod::kRecent: return "recent";
    case model::FetchMethod::kSearch: return "search";
    case model::FetchMethod::kVector: return "vector";
  }
  return "";
}

int64_t Bytes(const json::value& value) { return static_cast<int64_t>(json::serialize(value).size()); }

int64_t TokensOf(int64_t bytes) { return (bytes + 3) / 4; }

std::string IdOf(const json::value& record) {
  const json::object* o = record.if_object();
  const json::value* id = o ? o->if_contains("id") : nullptr;
  return id && id->is_string() ? std::string(id->as_string()) : "";
}

}  // namespace

int64_t EstimateTokens(const json::value& value) { return TokensOf(Bytes(value)); }

json::array ApplyContextBudget(json::object& context, const std::vector<model::Subscription>& subscriptions,
                               int64_t budget_tokens) {
  json::array dropped;
  if (budget_tokens <= 0) return dropped;
  // The compact JSON's size, kept up to date as records go (a removed array element takes its
  // comma with it; a removed key its quotes, colon and comma: the trigger always stays).
  int64_t bytes = Bytes(context);
  if (TokensOf(bytes) <= budget_tokens) return dropped;
  std::vector<const model::Subscription*> order;
  for (const auto& sub : subscriptions) {
    if (sub.role == model::SubscriptionRole::kContext && sub.key != "trigger") order.push_back(&sub);
  }
  // Lowest priority first; among equals the one defined last first (the reverse of assembly).
  std::reverse(order.begin(), order.end());
  std::stable_sort(order.begin(), order.end(),
                   [](const model::Subscription* a, const model::Subscription* b) { return a->priority < b->priority; });
  for (const model::Subscription* sub : order) {
    if (TokensOf(bytes) <= budget_tokens) break;
    json::value* section = context.if_contains(sub->key);
    if (section == nullptr) continue;
    json::object entry{{"key", sub->key}, {"fetch", FetchName(sub->fetch)}, {"priority", sub->priority}};
    json::array ids;
    int64_t count = 0;
    auto note_id = [&](const json::value& record) {
      std::string id = IdOf(record);
      if (!id.empty() && ids.size() < kMaxDroppedIds) ids.push_back(json::string(id));
    };
    if (json::array* records = section->if_array()) {
      while (!records->empty() && TokensOf(bytes) > budget_tokens) {
        bytes -= Bytes(records->back()) + (records->size() > 1 ? 1 : 0);
        note_id(records->back());
        records->pop_back();
        ++count;
      }
      entry["kept"] = static_cast<int64_t>(records->size());
    } else {
      bytes -= Bytes(json::string(sub->key)) + 1 + Bytes(*section) + 1;
      note_id(*section);
      context.erase(sub->key);
      count = 1;
      entry["kept"] = 0;
    }
    if (count == 0) continue;
    entry["dropped"] = count;
    entry["ids"] = std::move(ids);
    dropped.push_back(std::move(entry));
  }
  return dropped;
}

}  // namespace cairn::exec
