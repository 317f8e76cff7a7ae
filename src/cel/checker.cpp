#include "cel/checker.h"

#include <re2/re2.h>

#include <algorithm>
#include <string>
#include <utility>

#include "cel/functions.h"

namespace cairn::cel {
namespace {

constexpr Type D = Type::kDyn, I = Type::kInt, U = Type::kUint, F = Type::kDouble, S = Type::kString,
               B = Type::kBytes, L = Type::kList, M = Type::kMap, T = Type::kTimestamp, R = Type::kDuration,
               O = Type::kBool;

struct Overload {
  const char* name;
  bool receiver;
  Builtin builtin;
  std::vector<Type> args;  // receiver first when receiver-style
  Type result;
};

const std::vector<Overload>& Overloads() {
  static const std::vector<Overload> table = [] {
    std::vector<Overload> t = {
        {"_+_", false, Builtin::kAdd, {I, I}, I}, {"_+_", false, Builtin::kAdd, {U, U}, U},
        {"_+_", false, Builtin::kAdd, {F, F}, F}, {"_+_", false, Builtin::kAdd, {S, S}, S},
        {"_+_", false, Builtin::kAdd, {B, B}, B}, {"_+_", false, Builtin::kAdd, {L, L}, L},
        {"_+_", false, Builtin::kAdd, {T, R}, T}, {"_+_", false, Builtin::kAdd, {R, T}, T},
        {"_+_", false, Builtin::kAdd, {R, R}, R},
        {"_-_", false, Builtin::kSubtract, {I, I}, I}, {"_-_", false, Builtin::kSubtract, {U, U}, U},
        {"_-_", false, Builtin::kSubtract, {F, F}, F}, {"_-_", false, Builtin::kSubtract, {T, T}, R},
        {"_-_", false, Builtin::kSubtract, {T, R}, T}, {"_-_", false, Builtin::kSubtract, {R, R}, R},
        {"_%_", false, Builtin::kModulo, {I, I}, I}, {"_%_", false, Builtin::kModulo, {U, U}, U},
        {"-_", false, Builtin::kNegate, {I}, I}, {"-_", false, Builtin::kNegate, {F}, F},
        {"!_", false, Builtin::kNot, {O}, O},
        {"_==_", false, Builtin::kEqual, {D, D}, O}, {"_!=_", false, Builtin::kNotEqual, {D, D}, O},
        {"@in", false, Builtin::kIn, {D, L}, O}, {"@in", false, Builtin::kIn, {D, M}, O},
        {"int", false, Builtin::kToInt, {I}, I}, {"int", false, Builtin::kToInt, {U}, I},
        {"int", false, Builtin::kToInt, {F}, I}, {"int", false, Builtin::kToInt, {S}, I},
        {"int", false, Builtin::kToInt, {T}, I},
        {"uint", false, Builtin::kToUint, {I}, U}, {"uint", false, Builtin::kToUint, {U}, U},
        {"uint", false, Builtin::kToUint, {F}, U}, {"uint", false, Builtin::kToUint, {S}, U},
        {"double", false, Builtin::kToDouble, {I}, F}, {"double", false, Builtin::kToDouble, {U}, F},
        {"double", false, Builtin::kToDouble, {F}, F}, {"double", false, Builtin::kToDouble, {S}, F},
        {"bytes", false, Builtin::kToBytes, {S}, B}, {"bytes", false, Builtin::kToBytes, {B}, B},
        {"bool", false, Builtin::kToBool, {O}, O}, {"bool", false, Builtin::kToBool, {S}, O},
        {"type", false, Builtin::kType, {D}, Type::kType}, {"dyn", false, Builtin::kDyn, {D}, D},
        {"timestamp", false, Builtin::kToTimestamp, {S}, T}, {"timestamp", false, Builtin::kToTimestamp, {T}, T},
        {"timestamp", false, Builtin::kToTimestamp, {I}, T},
        {"duration", false, Builtin::kToDuration, {S}, R}, {"duration", false, Builtin::kToDuration, {R}, R},
    };
    for (const char* op : {"_*_", "_/_"}) {
      Builtin b = op[1] == '*' ? Builtin::kMultiply : Builtin::kDivide;
      for (Type x : {I, U, F}) t.push_back({op, false, b, {x, x}, x});
    }
    for (auto [op, b] : {std::pair{"_<_", Builtin::kLess}, {"_<=_", Builtin::kLessEqual}, {"_>_", Builtin::kGreater},
                         {"_>=_", Builtin::kGreaterEqual}}) {
      for (Type x : {I, U, F}) {
        for (Type y : {I, U, F}) t.push_back({op, false, b, {x, y}, O});
      }
      for (Type x : {S, B, O, T, R}) t.push_back({op, false, b, {x, x}, O});
    }
    for (Type x : {I, U, F, S, B, O, T, R}) t.push_back({"string", false, Builtin::kToString, {x}, S});
    for (bool receiver : {false, true}) {
      for (Type x : {S, B, L, M}) t.push_back({"size", receiver, Builtin::kSize, {x}, I});
    }
    t.push_back({"matches", false, Builtin::kMatches, {S, S}, O});
    for (auto [name, b] : {std::pair{"contains", Builtin::kContains}, {"startsWith", Builtin::kStartsWith},
                           {"endsWith", Builtin::kEndsWith}, {"matches", Builtin::kMatches}}) {
      t.push_back({name, true, b, {S, S}, O});
    }
    // From the strings extension: what conditions and input mappings need for paths and names.
    t.push_back({"split", true, Builtin::kSplit, {S, S}, L});
    for (auto [name, b] : {std::pair{"lowerAscii", Builtin::kLowerAscii}, {"upperAscii", Builtin::kUpperAscii},
                           {"trim", Builtin::kTrim}}) {
      t.push_back({name, true, b, {S}, S});
    }
    for (auto [name, b] : {std::pair{"getFullYear", Builtin::kGetFullYear}, {"getMonth", Builtin::kGetMonth},
                           {"getDate", Builtin::kGetDate}, {"getDayOfMonth", Builtin::kGetDayOfMonth},
                           {"getDayOfWeek", Builtin::kGetDayOfWeek}, {"getDayOfYear", Builtin::kGetDayOfYear},
                           {"getHours", Builtin::kGetHours}, {"getMinutes", Builtin::kGetMinutes},
                           {"getSeconds", Builtin::kGetSeconds}, {"getMilliseconds", Builtin::kGetMilliseconds}}) {
      t.push_back({name, true, b, {T}, I});
      t.push_back({name, true, b, {T, S}, I});
      if (b == Builtin::kGetHours || b == Builtin::kGetMinutes || b == Builtin::kGetSeconds ||
          b == Builtin::kGetMilliseconds) {
        t.push_back({name, true, b, {R}, I});
      }
    }
    return t;
  }();
  return table;
}

bool Compatible(Type declared, Type actual) { return declared == D || actual == D || declared == actual; }

std::optional<Value> TypeConstant(std::string_view name) {
  static constexpr std::pair<std::string_view, TypeName> kTypes[] = {
      {"int", TypeName::kInt}, {"uint", TypeName::kUint}, {"double", TypeName::kDouble},
      {"bool", TypeName::kBool}, {"string", TypeName::kString}, {"bytes", TypeName::kBytes},
      {"list", TypeName::kList}, {"map", TypeName::kMap}, {"null_type", TypeName::kNull},
      {"type", TypeName::kType}, {"google.protobuf.Timestamp", TypeName::kTimestamp},
      {"google.protobuf.Duration", TypeName::kDuration}};
  for (auto [n, t] : kTypes) {
    if (n == name) return Value::Type(t);
  }
  return std::nullopt;
}

Type TypeOfConstant(const Value& v) {
  switch (v.kind()) {
    case Kind::kNull: return Type::kNull;
    case Kind::kBool: return O;
    case Kind::kInt: return I;
    case Kind::kUint: return U;
    case Kind::kDouble: return F;
    case Kind::kString: return S;
    case Kind::kBytes: return B;
    case Kind::kList: return L;
    case Kind::kMap: return M;
    case Kind::kTimestamp: return T;
    case Kind::kDuration: return R;
    case Kind::kType: return Type::kType;
    case Kind::kError: return D;
  }
  return D;
}

class Checker {
 public:
  Checker(const Declarations& declarations, const Limits& limits, bool type_check, CheckResult* result,
          SourceError* error)
      : declarations_(declarations), limits_(limits), type_check_(type_check), result_(result), error_(error) {
    result_->referenced.assign(declarations.size(), false);
  }

