// cel::Program: a CEL expression compiled once, evaluated many times.
//
//   cel::Declarations vars = {{"record"}, {"before"}};
//   CAIRN_ASSIGN_OR_RETURN(cel::Program program,
//       cel::Program::Compile("record.status == 'done' && before.status != 'done'", vars));
//   cel::Activation activation;
//   activation.Bind("record", &record_json);                     // borrowed, not copied
//   activation.BindLazy("before", [&] { return LoadBefore(); });  // only if read
//   Result<bool> matched = program.EvaluateBool(activation);
//
// Compile refuses, with a message naming the line and column: syntax errors, unknown variables
// and functions, statically impossible calls, and what this implementation does not support
// (protobuf messages, enums, optional syntax, qualified names). Evaluation never throws: a
// failure (overflow, division by zero, missing key, exhausted budget...) is an error value.
//
// A Program is immutable once compiled: evaluate it from any number of threads at once, each
// with its own Activation. Copies share the compiled tree.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "base/status.h"
#include "cel/activation.h"
#include "cel/declarations.h"
#include "cel/limits.h"
#include "cel/value.h"

namespace cairn::cel {

struct CompileOptions {
  Limits limits;
  // Refuse calls and operators whose statically known operand types cannot work (`1 + 'a'`,
  // `'x' && true`). Off, such expressions compile and fail (or not) at evaluation.
  bool type_check = true;
};

// Where and why a compilation failed (also in the Status message).
struct CompileDiagnostic {
  std::string message;
  size_t offset = 0;  // byte offset into the source
  int line = 0;       // 1-based
  int column = 0;     // 1-based, in code points
};

class Program {
 public:
  // Compiles `source` for the variables in `declarations`. On failure: kInvalidArgument with
  // "line L, column C: message", and `diagnostic` (if given) filled.
  static Result<Program> Compile(std::string_view source, const Declarations& declarations,
                                 const CompileOptions& options = {}, CompileDiagnostic* diagnostic = nullptr);

  // The declared variables this program reads, in declaration order. A variable not listed here
  // is never looked up, so its loader never runs.
  const std::vector<std::string>& referenced_variables() const;
  bool References(std::string_view name) const;
  // The statically known type of the result (kDyn when it depends on the input).
  Type result_type() const;
  const std::string& source() const;

  // The value of the expression, or an error value. The result may borrow from this program and
  // from `activation` (and the JSON bound to it): keep them alive while using it, or convert it
  // with ToJson.
  Value Evaluate(Activation& activation) const;
  // For conditions: the bool result; kInvalidArgument if evaluation failed or the result is not
  // a bool (a caller counts either as "no match").
  Result<bool> EvaluateBool(Activation& activation) const;
  // The result as JSON (see json_bridge.h): kInvalidArgument if evaluation failed.
  Result<boost::json::value> EvaluateJson(Activation& activation) const;

 private:
  struct Compiled;
  explicit Program(std::shared_ptr<const Compiled> compiled) : compiled_(std::move(compiled)) {}
  std::shared_ptr<const Compiled> compiled_;
};

}  // namespace cairn::cel
