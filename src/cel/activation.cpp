#include "cel/activation.h"

namespace cairn::cel {

Activation::Entry& Activation::Slot(std::string name) {
  for (auto& e : entries_) {
    if (e.name == name) {
      e = Entry{};
      e.name = std::move(name);
      return e;
    }
  }
  entries_.push_back(Entry{});
  entries_.back().name = std::move(name);
  return entries_.back();
}

Activation& Activation::Bind(std::string name, const boost::json::value* json) {
  Entry& e = Slot(std::move(name));
  e.value = Value::FromJson(*json);
  e.ready = true;
  return *this;
}

Activation& Activation::BindOwned(std::string name, boost::json::value json) {
  Entry& e = Slot(std::move(name));
  e.owned = std::make_unique<boost::json::value>(std::move(json));  // a stable address to borrow from
  e.value = Value::FromJson(*e.owned);
  e.ready = true;
  return *this;
}

Activation& Activation::BindValue(std::string name, Value value) {
  Entry& e = Slot(std::move(name));
  e.value = std::move(value);
  e.ready = true;
  return *this;
}

Activation& Activation::BindLazy(std::string name, Loader loader) {
  Entry& e = Slot(std::move(name));
  e.loader = std::move(loader);
  return *this;
}

Value Activation::Lookup(std::string_view name) {
  for (auto& e : entries_) {
    if (e.name != name) continue;
    if (!e.ready) {
      ++loads_;
      auto loaded = e.loader();
      e.loader = nullptr;
      e.ready = true;
      if (!loaded.ok()) {
        e.value = Value::Error("loading variable '" + e.name + "' failed: " + loaded.status().message());
      } else {
        e.owned = std::make_unique<boost::json::value>(std::move(loaded).value());
        e.value = Value::FromJson(*e.owned);
      }
    }
    return e.value;
  }
  return Value::Error("no value bound for variable '" + std::string(name) + "'");
}

}  // namespace cairn::cel
