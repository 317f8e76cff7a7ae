#include "bus/event_bus.h"

namespace cairn::bus {

InterestKeys SelectorKeys(const model::Selector& selector) {
  InterestKeys keys;
  if (selector.schema_name) {
    keys.every_event = false;
    keys.schemas.push_back(*selector.schema_name);
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
