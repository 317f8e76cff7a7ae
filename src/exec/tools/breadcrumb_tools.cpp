// breadcrumb_create, breadcrumb_get, breadcrumb_query and breadcrumb_update: the store, reached
// by tools (and through them by agents) with the same validation as the HTTP API. Writes act as
// the caller and continue the trigger's trace, so loops through them hit the depth guard.
#include <boost/json/array.hpp>

#include "exec/context_assembler.h"
#include "exec/execution_record.h"
#include "exec/tools/builtin_tools.h"
#include "model/breadcrumb_codec.h"
#include "model/selector.h"
#include "model/subscription.h"

namespace cairn::exec {
namespace json = boost::json;
namespace {

std::string IdOf(const json::value& input) { return std::string(input.as_object().at("id").as_string()); }

class CreateTool final : public Tool {
 public:
  explicit CreateTool(const BuiltinToolDeps& deps) : deps_(deps) {}
  Result<json::value> Invoke(const ToolCall& call) override {
    auto parsed = model::ParseDraft(call.input, deps_.options.limits, deps_.clock.NowMicros());
    if (!parsed.ok()) return model::PrefixField(parsed.status(), "input");
    model::BreadcrumbDraft draft = std::move(parsed).value();
    draft.trace = ChildTrace(call.trigger);
    CAIRN_ASSIGN_OR_RETURN(store::CreateResult created,
                           deps_.store.Create(model::WriteContext{call.trigger.owner_id, call.caller}, draft, ""));
    return json::value(model::FullView(created.breadcrumb));
  }

 private:
  const BuiltinToolDeps& deps_;
};

class GetTool final : public Tool {
 public:
  explicit GetTool(const BuiltinToolDeps& deps) : deps_(deps) {}
  Result<json::value> Invoke(const ToolCall& call) override {
    CAIRN_ASSIGN_OR_RETURN(model::Breadcrumb crumb, deps_.store.Get(call.trigger.owner_id, IdOf(call.input)));
    const json::value* view = call.input.as_object().if_contains("view");
    bool full = view && *view == "full";
    return json::value(full ? model::FullView(crumb) : model::ContextView(crumb));
  }

 private:
  const BuiltinToolDeps& deps_;
};

class QueryTool final : public Tool {
 public:
  explicit QueryTool(const BuiltinToolDeps& deps) : deps_(deps) {}
  Result<json::value> Invoke(const ToolCall& call) override {
    const json::object& input = call.input.as_object();
    auto selector = model::ParseSelector(input.at("selector"), deps_.options.limits);
    if (!selector.ok()) return model::PrefixField(selector.status(), "input.selector");
    size_t limit = input.contains("limit") ? input.at("limit").to_number<size_t>() : 10;
    CAIRN_ASSIGN_OR_RETURN(auto found, FetchMatching(deps_.store, call.trigger.owner_id, *selector, limit));
    json::array items;
    for (const auto& crumb : found) items.push_back(model::ContextView(crumb));
    return json::value(json::object{{"items", std::move(items)}, {"count", found.size()}});
  }

 private:
  const BuiltinToolDeps& deps_;
};

class UpdateTool final : public Tool {
 public:
  explicit UpdateTool(const BuiltinToolDeps& deps) : deps_(deps) {}
  Result<json::value> Invoke(const ToolCall& call) override {
    const json::object& input = call.input.as_object();
    auto patch = model::ParsePatch(input.at("patch"), deps_.options.limits, deps_.clock.NowMicros());
    if (!patch.ok()) return model::PrefixField(patch.status(), "input.patch");
    std::optional<int64_t> if_match;
    if (input.contains("if_match")) if_match = input.at("if_match").to_number<int64_t>();
    CAIRN_ASSIGN_OR_RETURN(model::Breadcrumb updated,
                           deps_.store.Update(model::WriteContext{call.trigger.owner_id, call.caller}, IdOf(call.input),
                                              *patch, if_match));
    return json::value(model::FullView(updated));
  }

 private:
  const BuiltinToolDeps& deps_;
};

}  // namespace

std::unique_ptr<Tool> MakeBreadcrumbTool(std::string_view name, const BuiltinToolDeps& deps) {
  if (name == "breadcrumb_create") return std::make_unique<CreateTool>(deps);
  if (name == "breadcrumb_get") return std::make_unique<GetTool>(deps);
  if (name == "breadcrumb_query") return std::make_unique<QueryTool>(deps);
  if (name == "breadcrumb_update") return std::make_unique<UpdateTool>(deps);
  return nullptr;
}

}  // namespace cairn::exec
