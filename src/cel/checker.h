// The CEL checker: resolves a parsed tree in place and refuses what cannot work.
//
// - identifiers: comprehension locals, then declared variables (to slots), then type names
//   (int, string, google.protobuf.Timestamp, ...); anything else is "undeclared reference";
// - calls: to a Builtin by name, arity and receiver style; unknown functions are refused, and so
//   are calls whose statically known argument types match no overload (dyn matches anything);
// - constant folding of calls and lists whose operands are constants (a call that would fail is
//   left in place, so its error surfaces at evaluation as the language requires);
// - `matches` with a constant pattern: the RE2 is compiled once here, its size bounded.
#pragma once

#include <vector>

#include "cel/ast.h"
#include "cel/declarations.h"
#include "cel/lexer.h"
#include "cel/limits.h"

namespace cairn::cel {

struct CheckResult {
  int local_slots = 0;            // comprehension variables: slots 0..local_slots-1
  std::vector<bool> referenced;   // per declared variable: does the program read it?
  Type result_type = Type::kDyn;
};

// Checks and resolves `root`; on failure returns false and fills `error`. Without `type_check`
// only names are resolved (unknown variables and functions are still refused) and operand types
// are left to evaluation.
bool Check(Node* root, const Declarations& declarations, const Limits& limits, bool type_check, CheckResult* result,
           SourceError* error);

std::string_view TypeString(Type type);

}  // namespace cairn::cel