  bool Run(Node* root) {
    auto type = Visit(root);
    if (!type) return false;
    result_->result_type = *type;
    return true;
  }

 private:
  std::optional<Type> Fail(const Node& node, std::string message) {
    error_->message = std::move(message);
    error_->offset = node.offset;
    return std::nullopt;
  }

  // The dotted name of a select chain over identifiers ("a.b.c"), or empty.
  static std::string QualifiedName(const Node& n) {
    if (n.kind == NodeKind::kIdent) return n.name;
    if (n.kind != NodeKind::kSelect) return "";
    std::string prefix = QualifiedName(*n.children[0]);
    return prefix.empty() ? "" : prefix + "." + n.name;
  }
  static const Node& Root(const Node& n) { return n.kind == NodeKind::kIdent ? n : Root(*n.children[0]); }
  static const std::string& RootName(const Node& n) { return Root(n).name; }
  bool IsBound(std::string_view name) const {
    for (const auto& [local, slot] : scopes_) {
      if (local == name) return true;
    }
    for (const auto& v : declarations_) {
      if (v.name == name) return true;
    }
    return false;
  }

  std::optional<Type> Visit(Node* n) {
    auto type = VisitTyped(n);
    // Unchecked: every operand is dyn to its parent, so no operand type is ever refused.
    if (type && !type_check_) return D;
    return type;
  }

