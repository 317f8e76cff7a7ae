// The builtin functions and operators at run time: each takes evaluated, non-error arguments and
// returns a value or an error value (overflow, division by zero, range, no such overload). The
// checker folds calls on constants through the same code, so both always agree.
#pragma once

#include <cstddef>

#include "cel/ast.h"
#include "cel/limits.h"
#include "cel/value.h"

namespace cairn::cel {

// Calls `node.builtin` (resolved by the checker) on `args`, none of them an error. `node` gives
// the call's compiled regex for a constant `matches` pattern.
Value CallBuiltin(const Node& node, const Value* args, size_t count, const Limits& limits);

// string(double): Go's shortest 'g' formatting, as CEL implementations print doubles.
std::string FormatDouble(double d);

}  // namespace cairn::cel
