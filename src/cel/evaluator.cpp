#include "cel/evaluator.h"

#include <cmath>
#include <cstdint>
#include <string>

#include "cel/functions.h"

namespace cairn::cel {
namespace {

// Error values are built out of line: the hot paths then carry no string temporaries, which keeps
// their frames small and the common case fast.
[[gnu::cold, gnu::noinline]] Value BudgetExceeded() { return Value::Error("evaluation cost budget exceeded"); }
[[gnu::cold, gnu::noinline]] Value NoSuchKey(const std::string& name) { return Value::Error("no such key: '" + name + "'"); }
[[gnu::cold, gnu::noinline]] Value CannotSelect(const std::string& name, const Value& operand) {
  return Value::Error("cannot select field '" + name + "' from a value of type " +
                      std::string(TypeNameString(operand.type_name())));
}
[[gnu::cold, gnu::noinline]] Value NotABool(const char* what) {
  return Value::Error(std::string("no matching overload: ") + what + " on a non-bool");
}

}  // namespace

Evaluator::Evaluator(const Declarations& declarations, int local_slots, const Limits& limits, Activation& activation)
    : declarations_(declarations), limits_(limits), activation_(activation) {
  if (size_t(local_slots) <= kInline) {
    locals_ = inline_locals_;
  } else {
    heap_locals_.resize(size_t(local_slots));
    locals_ = heap_locals_.data();
  }
  if (declarations.size() <= kInline) {
    vars_ = inline_vars_;
    loaded_ = inline_loaded_;
  } else {
    heap_vars_.resize(declarations.size());
    heap_loaded_ = std::make_unique<bool[]>(declarations.size());
    vars_ = heap_vars_.data();
    loaded_ = heap_loaded_.get();
  }
}

Value Evaluator::Run(const Node& root) {
  Value result = Eval(root);
  // Exhaustion can be absorbed by && / || on the way up; it must still fail the evaluation.
  if (OverBudget()) return BudgetExceeded();
  return result;
}

Value Evaluator::Variable(int slot) {
  if (!loaded_[slot]) {
    vars_[slot] = activation_.Lookup(declarations_[size_t(slot)].name);
    loaded_[slot] = true;
  }
  return vars_[slot];
}

Value Evaluator::Eval(const Node& n) {
  if (++cost_ > limits_.max_cost) [[unlikely]] return BudgetExceeded();
  switch (n.kind) {
    case NodeKind::kConstant: return n.constant;
    case NodeKind::kIdent: return n.local ? locals_[n.slot] : Variable(n.slot);
    case NodeKind::kSelect: return Select(n);
    case NodeKind::kHas: {
      Value operand = Eval(*n.children[0]);
      if (operand.is_error()) return operand;
      if (operand.kind() != Kind::kMap) {
        return Value::Error("has() on a value of type " + std::string(TypeNameString(operand.type_name())));
      }
      return Value::Bool(operand.MapFind(Value::StringView(n.name)).has_value());
    }
    case NodeKind::kIndex: return Index(n);
    case NodeKind::kCall: return Call(n);
    case NodeKind::kList: return MakeList(n);
    case NodeKind::kMap: return MakeMap(n);
    case NodeKind::kAnd: case NodeKind::kOr: return Logical(n);
    case NodeKind::kConditional: {
      Value cond = Eval(*n.children[0]);
      if (cond.is_error()) return cond;
      if (cond.kind() != Kind::kBool) return NotABool("conditional");
      return Eval(*n.children[cond.bool_value() ? 1 : 2]);
    }
    case NodeKind::kComprehension: return Comprehension(n);
  }
  return Value::Error("unknown node");
}

// A chain of selections (a.b.c) is walked in a loop rather than by recursion; over borrowed JSON
// only its last step makes a Value.
Value Evaluator::Select(const Node& n) {
  constexpr size_t kMaxChain = 16;  // longer chains recurse once per 16 steps
  const Node* chain[kMaxChain];
  size_t depth = 0;
  const Node* root = &n;
  while (root->kind == NodeKind::kSelect && depth < kMaxChain) {
    chain[depth++] = root;
    root = root->children[0].get();
  }
  cost_ += depth - 1;  // Eval charged this node; charge the others walked here
  Value current = Eval(*root);
  const boost::json::value* json = nullptr;  // when set, the current value is this JSON
  while (depth > 0) {
    const Node& step = *chain[--depth];
    const boost::json::object* object = json ? json->if_object() : current.json_object();
    if (object) {
      json = object->if_contains(step.name);
      if (!json) return NoSuchKey(step.name);
      continue;
    }
    if (json) {
      current = Value::FromJson(*json);
      json = nullptr;
    }
    current = SelectField(current, step.name);
    if (current.is_error()) return current;
  }
  return json ? Value::FromJson(*json) : current;
}

Value Evaluator::SelectField(const Value& operand, const std::string& name) {
  if (operand.is_error()) return operand;
  if (operand.kind() != Kind::kMap) return CannotSelect(name, operand);
  auto found = operand.MapFind(Value::StringView(name));
  if (!found) return NoSuchKey(name);
  return std::move(*found);
}

Value Evaluator::Index(const Node& n) {
  Value operand = Eval(*n.children[0]);
  if (operand.is_error()) return operand;
  Value index = Eval(*n.children[1]);
  if (index.is_error()) return index;
  if (operand.kind() == Kind::kList) {
    int64_t i;
    if (index.kind() == Kind::kInt) {
      i = index.int_value();
    } else if (index.kind() == Kind::kUint && index.uint_value() <= uint64_t(INT64_MAX)) {
      i = int64_t(index.uint_value());
    } else if (index.kind() == Kind::kDouble && index.double_value() == std::trunc(index.double_value()) &&
               std::abs(index.double_value()) < 9e18) {
      i = int64_t(index.double_value());
    } else {
      return Value::Error("invalid list index of type " + std::string(TypeNameString(index.type_name())));
    }
    if (i < 0 || uint64_t(i) >= operand.size()) return Value::Error("index " + std::to_string(i) + " out of range");
    return operand.ListAt(size_t(i));
  }
  if (operand.kind() == Kind::kMap) {
    auto found = operand.MapFind(index);
    if (!found) return Value::Error("no such key: " + DebugString(index));
    return *found;
  }
  return Value::Error("cannot index a value of type " + std::string(TypeNameString(operand.type_name())));
}

Value Evaluator::Call(const Node& n) {
  if (n.builtin == Builtin::kEqual || n.builtin == Builtin::kNotEqual) {  // the most common call
    Value left = Eval(*n.children[0]);
    if (left.is_error()) return left;
    Value right = Eval(*n.children[1]);
    if (right.is_error()) return right;
    return Value::Bool(ValuesEqual(left, right) == (n.builtin == Builtin::kEqual));
  }
  Value args[3];
  size_t count = n.children.size();  // at most 3: the checker only resolves builtins of up to 3
  for (size_t i = 0; i < count; ++i) {
    args[i] = Eval(*n.children[i]);
    if (args[i].is_error()) return args[i];
  }
  Value result = CallBuiltin(n, args, count, limits_);
  // Charge work proportional to what the call produced: concatenations copy their operands, so a
  // chain of them must not get a large result for the price of a few nodes.
  Kind k = result.kind();
  if (k == Kind::kList || k == Kind::kMap) {
    cost_ += result.size();
  } else if (k == Kind::kString || k == Kind::kBytes) {
    cost_ += result.text().size() / 64;
  }
  return result;
}

Value Evaluator::MakeList(const Node& n) {
  ValueList items;
  items.reserve(n.children.size());
  for (const auto& c : n.children) {
    Value v = Eval(*c);
    if (v.is_error()) return v;
    items.push_back(std::move(v));
  }
  return Value::List(std::move(items));
}

Value Evaluator::MakeMap(const Node& n) {
  MapEntries entries;
  entries.reserve(n.children.size() / 2);
  Value probe = Value::Map({});
  for (size_t i = 0; i < n.children.size(); i += 2) {
    Value key = Eval(*n.children[i]);
    if (key.is_error()) return key;
    Kind k = key.kind();
    if (k != Kind::kString && k != Kind::kInt && k != Kind::kUint && k != Kind::kBool) {
      return Value::Error("unsupported map key type " + std::string(TypeNameString(key.type_name())));
    }
    Value value = Eval(*n.children[i + 1]);
    if (value.is_error()) return value;
    for (const auto& [existing, unused] : entries) {
      if (ValuesEqual(existing, key)) return Value::Error("duplicate map key " + DebugString(key));
    }
    entries.emplace_back(std::move(key), std::move(value));
  }
  return Value::Map(std::move(entries));
}

// && and || are commutative with respect to errors: a decisive operand (false for &&, true for
// ||) wins wherever it is; otherwise the first error (or non-bool) is the result.
Value Evaluator::Logical(const Node& n) {
  bool decisive = n.kind == NodeKind::kOr;
  Value left = Eval(*n.children[0]);
  if (left.kind() == Kind::kBool && left.bool_value() == decisive) return left;
  Value right = Eval(*n.children[1]);
  if (right.kind() == Kind::kBool && right.bool_value() == decisive) return right;
  if (left.kind() == Kind::kBool && right.kind() == Kind::kBool) return left;
  if (left.is_error()) return left;
  if (right.is_error()) return right;
  return NotABool("logical operator");
}

Value Evaluator::Comprehension(const Node& n) {
  Value range = Eval(*n.children[0]);
  if (range.is_error()) return range;
  bool is_map = range.kind() == Kind::kMap;
  if (!is_map && range.kind() != Kind::kList) {
    return Value::Error(n.name + "() over a value of type " + std::string(TypeNameString(range.type_name())));
  }
  size_t size = range.size();
  Value& var = locals_[n.slot];
  Value first_error;
  bool has_error = false;
  int64_t count = 0;
  ValueList out;
  for (size_t i = 0; i < size; ++i) {
    if (++cost_ > limits_.max_cost) return BudgetExceeded();
    var = is_map ? range.MapKeyAt(i) : range.ListAt(i);
    if (n.macro == Macro::kMap) {
      Value v = Eval(*n.children[1]);
      if (v.is_error()) return v;
      out.push_back(std::move(v));
      if (out.size() > limits_.max_collection_size) return Value::Error("list exceeds the size limit");
      continue;
    }
    Value pred = Eval(*n.children[1]);
    if (pred.kind() != Kind::kBool) {
      if (n.macro == Macro::kAll || n.macro == Macro::kExists) {
        // Like && / ||: a later decisive predicate still wins over an earlier error.
        if (!has_error) first_error = pred.is_error() ? pred : Value::Error(n.name + "() predicate is not a bool");
        has_error = true;
        continue;
      }
      return pred.is_error() ? pred : Value::Error(n.name + "() predicate is not a bool");
    }
    bool p = pred.bool_value();
    switch (n.macro) {
      case Macro::kAll: if (!p) return Value::Bool(false); break;
      case Macro::kExists: if (p) return Value::Bool(true); break;
      case Macro::kExistsOne: count += p; break;
      case Macro::kFilter: if (p) out.push_back(var); break;
      case Macro::kMapFilter:
        if (p) {
          Value v = Eval(*n.children[2]);
          if (v.is_error()) return v;
          out.push_back(std::move(v));
        }
        break;
      default: break;
    }
  }
  switch (n.macro) {
    case Macro::kAll: return has_error ? first_error : Value::Bool(true);
    case Macro::kExists: return has_error ? first_error : Value::Bool(false);
    case Macro::kExistsOne: return Value::Bool(count == 1);
    default: return Value::List(std::move(out));
  }
}

}  // namespace cairn::cel
