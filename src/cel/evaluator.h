// The tree-walking evaluator over a checked tree. One Evaluator per evaluation: it holds the
// comprehension locals, the variables already looked up, and the cost spent so far.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "cel/activation.h"
#include "cel/ast.h"
#include "cel/declarations.h"
#include "cel/limits.h"
#include "cel/value.h"

namespace cairn::cel {

class Evaluator {
 public:
  Evaluator(const Declarations& declarations, int local_slots, const Limits& limits, Activation& activation);

  // The value of `root`, or an error value. Never throws; recursion is bounded by the tree's
  // height (Limits::max_depth), work by Limits::max_cost.
  Value Run(const Node& root);

 private:
  Value Eval(const Node& n);
  Value Variable(int slot);
  Value Select(const Node& n);
  Value SelectField(const Value& operand, const std::string& name);
  Value Index(const Node& n);
  Value Call(const Node& n);
  Value MakeList(const Node& n);
  Value MakeMap(const Node& n);
  Value Logical(const Node& n);
  Value Comprehension(const Node& n);
  bool OverBudget() const { return cost_ > limits_.max_cost; }

  const Declarations& declarations_;
  const Limits& limits_;
  Activation& activation_;
  // Small programs keep their slots inline: no allocation per evaluation.
  static constexpr size_t kInline = 8;
  Value inline_locals_[kInline];
  Value inline_vars_[kInline];
  bool inline_loaded_[kInline] = {};
  std::vector<Value> heap_locals_, heap_vars_;
  std::unique_ptr<bool[]> heap_loaded_;
  Value* locals_;
  Value* vars_;
  bool* loaded_;
  uint64_t cost_ = 0;
};

}  // namespace cairn::cel
