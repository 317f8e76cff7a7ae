// The bounds of CEL compilation and evaluation. User-supplied expressions run inside the server:
// every resource an expression can consume is capped here, and exceeding a cap is an error value,
// never a crash or an unbounded allocation.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cairn::cel {

struct Limits {
  // Source text longer than this is refused before lexing.
  size_t max_source_bytes = 16 * 1024;
  // Nesting depth of the syntax tree (parentheses, operands of operators, call arguments, member
  // chains). The parser and the evaluator recurse once per level, so this also bounds the stack.
  int max_depth = 128;
  // Cost budget of one evaluation: each evaluated node and each comprehension step costs one.
  uint64_t max_cost = 1'000'000;
  // Largest string or bytes value an evaluation may produce (concatenation, conversion).
  size_t max_string_bytes = 1024 * 1024;
  // Largest list or map an evaluation may produce (list concatenation, map/filter, literals).
  size_t max_collection_size = 100'000;
  // RE2 program size cap for `matches` patterns (RE2's own "cost" units).
  int max_regex_program_size = 1000;
};

}  // namespace cairn::cel
