// search: the built-in tool over /breadcrumbs/search (docs/search.md) — what an agent calls to
// find records by words or by similarity in its tenant, with the same bounds and errors.
#include <boost/json/array.hpp>

#include "exec/tools/builtin_tools.h"
#include "model/breadcrumb_codec.h"
#include "model/subscription.h"
#include "search/searcher.h"

namespace cairn::exec {
namespace json = boost::json;
namespace {

class SearchTool final : public Tool {
 public:
  explicit SearchTool(const search::Searcher* searcher) : searcher_(searcher) {}

  // The input is already checked against the built-in's schema (builtin_tools.cpp).
  Result<json::value> Invoke(const ToolCall& call) override {
    if (searcher_ == nullptr) return Status::Unavailable("search is not available on this server");
    const json::object& input = call.input.as_object();
    search::SearchRequest request;
    request.mode = searcher_->default_mode();
    if (const json::value* mode = input.if_contains("mode")) {
      request.mode = *search::ParseMode(std::string(mode->as_string()));  // the schema's enum
    }
    request.query.text = std::string(input.at("q").as_string());
    if (const json::value* schema = input.if_contains("schema_name")) request.query.schema_name = std::string(schema->as_string());
    if (const json::value* tags = input.if_contains("tags")) {
      for (const auto& tag : tags->as_array()) request.query.all_tags.emplace_back(tag.as_string());
    }
    if (const json::value* path = input.if_contains("path")) request.query.path_prefix = std::string(path->as_string());
    request.query.limit = input.contains("limit") ? input.at("limit").to_number<size_t>() : 10;
    request.query.snippets = true;
    auto hits = searcher_->Search(call.trigger.owner_id, request);
    if (!hits.ok()) {
      const Status& status = hits.status();
      // A field of the request is a field of the tool's input ("mode", "q", "qvec" → input.q).
      return status.field().empty() ? status : model::PrefixField(status, "input");
    }
    json::array items;
    for (const auto& hit : *hits) {
      json::object item = model::ContextView(hit.breadcrumb);
      item["score"] = hit.score;
      if (!hit.snippet.empty()) item["snippet"] = hit.snippet;
      items.push_back(std::move(item));
    }
    return json::value(json::object{{"items", std::move(items)}, {"mode", search::ModeName(request.mode)}});
  }

 private:
  const search::Searcher* searcher_;
};

}  // namespace

std::unique_ptr<Tool> MakeSearchTool(const BuiltinToolDeps& deps) {
  return std::make_unique<SearchTool>(deps.options.searcher);
}

}  // namespace cairn::exec