  std::optional<Type> VisitTyped(Node* n) {
    switch (n->kind) {
      case NodeKind::kConstant: return TypeOfConstant(n->constant);
      case NodeKind::kIdent: return Ident(n);
      case NodeKind::kSelect: {
        std::string qualified = QualifiedName(*n);
        if (!qualified.empty() && !IsBound(RootName(*n))) {
          if (auto type = TypeConstant(qualified)) {
            n->kind = NodeKind::kConstant;
            n->constant = *type;
            n->children.clear();
            return Type::kType;
          }
          return Fail(Root(*n), "undeclared reference to '" + qualified +
                              "' (qualified names, packages and message types are not supported)");
        }
        auto operand = Visit(n->children[0].get());
        if (!operand) return std::nullopt;
        if (*operand != D && *operand != M) {
          return Fail(*n, "cannot select field '" + n->name + "' from a value of type " + std::string(TypeString(*operand)));
        }
        return D;
      }
      case NodeKind::kHas: {
        auto operand = Visit(n->children[0].get());
        if (!operand) return std::nullopt;
        if (*operand != D && *operand != M) return Fail(*n, "has() needs a map or a dyn operand");
        return O;
      }
      case NodeKind::kIndex: {
        auto operand = Visit(n->children[0].get());
        if (!operand || !Visit(n->children[1].get())) return std::nullopt;
        if (*operand != D && *operand != M && *operand != L) {
          return Fail(*n, "cannot index a value of type " + std::string(TypeString(*operand)));
        }
        return D;
      }
      case NodeKind::kList: {
        bool all_constant = true;
        for (auto& c : n->children) {
          if (!Visit(c.get())) return std::nullopt;
          all_constant = all_constant && c->kind == NodeKind::kConstant;
        }
        if (n->children.size() > limits_.max_collection_size) return Fail(*n, "list literal too large");
        if (all_constant) {
          ValueList items;
          for (auto& c : n->children) items.push_back(c->constant);
          n->kind = NodeKind::kConstant;
          n->constant = Value::List(std::move(items));
          n->children.clear();
        }
        return L;
      }
      case NodeKind::kMap: {
        for (size_t i = 0; i < n->children.size(); i += 2) {
          auto key = Visit(n->children[i].get());
          if (!key || !Visit(n->children[i + 1].get())) return std::nullopt;
          if (*key != D && *key != S && *key != I && *key != U && *key != O) {
            return Fail(*n->children[i], "map keys must be int, uint, bool or string, not " + std::string(TypeString(*key)));
          }
        }
        return M;
      }
      case NodeKind::kAnd: case NodeKind::kOr: {
        for (auto& c : n->children) {
          auto t = Visit(c.get());
          if (!t) return std::nullopt;
          if (*t != D && *t != O) return Fail(*c, "logical operator operand is " + std::string(TypeString(*t)) + ", not bool");
        }
        return O;
      }
      case NodeKind::kConditional: {
        auto cond = Visit(n->children[0].get());
        if (!cond) return std::nullopt;
        if (*cond != D && *cond != O) return Fail(*n->children[0], "conditional needs a bool condition");
        auto yes = Visit(n->children[1].get());
        if (!yes) return std::nullopt;
        auto no = Visit(n->children[2].get());
        if (!no) return std::nullopt;
        return *yes == *no ? *yes : D;
      }
      case NodeKind::kComprehension: return Comprehension(n);
      case NodeKind::kCall: return Call(n);
    }
    return D;
  }

  std::optional<Type> Ident(Node* n) {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      if (it->first == n->name) {
        n->local = true;
        n->slot = it->second;
        return D;
      }
    }
    for (size_t i = 0; i < declarations_.size(); ++i) {
      if (declarations_[i].name == n->name) {
        n->slot = int(i);
        result_->referenced[i] = true;
        return declarations_[i].type;
      }
    }
    if (auto type = TypeConstant(n->name)) {
      n->kind = NodeKind::kConstant;
      n->constant = *type;
      return Type::kType;
    }
    return Fail(*n, "undeclared reference to '" + n->name + "'");
  }

