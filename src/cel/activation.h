// cel::Activation: the values of a program's top-level variables for evaluations.
//
// Variables are bound by name, as borrowed JSON (no copy), owned JSON, a CEL value, or a loader
// called on first use. A loader runs at most once per Activation, and only if an evaluation
// reads the variable — so a caller can skip loading history (`before`) for conditions that do
// not use it. Values read from an activation borrow from it: keep the activation (and any JSON
// bound by pointer) alive while using them. Not thread-safe: one activation per thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "base/status.h"
#include "cel/value.h"

namespace cairn::cel {

class Activation {
 public:
  using Loader = std::function<Result<boost::json::value>()>;

  Activation() = default;
  Activation(const Activation&) = delete;
  Activation& operator=(const Activation&) = delete;

  // Borrowed: `json` must outlive this activation and every value evaluated from it.
  Activation& Bind(std::string_view name, const boost::json::value* json);
  Activation& BindOwned(std::string_view name, boost::json::value json);
  Activation& BindValue(std::string_view name, Value value);
  Activation& BindLazy(std::string_view name, Loader loader);

  // The value of `name`: the bound value; for a lazy binding the loader's JSON, loaded on the
  // first call; an error value if the name is unbound or the loader failed. Rebinding a name
  // replaces the earlier binding.
  Value Lookup(std::string_view name);

  // How many times loaders have run (for tests and metrics).
  int loads() const { return loads_; }

 private:
  // Kept small (the common binding is a name and a borrowed pointer): what only lazy and owned
  // bindings need lives behind `extra`.
  struct Extra {
    Loader loader;
    std::unique_ptr<boost::json::value> owned;
  };
  struct Entry {
    std::string name;
    Value value;
    bool ready = false;
    std::unique_ptr<Extra> extra;
  };
  Entry& Slot(std::string_view name);
  Entry* Find(std::string_view name);

  // A handful of variables is the norm: they live inline, so an Activation allocates nothing
  // unless it binds more than kInline names (or owns JSON).
  static constexpr size_t kInline = 6;
  Entry inline_[kInline];
  size_t inline_count_ = 0;
  std::vector<Entry> overflow_;
  int loads_ = 0;
};

}  // namespace cairn::cel
