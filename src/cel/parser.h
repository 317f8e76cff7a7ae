// The CEL parser: tokens to a syntax tree, with macros (has, all, exists, exists_one, map,
// filter) expanded. Unsupported syntax (message construction, optional selection) is refused here
// with its position. Nesting deeper than Limits::max_depth is refused before it can exhaust the
// stack, both while parsing and in the finished tree (which the evaluator walks recursively).
#pragma once

#include <string_view>

#include "cel/ast.h"
#include "cel/lexer.h"
#include "cel/limits.h"

namespace cairn::cel {

// Parses `source`; on failure returns null and fills `error`.
NodePtr Parse(std::string_view source, const Limits& limits, SourceError* error);

}  // namespace cairn::cel
