// The syntax tree of a CEL expression. The parser builds it (macros already expanded into
// comprehension nodes); the checker then resolves it in place — variables to slots, functions to
// builtin ids, constant patterns to compiled regexes — so the evaluator only walks it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cel/value.h"

namespace re2 {
class RE2;
}

namespace cairn::cel {

enum class NodeKind : uint8_t {
  kConstant,       // constant
  kIdent,          // name; resolved: slot (variable or comprehension local)
  kSelect,         // children[0].name
  kHas,            // has(children[0].name): presence test
  kIndex,          // children[0][children[1]]
  kCall,           // name(children...) or children[0].name(children[1..]) when receiver_style
  kList,           // [children...]
  kMap,            // {children[0]: children[1], ...}
  kAnd,            // children[0] && children[1]
  kOr,             // children[0] || children[1]
  kConditional,    // children[0] ? children[1] : children[2]
  kComprehension,  // macro over children[0] with iter_var (see Macro)
};

enum class Macro : uint8_t {
  kNone,
  kAll,        // range.all(x, children[1])
  kExists,     // range.exists(x, children[1])
  kExistsOne,  // range.exists_one(x, children[1])
  kMap,        // range.map(x, children[1])
  kMapFilter,  // range.map(x, children[1] /* filter */, children[2] /* transform */)
  kFilter,     // range.filter(x, children[1])
};

// Builtin functions, resolved by the checker from name, arity and receiver style.
enum class Builtin : uint8_t {
  kNone,
  kAdd, kSubtract, kMultiply, kDivide, kModulo, kNegate, kNot,
  kEqual, kNotEqual, kLess, kLessEqual, kGreater, kGreaterEqual, kIn,
  kSize, kContains, kStartsWith, kEndsWith, kMatches,
  kSplit, kLowerAscii, kUpperAscii, kTrim,
  kToInt, kToUint, kToDouble, kToString, kToBytes, kToBool, kType, kDyn,
  kToTimestamp, kToDuration,
  kGetFullYear, kGetMonth, kGetDate, kGetDayOfMonth, kGetDayOfWeek, kGetDayOfYear,
  kGetHours, kGetMinutes, kGetSeconds, kGetMilliseconds,
};

struct Node {
  NodeKind kind = NodeKind::kConstant;
  uint32_t offset = 0;  // byte offset of the node's operator or first token in the source
  Value constant;
  std::string name;
  std::vector<std::unique_ptr<Node>> children;
  bool receiver_style = false;
  Macro macro = Macro::kNone;
  std::string iter_var;

  // Set by the checker.
  int slot = -1;  // kIdent: variable slot, or local slot when local; kComprehension: its local
  bool local = false;
  Builtin builtin = Builtin::kNone;
  std::shared_ptr<const re2::RE2> regex;  // kMatches with a constant pattern
};

using NodePtr = std::unique_ptr<Node>;

}  // namespace cairn::cel
