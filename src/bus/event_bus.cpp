#include "bus/event_bus.h"

#include <algorithm>

namespace cairn::bus {

InterestKeys SelectorKeys(const model::Selector& selector) {
  InterestKeys keys;
  if (selector.schema_name) {
    keys.every_event = false;
    auto equal = std::find_if(selector.context_match.begin(), selector.context_match.end(),
                              [](const model::ContextRule& rule) {
                                return rule.op == model::RuleOp::kEq && rule.value.is_string() && rule.path.size() > 2 &&
                                       rule.path.rfind("$.", 0) == 0 &&
                                       rule.path.find_first_of(".[", 2) == std::string::npos;
                              });
    if (equal == selector.context_match.end()) {
      keys.schemas.push_back(*selector.schema_name);
    } else {
      keys.fields.push_back({*selector.schema_name, equal->path.substr(2), std::string(equal->value.as_string())});
    }
  } else if (!selector.any_tags.empty()) {
    keys.every_event = false;
    keys.tags = selector.any_tags;
  } else if (!selector.all_tags.empty()) {
    keys.every_event = false;
    keys.tags.push_back(selector.all_tags.front());
  }
  return keys;
}

}  // namespace cairn::bus
