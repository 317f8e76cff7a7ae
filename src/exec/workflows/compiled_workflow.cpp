#include "exec/workflows/compiled_workflow.h"

#include <boost/json/serialize.hpp>

namespace cairn::exec {
namespace json = boost::json;

namespace {

const cel::Declarations& StepVariables() {
  static const cel::Declarations vars = {{"input"}, {"steps"}, {"item"}, {"index"}};
  return vars;
}

Result<cel::Program> CompileAt(const std::string& source, const std::string& field) {
  auto program = cel::Program::Compile(source, StepVariables());
  if (!program.ok()) return Status::Validation(field, program.status().message());
  return std::move(program).value();
}

// The variables of one evaluation, borrowed from the scope.
class ScopeActivation {
 public:
  explicit ScopeActivation(const WorkflowScope& scope) : index_(scope.index) {
    activation_.Bind("input", scope.input);
    activation_.Bind("steps", scope.steps);
    activation_.Bind("item", scope.item ? scope.item : &null_);
    activation_.Bind("index", &index_);
  }
  cel::Activation& get() { return activation_; }

 private:
  json::value null_;
  json::value index_;
  cel::Activation activation_;
};

}  // namespace

struct CompiledWorkflow::Template {
  enum class Kind { kLiteral, kString, kArray, kObject } kind = Kind::kLiteral;
  json::value literal;                                  // kLiteral
  std::vector<std::pair<bool, std::string>> texts;      // kString: (is expression, literal text)
  std::vector<cel::Program> programs;                   // kString: one per expression part, in order
  std::vector<std::shared_ptr<const Template>> items;   // kArray
  std::vector<std::pair<std::string, std::shared_ptr<const Template>>> members;  // kObject

  static Result<std::shared_ptr<const Template>> Build(const json::value& value, const std::string& field) {
    auto node = std::make_shared<Template>();
    if (value.is_string()) {
      CAIRN_ASSIGN_OR_RETURN(auto parts, model::SplitTemplate(value.as_string(), field));
      bool any = false;
      for (const auto& part : parts) any = any || part.expression;
      if (!any) {
        node->literal = value;
        return std::shared_ptr<const Template>(node);
      }
      node->kind = Kind::kString;
      for (const auto& part : parts) {
        node->texts.emplace_back(part.expression, part.expression ? "" : part.text);
        if (part.expression) {
          CAIRN_ASSIGN_OR_RETURN(cel::Program program, CompileAt(part.text, field));
          node->programs.push_back(std::move(program));
        }
      }
    } else if (value.is_array()) {
      node->kind = Kind::kArray;
      const json::array& items = value.as_array();
      for (size_t i = 0; i < items.size(); ++i) {
        CAIRN_ASSIGN_OR_RETURN(auto item, Build(items[i], field + "[" + std::to_string(i) + "]"));
        node->items.push_back(std::move(item));
      }
    } else if (value.is_object()) {
      node->kind = Kind::kObject;
      for (const auto& [key, member] : value.as_object()) {
        CAIRN_ASSIGN_OR_RETURN(auto built, Build(member, field + "." + std::string(key)));
        node->members.emplace_back(std::string(key), std::move(built));
      }
    } else {
      node->literal = value;
    }
    return std::shared_ptr<const Template>(node);
  }

  Result<json::value> Render(ScopeActivation& scope) const {
    switch (kind) {
      case Kind::kLiteral:
        return literal;
      case Kind::kString: {
        // Exactly one expression: its value, with its type.
        if (texts.size() == 1) return programs.front().EvaluateJson(scope.get());
        std::string out;
        size_t next = 0;
        for (const auto& [expression, text] : texts) {
          if (!expression) {
            out += text;
            continue;
          }
          CAIRN_ASSIGN_OR_RETURN(json::value value, programs[next++].EvaluateJson(scope.get()));
          out += value.is_string() ? std::string(value.as_string()) : json::serialize(value);
        }
        return json::value(std::move(out));
      }
      case Kind::kArray: {
        json::array out;
        for (const auto& item : items) {
          CAIRN_ASSIGN_OR_RETURN(json::value rendered, item->Render(scope));
          out.push_back(std::move(rendered));
        }
        return json::value(std::move(out));
      }
      case Kind::kObject: {
        json::object out;
        for (const auto& [key, member] : members) {
          CAIRN_ASSIGN_OR_RETURN(json::value rendered, member->Render(scope));
          out[key] = std::move(rendered);
        }
        return json::value(std::move(out));
      }
    }
    return literal;
  }
};

Result<std::shared_ptr<const CompiledWorkflow>> CompiledWorkflow::Compile(const model::WorkflowDefinition& def) {
  auto compiled = std::make_shared<CompiledWorkflow>();
  for (const model::WorkflowStep& step : def.steps) {
    // Named by where the step was written (def.steps is ordered by needs).
    std::string field = "context.steps[" + std::to_string(step.position) + "]";
    Step out;
    if (!step.when.empty()) {
      CAIRN_ASSIGN_OR_RETURN(cel::Program when, CompileAt(step.when, field + ".when"));
      out.when = std::move(when);
    }
    if (!step.for_each.empty()) {
      CAIRN_ASSIGN_OR_RETURN(cel::Program items, CompileAt(step.for_each, field + ".for_each"));
      out.for_each = std::move(items);
    }
    CAIRN_ASSIGN_OR_RETURN(out.input, Template::Build(step.input.is_null() ? json::value(json::object()) : step.input,
                                                      field + ".input"));
    compiled->steps_.push_back(std::move(out));
  }
  if (!def.output.is_null()) {
    CAIRN_ASSIGN_OR_RETURN(compiled->output_, Template::Build(def.output, "context.output"));
  }
  return std::shared_ptr<const CompiledWorkflow>(std::move(compiled));
}

Result<bool> CompiledWorkflow::When(size_t step, const WorkflowScope& scope) const {
  if (!steps_.at(step).when) return true;
  ScopeActivation activation(scope);
  return steps_[step].when->EvaluateBool(activation.get());
}

Result<json::array> CompiledWorkflow::Items(size_t step, const WorkflowScope& scope) const {
  ScopeActivation activation(scope);
  CAIRN_ASSIGN_OR_RETURN(json::value items, steps_.at(step).for_each->EvaluateJson(activation.get()));
  if (!items.is_array()) return Status::InvalidArgument("for_each must give a list, not " + json::serialize(items));
  if (items.as_array().size() > kMaxItems) {
    return Status::InvalidArgument("for_each gave " + std::to_string(items.as_array().size()) + " items; at most " +
                                   std::to_string(kMaxItems) + " run");
  }
  return std::move(items.as_array());
}

Result<json::value> CompiledWorkflow::Input(size_t step, const WorkflowScope& scope) const {
  ScopeActivation activation(scope);
  return steps_.at(step).input->Render(activation);
}

Result<std::optional<json::value>> CompiledWorkflow::Output(const WorkflowScope& scope) const {
  if (!output_) return std::optional<json::value>();
  ScopeActivation activation(scope);
  CAIRN_ASSIGN_OR_RETURN(json::value out, output_->Render(activation));
  return std::optional<json::value>(std::move(out));
}

}  // namespace cairn::exec
