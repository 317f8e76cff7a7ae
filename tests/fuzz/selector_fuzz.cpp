// selector_fuzz: the input as a selector three ways — a JSON selector (ParseSelector: stored
// selectors, webhooks, the breadcrumb tools), the query of GET /events/stream?… (decoded as the
// server decodes it, then ParseSelectorQuery) and an executor's subscriptions (ParseSubscriptions)
// — each accepted one matched against fixed events and an event whose context is the input itself.
//
// Properties, besides no sanitizer report:
//   - the query form and the JSON form agree: SelectorToJson of any accepted selector parses back
//     to it (query values are bytes: they may hold what JSON text cannot, e.g. invalid UTF-8, so
//     only the JSON form is taken through text);
//   - a selector survives being stored: SelectorToJson, serialised (a stored selector's context)
//     or canonicalised (a webhook row), read back with ParseJson and ParseSelector at the default
//     limits (what the webhook deliverer uses), gives the same selector, matching the same events;
//     likewise SubscriptionToJson → ParseSubscriptions;
//   - matching is consistent: `ne` is the negation of `eq`, `exists:false` of `exists:true`; a
//     selector that matches a stored event selects stored events; a path without wildcards
//     matches only itself; TriggerMatches implies Matches;
//   - JSON numbers compare antisymmetrically and JsonEquals is reflexive on what rules hold.
#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "base/json_util.h"
#include "fuzz_check.h"
#include "known_findings.h"
#include "model/context_rule_eval.h"
#include "model/selector.h"
#include "model/subscription.h"
#include "request_target.h"

namespace {
namespace json = boost::json;
namespace model = cairn::model;
using cairn::ParseJson;

constexpr size_t kStoreReadDepth = 1000;

model::Event MakeEvent(std::string type, std::optional<std::string> schema, std::vector<std::string> tags,
                       std::optional<std::string> path, json::value context) {
  model::Event e;
  e.seq = 7;
  e.type = std::move(type);
  e.breadcrumb_id = "0190a000-0000-7000-8000-000000000000";
  e.version = 2;
  e.schema_name = std::move(schema);
  e.title = "t";
  e.tags = std::move(tags);
  e.path = std::move(path);
  e.owner_id = "default";
  e.created_by = "anonymous";
  e.context = std::move(context);
  return e;
}

// Events with a little of everything a selector can look at (as in selector_test.cpp).
const std::vector<model::Event>& FixedEvents() {
  static const std::vector<model::Event> events = [] {
    json::value context = json::parse(R"({"n":5,"f":2.5,"one":1,"onef":1.0,"ones":"1","t":true,"z":null,
        "s":"hello/world","pct":"50%_off","list":["k",1,{"x":[1,2]}],"pq":{"p":1,"q":2},
        "obj":{"a":{"b":[10,20,{"c":"deep"}]}},"big":9007199254740993,"u":18446744073709551615,
        "min":-9223372036854775808,"e":"","nested":[[[]]],"uni":"caf\u00e9"})");
    std::vector<model::Event> out;
    out.push_back(MakeEvent("breadcrumb.updated", "note.v1", {"a", "b"}, "users/u1/chats/c1", context));
    out.push_back(MakeEvent("breadcrumb.created", "task.v1", {"trip", "todo"}, "plans/2026/lisbon", context));
    out.push_back(MakeEvent("breadcrumb.deleted", std::nullopt, {}, std::nullopt, json::object()));
    // An ephemeral token: no schema, no path, its data as context (selector.h).
    out.push_back(MakeEvent(std::string(model::kAgentTokenEventType), std::nullopt, {"session:s1"}, std::nullopt,
                            json::parse(R"({"text":"Hel","index":0})")));
    return out;
  }();
  return events;
}

std::string Json(const json::value& v) { return json::serialize(v); }

// The selector after a trip through storage as `text`.
model::Selector Reread(const std::string& text) {
  auto parsed = ParseJson(text, kStoreReadDepth);
  FUZZ_CHECK(parsed.ok(), "a stored selector does not parse: " + text);
  auto selector = model::ParseSelector(*parsed, model::Limits{});
  FUZZ_CHECK(selector.ok(), "a stored selector is refused: " + text + " -> " + selector.status().message());
  return std::move(selector).value();
}

void CollectNumbers(const json::value& v, std::vector<const json::value*>& out) {
  if (out.size() >= 64) return;
  if (v.is_number()) out.push_back(&v);
  if (v.is_array()) {
    for (const auto& item : v.get_array()) CollectNumbers(item, out);
  } else if (v.is_object()) {
    for (const auto& member : v.get_object()) CollectNumbers(member.value(), out);
  }
}

void CheckRules(const model::Selector& s, const model::Event& event) {
  for (const model::ContextRule& rule : s.context_match) {
    bool holds = model::RuleHolds(rule, event.context);
    if (rule.op == model::RuleOp::kEq || rule.op == model::RuleOp::kNe) {
      model::ContextRule opposite = rule;
      opposite.op = rule.op == model::RuleOp::kEq ? model::RuleOp::kNe : model::RuleOp::kEq;
      FUZZ_CHECK(model::RuleHolds(opposite, event.context) != holds, "eq and ne agree on " + rule.path);
    }
    if (rule.op == model::RuleOp::kExists) {
      model::ContextRule opposite = rule;
      opposite.value = !rule.value.as_bool();
      FUZZ_CHECK(model::RuleHolds(opposite, event.context) != holds, "exists true and false agree on " + rule.path);
    }
    FUZZ_CHECK(model::JsonEquals(rule.value, rule.value), "a value differs from itself: " + Json(rule.value));
    if (const json::value* found = model::FindJsonPath(event.context, rule.path)) {
      std::vector<const json::value*> numbers;
      CollectNumbers(rule.value, numbers);
      CollectNumbers(*found, numbers);
      for (const json::value* a : numbers) {
        for (const json::value* b : numbers) {
          int ab = model::CompareJsonNumbers(*a, *b);
          int ba = model::CompareJsonNumbers(*b, *a);
          FUZZ_CHECK((ab > 0) == (ba < 0) && (ab == 0) == (ba == 0),
                     "number comparison is not antisymmetric: " + Json(*a) + " vs " + Json(*b));
        }
      }
    }
  }
}

