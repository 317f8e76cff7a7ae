#include "cel/activation.h"

namespace cairn::cel {

Activation::Entry* Activation::Find(std::string_view name) {
  for (size_t i = 0; i < inline_count_; ++i) {
    if (inline_[i].name == name) return &inline_[i];
  }
  for (auto& e : overflow_) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

Activation::Entry& Activation::Slot(std::string_view name) {
  Entry* e = Find(name);
  if (e) {
    *e = Entry{};
  } else if (inline_count_ < kInline) {
    e = &inline_[inline_count_++];
  } else {
    e = &overflow_.emplace_back();
  }
  e->name.assign(name);
  return *e;
}

Activation& Activation::Bind(std::string_view name, const boost::json::value* json) {
  Entry& e = Slot(name);
  e.value = Value::FromJson(*json);
  e.ready = true;
  return *this;
}

Activation& Activation::BindOwned(std::string_view name, boost::json::value json) {
  Entry& e = Slot(name);
  e.extra = std::make_unique<Extra>();
  e.extra->owned = std::make_unique<boost::json::value>(std::move(json));  // a stable address to borrow from
  e.value = Value::FromJson(*e.extra->owned);
  e.ready = true;
  return *this;
}

Activation& Activation::BindValue(std::string_view name, Value value) {
  Entry& e = Slot(name);
  e.value = std::move(value);
  e.ready = true;
  return *this;
}

Activation& Activation::BindLazy(std::string_view name, Loader loader) {
  Entry& e = Slot(name);
  e.extra = std::make_unique<Extra>();
  e.extra->loader = std::move(loader);
  return *this;
}

Value Activation::Lookup(std::string_view name) {
  if (Entry* found = Find(name)) {
    Entry& e = *found;
    if (!e.ready) {
      ++loads_;
      auto loaded = e.extra->loader();
      e.extra->loader = nullptr;
      e.ready = true;
      if (!loaded.ok()) {
        e.value = Value::Error("loading variable '" + e.name + "' failed: " + loaded.status().message());
      } else {
        e.extra->owned = std::make_unique<boost::json::value>(std::move(loaded).value());
        e.value = Value::FromJson(*e.extra->owned);
      }
    }
    return e.value;
  }
  return Value::Error("no value bound for variable '" + std::string(name) + "'");
}

}  // namespace cairn::cel
