// CompiledWorkflow: a workflow definition's CEL, compiled once when the definition is written or
// loaded — each step's `when`, `for_each` and input templates, and the output template
// (docs/workflows.md "Expressions").
//
// Expressions see `input` (the run's input), `steps` (a map: step id -> {output, status} of the
// steps that ended), and, in a for_each step's input, `item` and `index`. A template string
// that is exactly one ${{ expr }} takes the value's type; text around expressions makes a
// string (strings as they are, other values as JSON).
#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "cel/program.h"
#include "model/workflow_definition.h"

namespace cairn::exec {

// What expressions of one evaluation see.
struct WorkflowScope {
  const boost::json::value* input = nullptr;   // never null
  const boost::json::value* steps = nullptr;   // never null: an object
  const boost::json::value* item = nullptr;    // null outside for_each items
  int64_t index = 0;
};

class CompiledWorkflow {
 public:
  // Compiles every expression of `def`; kValidation naming the field and the position
  // ("context.steps[1].input.url: line 1, column 7: ...") for the first that does not compile.
  static Result<std::shared_ptr<const CompiledWorkflow>> Compile(const model::WorkflowDefinition& def);

  // Step `step` (its index in def.steps): whether it runs (true when it has no `when`).
  Result<bool> When(size_t step, const WorkflowScope& scope) const;
  // The items of a for_each step (at most kMaxItems; more is an error).
  Result<boost::json::array> Items(size_t step, const WorkflowScope& scope) const;
  // The step's input, its templates rendered (an empty object when it has none).
  Result<boost::json::value> Input(size_t step, const WorkflowScope& scope) const;
  // The run's output rendered; nullopt when the definition has none.
  Result<std::optional<boost::json::value>> Output(const WorkflowScope& scope) const;

  static constexpr size_t kMaxItems = 1000;

 private:
  struct Template;  // a JSON value with its template strings compiled
  struct Step {
    std::optional<cel::Program> when;
    std::optional<cel::Program> for_each;
    std::shared_ptr<const Template> input;
  };
  std::vector<Step> steps_;
  std::shared_ptr<const Template> output_;
};

}  // namespace cairn::exec