void CheckMatching(const model::Selector& s, const model::Event& event) {
  bool matches = model::Matches(s, event);
  if (matches && model::IsStoredEventType(event.type)) {
    FUZZ_CHECK(model::SelectsStoredEvents(s), "matched a stored event without selecting stored events");
  }
  if (matches && s.path) {
    FUZZ_CHECK(event.path.has_value(), "a path selector matched an event without a path");
    if (s.path->find('*') == std::string::npos) FUZZ_CHECK(*s.path == *event.path, "literal glob matched another path");
  }
  CheckRules(s, event);
}

// Both forms of a selector describe the same thing: the JSON form of `s` parses back to `s`.
void CheckJsonForm(const model::Selector& s) {
  auto again = model::ParseSelector(model::SelectorToJson(s), model::Limits{});
  FUZZ_CHECK(again.ok(), "the JSON form of a selector is refused: " + again.status().message());
  FUZZ_CHECK(*again == s, "the JSON form of a selector parses to another selector");
}

// A selector from a JSON body (valid UTF-8, as ParseJson guarantees) as it is stored and read back.
void CheckStoredForm(const model::Selector& s, const std::vector<model::Event>& events) {
  json::value as_json = model::SelectorToJson(s);
  model::Selector stored = Reread(Json(as_json));
  FUZZ_CHECK(stored == s, "a stored selector reads back different: " + Json(as_json));
  model::Selector webhook = Reread(cairn::CanonicalJson(as_json));
  FUZZ_CHECK(webhook == s, "a webhook's selector reads back different: " + cairn::CanonicalJson(as_json));
  for (const model::Event& event : events) {
    FUZZ_CHECK(model::Matches(stored, event) == model::Matches(s, event), "a stored selector matches differently");
  }
}

bool AnyRuleValue(const model::Selector& s, bool (*holds)(const json::value&)) {
  return std::any_of(s.context_match.begin(), s.context_match.end(),
                     [&](const model::ContextRule& rule) { return holds(rule.value); });
}

void CheckSelector(const model::Selector& s, const std::vector<model::Event>& events) {
  FUZZ_CHECK(!AnyRuleValue(s, cairn::fuzz::HoldsNonFiniteNumber), "a rule holds a non-finite number");
  CheckJsonForm(s);
  for (const model::Event& event : events) CheckMatching(s, event);
}

void CheckSubscriptions(const json::value& input, const std::vector<model::Event>& events) {
  auto subs = model::ParseSubscriptions(input, "subscriptions.selectors", model::Limits{});
  if (!subs.ok()) return;
  json::array back;
  for (const model::Subscription& sub : *subs) {
    back.push_back(model::SubscriptionToJson(sub));
    for (const model::Event& event : events) {
      if (model::TriggerMatches(sub, event)) FUZZ_CHECK(model::Matches(sub.selector, event), "trigger without match");
    }
  }
  const bool bad_key = std::any_of(subs->begin(), subs->end(),
                                   [](const model::Subscription& sub) { return cairn::fuzz::BreaksKeyRules(sub.key); });
  FUZZ_CHECK(!bad_key, "a subscription's key breaks the key rules: " + Json(back));
  auto reread = ParseJson(Json(back), kStoreReadDepth);
  FUZZ_CHECK(reread.ok(), "stored subscriptions do not parse: " + Json(back));
  auto again = model::ParseSubscriptions(*reread, "subscriptions.selectors", model::Limits{});
  FUZZ_CHECK(again.ok(), "stored subscriptions are refused: " + Json(back) + " -> " + again.status().message());
  FUZZ_CHECK(*again == *subs, "subscriptions read back different: " + Json(back));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = cairn::fuzz::AsText(data, size);
  const model::Limits limits;
  std::vector<model::Event> events = FixedEvents();

  auto parsed = ParseJson(text, limits.max_json_depth);
  if (parsed.ok()) {
    FUZZ_CHECK(!cairn::fuzz::HoldsNonFiniteNumber(*parsed), "ParseJson accepted a non-finite number");
    events.push_back(MakeEvent("breadcrumb.created", "note.v1", {"a"}, "a/b", *parsed));
    const bool storable = !cairn::fuzz::KnownFinding(cairn::fuzz::kDoubleDrift, cairn::fuzz::HoldsDriftingDouble(*parsed));
    if (auto selector = model::ParseSelector(*parsed, limits); selector.ok()) {
      CheckSelector(*selector, events);
      if (storable) CheckStoredForm(*selector, events);
    }
    if (storable) CheckSubscriptions(*parsed, events);
  }

  cairn::server::HttpRequest request;
  if (cairn::fuzz::DecodeTarget("/events/stream?" + std::string(text), request)) {
    auto selector = model::ParseSelectorQuery(request.query, {"since"}, limits);
    if (selector.ok()) CheckSelector(*selector, events);
  }
  return 0;
}