  std::optional<Type> Comprehension(Node* n) {
    auto range = Visit(n->children[0].get());
    if (!range) return std::nullopt;
    if (*range != D && *range != L && *range != M) {
      return Fail(*n, n->name + "() needs a list or a map, not " + std::string(TypeString(*range)));
    }
    n->slot = result_->local_slots++;
    scopes_.emplace_back(n->iter_var, n->slot);
    std::vector<Type> types;
    for (size_t i = 1; i < n->children.size(); ++i) {
      auto t = Visit(n->children[i].get());
      if (!t) return std::nullopt;
      types.push_back(*t);
    }
    scopes_.pop_back();
    bool predicate = n->macro == Macro::kAll || n->macro == Macro::kExists || n->macro == Macro::kExistsOne ||
                     n->macro == Macro::kFilter || n->macro == Macro::kMapFilter;
    if (predicate && types[0] != D && types[0] != O) return Fail(*n->children[1], n->name + "() needs a bool predicate");
    if (n->macro == Macro::kAll || n->macro == Macro::kExists || n->macro == Macro::kExistsOne) return O;
    return L;
  }

  std::optional<Type> Call(Node* n) {
    std::vector<Type> args;
    bool all_constant = true;
    for (auto& c : n->children) {
      auto t = Visit(c.get());
      if (!t) return std::nullopt;
      args.push_back(*t);
      all_constant = all_constant && c->kind == NodeKind::kConstant;
    }
    bool known_name = false;
    std::optional<Type> result;
    Builtin builtin = Builtin::kNone;
    for (const auto& o : Overloads()) {
      if (n->name != o.name || o.receiver != n->receiver_style) continue;
      known_name = true;
      if (o.args.size() != args.size()) continue;
      bool match = true;
      for (size_t i = 0; i < args.size() && match; ++i) match = Compatible(o.args[i], args[i]);
      if (!match) continue;
      builtin = o.builtin;
      result = !result || *result == o.result ? o.result : D;
    }
    std::string display = n->name == "@in" ? "in" : n->name;
    if (!known_name) {
      return Fail(*n, "unknown function '" + display + "'" + (n->receiver_style ? " (as a method)" : ""));
    }
    if (builtin == Builtin::kNone) {
      std::string types;
      for (size_t i = 0; i < args.size(); ++i) types += (i ? ", " : "") + std::string(TypeString(args[i]));
      return Fail(*n, "no matching overload for '" + display + "' applied to (" + types + ")");
    }
    n->builtin = builtin;
    if (builtin == Builtin::kMatches && n->children[1]->kind == NodeKind::kConstant &&
        n->children[1]->constant.kind() == Kind::kString) {
      if (!CompileRegex(n)) return std::nullopt;
    }
    if (all_constant && builtin != Builtin::kMatches) {
      std::vector<Value> values;
      for (auto& c : n->children) values.push_back(c->constant);
      Value folded = CallBuiltin(*n, values.data(), values.size(), limits_);
      if (!folded.is_error()) {
        n->kind = NodeKind::kConstant;
        n->constant = std::move(folded);
        n->children.clear();
      }
    }
    return result;
  }

  bool CompileRegex(Node* n) {
    RE2::Options options;
    options.set_log_errors(false);
    options.set_max_mem(8 << 20);
    auto re = std::make_shared<const RE2>(n->children[1]->constant.text(), options);
    if (!re->ok()) {
      Fail(*n->children[1], "invalid regular expression: " + re->error());
      return false;
    }
    if (re->ProgramSize() > limits_.max_regex_program_size) {
      Fail(*n->children[1], "regular expression too complex (program size " + std::to_string(re->ProgramSize()) + ")");
      return false;
    }
    n->regex = std::move(re);
    return true;
  }

  const Declarations& declarations_;
  const Limits& limits_;
  bool type_check_;
  CheckResult* result_;
  SourceError* error_;
  std::vector<std::pair<std::string, int>> scopes_;
};

}  // namespace

std::string_view TypeString(Type type) {
  switch (type) {
    case Type::kDyn: return "dyn";
    case Type::kNull: return "null_type";
    case Type::kBool: return "bool";
    case Type::kInt: return "int";
    case Type::kUint: return "uint";
    case Type::kDouble: return "double";
    case Type::kString: return "string";
    case Type::kBytes: return "bytes";
    case Type::kList: return "list";
    case Type::kMap: return "map";
    case Type::kTimestamp: return "google.protobuf.Timestamp";
    case Type::kDuration: return "google.protobuf.Duration";
    case Type::kType: return "type";
  }
  return "?";
}

bool Check(Node* root, const Declarations& declarations, const Limits& limits, bool type_check, CheckResult* result,
           SourceError* error) {
  return Checker(declarations, limits, type_check, result, error).Run(root);
}

}  // namespace cairn::cel
