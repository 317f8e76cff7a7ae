#include "model/subscription.h"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <set>

namespace cairn::model {
namespace json = boost::json;
namespace {

Result<FetchMethod> ParseFetchMethod(const std::string& field, std::string_view name) {
  if (name == "event_data") return FetchMethod::kEventData;
  if (name == "latest") return FetchMethod::kLatest;
  if (name == "recent") return FetchMethod::kRecent;
  if (name == "search") return FetchMethod::kSearch;
  if (name == "vector") return FetchMethod::kVector;
  return Status::Validation(field, "must be event_data, latest, recent, search or vector, got '" + std::string(name) + "'");
}

std::string_view FetchMethodName(FetchMethod method) {
  switch (method) {
    case FetchMethod::kEventData: return "event_data";
    case FetchMethod::kLatest: return "latest";
    case FetchMethod::kRecent: return "recent";
    case FetchMethod::kSearch: return "search";
    case FetchMethod::kVector: return "vector";
  }
  return "latest";
}

Status ParseLimit(const std::string& field, const json::value& value, size_t& out) {
  if (!value.is_int64() && !value.is_uint64()) return Status::Validation(field, "must be an integer");
  int64_t n = value.is_int64() ? value.as_int64() : static_cast<int64_t>(value.as_uint64());
  if (n < 1 || n > static_cast<int64_t>(kMaxRecentLimit)) {
    return Status::Validation(field, "must be 1 to " + std::to_string(kMaxRecentLimit));
  }
  out = static_cast<size_t>(n);
  return Status::Ok();
}

Status ParseQuery(const std::string& field, const json::value& value, Subscription& sub) {
  if (!value.is_string()) return Status::Validation(field, "must be a CEL expression (a string)");
  sub.query = std::string(value.as_string());
  CAIRN_ASSIGN_OR_RETURN(sub.query_expression, EventExpression::Compile(sub.query, field));
  return Status::Ok();
}

// Fills role/key/fetch/limit of `sub` from the subscription-only members of `entry`, moving every
// other member into `selector_json`.
Status ParseEntry(const std::string& at, const json::object& entry, Subscription& sub, json::object& selector_json) {
  bool fetch_given = false;
  std::string query_field;  // where `query` was given
  for (const auto& [name, value] : entry) {
    std::string field = at + "." + std::string(name);
    if (name == "role") {
      if (value == "trigger") {
        sub.role = SubscriptionRole::kTrigger;
      } else if (value == "context") {
        sub.role = SubscriptionRole::kContext;
      } else {
        return Status::Validation(field, "must be trigger or context");
      }
    } else if (name == "key") {
      // As long as a schema name may be: a subscription without a key takes its schema name, and
      // must read back the same with it written out.
      if (!value.is_string() || value.as_string().empty() || value.as_string().size() > kMaxSubscriptionKeyBytes) {
        return Status::Validation(field, "must be a string of 1 to " + std::to_string(kMaxSubscriptionKeyBytes) + " bytes");
      }
      sub.key = std::string(value.as_string());
      if (sub.key == "trigger") return Status::Validation(field, "'trigger' is reserved for the trigger itself");
    } else if (name == "fetch") {
      fetch_given = true;
      if (value.is_string()) {
        CAIRN_ASSIGN_OR_RETURN(sub.fetch, ParseFetchMethod(field, value.as_string()));
      } else if (value.is_object()) {
        for (const auto& [fname, fvalue] : value.as_object()) {
          std::string ffield = field + "." + std::string(fname);
          if (fname == "method") {
            if (!fvalue.is_string()) return Status::Validation(ffield, "must be a string");
            CAIRN_ASSIGN_OR_RETURN(sub.fetch, ParseFetchMethod(ffield, fvalue.as_string()));
          } else if (fname == "limit") {
            CAIRN_RETURN_IF_ERROR(ParseLimit(ffield, fvalue, sub.limit));
          } else if (fname == "query") {
            query_field = ffield;
            CAIRN_RETURN_IF_ERROR(ParseQuery(ffield, fvalue, sub));
          } else {
            return Status::Validation(ffield, "unknown field (method, limit, query)");
          }
        }
        if (!value.as_object().contains("method")) return Status::Validation(field + ".method", "is required");
      } else {
        return Status::Validation(field, "must be a method name or {method, limit}");
      }
    } else if (name == "limit") {
      CAIRN_RETURN_IF_ERROR(ParseLimit(field, value, sub.limit));
    } else if (name == "comment") {
      if (!value.is_string() || value.as_string().size() > 1024) {
        return Status::Validation(field, "must be a string of at most 1,024 bytes");
      }
      sub.comment = std::string(value.as_string());
    } else if (name == "priority") {
      if (!value.is_int64() || value.as_int64() < -1000 || value.as_int64() > 1000) {
        return Status::Validation(field, "must be an integer from -1000 to 1000");
      }
      sub.priority = static_cast<int>(value.as_int64());
    } else if (name == "input") {
      if (!value.is_string()) return Status::Validation(field, "must be a CEL expression (a string)");
      sub.input = std::string(value.as_string());
      CAIRN_ASSIGN_OR_RETURN(sub.input_expression, EventExpression::Compile(sub.input, field));
    } else if (name == "query") {
      query_field = field;
      CAIRN_RETURN_IF_ERROR(ParseQuery(field, value, sub));
    } else if (name == "same_tag_prefix") {
      if (!value.is_string() || value.as_string().empty() || value.as_string().size() > 128) {
        return Status::Validation(field, "must be a string of 1 to 128 bytes (a tag prefix such as \"session:\")");
      }
      sub.same_tag_prefix = std::string(value.as_string());
    } else {
      selector_json.emplace(name, value);
    }
  }
  if (!fetch_given && sub.role == SubscriptionRole::kContext) sub.fetch = FetchMethod::kLatest;
  if (!sub.same_tag_prefix.empty() && sub.role != SubscriptionRole::kContext) {
    return Status::Validation(at + ".same_tag_prefix", "applies to context selectors only");
  }
  if (!sub.input.empty() && sub.role != SubscriptionRole::kTrigger) {
    return Status::Validation(at + ".input", "applies to trigger selectors only");
  }
  if (!query_field.empty() && (sub.role != SubscriptionRole::kContext ||
                               (sub.fetch != FetchMethod::kSearch && sub.fetch != FetchMethod::kVector))) {
    return Status::Validation(query_field, "applies to context selectors with fetch search or vector only");
  }
  return Status::Ok();
}

}  // namespace

Status PrefixField(const Status& status, const std::string& prefix) {
  if (status.code() != StatusCode::kValidation) return status;
  std::string field = status.field().empty() ? prefix : prefix + "." + status.field();
  std::string message = status.message();
  if (!status.field().empty() && message.rfind(status.field() + ": ", 0) == 0) {
    message = message.substr(status.field().size() + 2);
  }
  return Status::Validation(field, message);
}

Result<std::vector<Subscription>> ParseSubscriptions(const json::value& selectors, const std::string& field,
                                                     const Limits& limits) {
  if (!selectors.is_array()) return Status::Validation(field, "must be an array of selectors");
  const json::array& entries = selectors.as_array();
  if (entries.size() > kMaxSubscriptions) {
    return Status::Validation(field, "at most " + std::to_string(kMaxSubscriptions) + " selectors");
  }
  std::vector<Subscription> out;
  std::set<std::string> keys;
  for (size_t i = 0; i < entries.size(); ++i) {
    std::string at = field + "[" + std::to_string(i) + "]";
    if (!entries[i].is_object()) return Status::Validation(at, "must be an object");
    Subscription sub;
    json::object selector_json;
    CAIRN_RETURN_IF_ERROR(ParseEntry(at, entries[i].as_object(), sub, selector_json));
    auto selector = ParseSelector(selector_json, limits);
    if (!selector.ok()) return PrefixField(selector.status(), at);
    sub.selector = std::move(selector).value();
    if (!sub.selector.when.empty() && sub.role != SubscriptionRole::kTrigger) {
      return Status::Validation(at + ".when", "applies to trigger selectors only (context is fetched from the store)");
    }
    if (sub.key.empty()) {
      if (!sub.selector.schema_name) {
        return Status::Validation(at + ".key", "is required when the selector has no schema_name");
      }
      sub.key = *sub.selector.schema_name;
      // The key written out must read back: "trigger" is reserved, so it must be given.
      if (sub.key == "trigger") {
        return Status::Validation(at + ".key", "is required: the schema name 'trigger' is reserved as a key");
      }
    }
    if (sub.role == SubscriptionRole::kContext && !keys.insert(sub.key).second) {
      return Status::Validation(at + ".key", "'" + sub.key + "' is used by another context selector");
    }
    out.push_back(std::move(sub));
  }
  return out;
}

json::object SubscriptionToJson(const Subscription& subscription) {
  json::object out = SelectorToJson(subscription.selector);
  out["role"] = subscription.role == SubscriptionRole::kTrigger ? "trigger" : "context";
  out["key"] = subscription.key;
  out["fetch"] = FetchMethodName(subscription.fetch);
  if (FetchesMany(subscription.fetch)) out["limit"] = subscription.limit;
  if (!subscription.same_tag_prefix.empty()) out["same_tag_prefix"] = subscription.same_tag_prefix;
  if (!subscription.comment.empty()) out["comment"] = subscription.comment;
  if (subscription.priority != 0) out["priority"] = subscription.priority;
  if (!subscription.input.empty()) out["input"] = subscription.input;
  if (!subscription.query.empty()) out["query"] = subscription.query;
  return out;
}

bool TriggerMatches(const Subscription& subscription, const Event& event) {
  if (subscription.role != SubscriptionRole::kTrigger) return false;
  if (subscription.selector.types.empty() && event.type == "breadcrumb.deleted") return false;
  return Matches(subscription.selector, event);
}

}  // namespace cairn::model
