#include "cel/program.h"

#include <algorithm>
#include <cstdio>

#include "cel/ast.h"
#include "cel/checker.h"
#include "cel/evaluator.h"
#include "cel/json_bridge.h"
#include "cel/lexer.h"
#include "cel/parser.h"

namespace cairn::cel {

struct Program::Compiled {
  std::string source;
  Declarations declarations;
  Limits limits;
  NodePtr root;
  int local_slots = 0;
  std::vector<std::string> referenced;
  Type result_type = Type::kDyn;
  // String, list and map constants are evaluated as borrowed views of these, so reading one
  // copies nothing and touches no reference count.
  std::vector<Value> constant_owners;
};

namespace {

void BorrowConstants(Node* n, std::vector<Value>* owners) {
  Kind k = n->constant.kind();
  if (n->kind == NodeKind::kConstant && (k == Kind::kString || k == Kind::kBytes || k == Kind::kList || k == Kind::kMap)) {
    owners->push_back(n->constant);
    n->constant = owners->back().Borrowed();
  }
  for (auto& c : n->children) BorrowConstants(c.get(), owners);
}

Status CompileError(std::string_view source, const SourceError& error, CompileDiagnostic* diagnostic) {
  std::string where = DescribePosition(source, error.offset);
  if (diagnostic) {
    diagnostic->message = error.message;
    diagnostic->offset = error.offset;
    // DescribePosition's "line L, column C", parsed back rather than computed twice.
    std::sscanf(where.c_str(), "line %d, column %d", &diagnostic->line, &diagnostic->column);
  }
  return Status::InvalidArgument(where + ": " + error.message);
}

}  // namespace

Result<Program> Program::Compile(std::string_view source, const Declarations& declarations,
                                 const CompileOptions& options, CompileDiagnostic* diagnostic) {
  const Limits& limits = options.limits;
  auto compiled = std::make_shared<Compiled>();
  compiled->source = std::string(source);
  compiled->declarations = declarations;
  compiled->limits = limits;
  SourceError error;
  compiled->root = Parse(compiled->source, limits, &error);
  if (!compiled->root) return CompileError(source, error, diagnostic);
  CheckResult checked;
  if (!Check(compiled->root.get(), compiled->declarations, limits, options.type_check, &checked, &error)) {
    return CompileError(source, error, diagnostic);
  }
  compiled->local_slots = checked.local_slots;
  compiled->result_type = checked.result_type;
  for (size_t i = 0; i < declarations.size(); ++i) {
    if (checked.referenced[i]) compiled->referenced.push_back(declarations[i].name);
  }
  // The views point into each owner's heap block, which stays put when the vector grows.
  BorrowConstants(compiled->root.get(), &compiled->constant_owners);
  return Program(std::move(compiled));
}

const std::vector<std::string>& Program::referenced_variables() const { return compiled_->referenced; }

bool Program::References(std::string_view name) const {
  const auto& r = compiled_->referenced;
  return std::find(r.begin(), r.end(), name) != r.end();
}

Type Program::result_type() const { return compiled_->result_type; }
const std::string& Program::source() const { return compiled_->source; }

Value Program::Evaluate(Activation& activation) const {
  Evaluator evaluator(compiled_->declarations, compiled_->local_slots, compiled_->limits, activation);
  return evaluator.Run(*compiled_->root);
}

Result<bool> Program::EvaluateBool(Activation& activation) const {
  Value v = Evaluate(activation);
  if (v.is_error()) return Status::InvalidArgument("evaluation failed: " + v.error_message());
  if (v.kind() != Kind::kBool) {
    return Status::InvalidArgument("condition result is " + std::string(TypeNameString(v.type_name())) + ", not bool");
  }
  return v.bool_value();
}

Result<boost::json::value> Program::EvaluateJson(Activation& activation) const {
  return ToJson(Evaluate(activation));
}

}  // namespace cairn::cel
