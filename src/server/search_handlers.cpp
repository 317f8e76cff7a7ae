#include "server/search_handlers.h"

#include <boost/json/serialize.hpp>
#include <cmath>

#include "base/json_util.h"
#include "model/breadcrumb_codec.h"
#include "server/request_support.h"

namespace cairn::server {
namespace json = boost::json;
namespace {

constexpr size_t kDefaultSearchLimit = 20;

// `qvec`: a JSON array of 1 to kMaxQueryVectorDimension finite numbers.
Result<std::vector<float>> ParseQueryVector(const std::string& text) {
  // Numbers only: 24 bytes each is plenty for any float written out in full.
  if (text.size() > kMaxQueryVectorDimension * 24) return BadParameter("qvec", "is too long");
  auto parsed = ParseJson(text, 2);
  if (!parsed.ok() || !parsed->is_array()) return BadParameter("qvec", "must be a JSON array of numbers");
  const json::array& items = parsed->get_array();
  if (items.empty() || items.size() > kMaxQueryVectorDimension) {
    return BadParameter("qvec", "must hold 1 to " + std::to_string(kMaxQueryVectorDimension) + " numbers");
  }
  std::vector<float> vector;
  vector.reserve(items.size());
  for (const auto& item : items) {
    if (!item.is_number()) return BadParameter("qvec", "must be a JSON array of numbers");
    double value = item.to_number<double>();
    if (!std::isfinite(static_cast<float>(value))) return BadParameter("qvec", "holds a number out of range");
    vector.push_back(static_cast<float>(value));
  }
  return vector;
}

}  // namespace

Result<search::SearchRequest> ParseSearchRequest(const HttpRequest& request, const model::Limits& limits,
                                                 search::Mode default_mode, bool* include_context) {
  CAIRN_ASSIGN_OR_RETURN(QueryReader q, QueryReader::Open(request.query,
                                                          {"q", "mode", "schema_name", "path", "limit",
                                                           "include_context", "qvec"},
                                                          {"tag"}));
  search::SearchRequest out;
  CAIRN_ASSIGN_OR_RETURN(std::optional<std::string> mode, q.OneOf("mode", {"text", "vector", "hybrid"}));
  out.mode = mode ? *search::ParseMode(*mode) : default_mode;
  CAIRN_ASSIGN_OR_RETURN(std::optional<std::string> text, q.Text("q"));
  if (const std::string* qvec = q.Find("qvec")) {
    CAIRN_ASSIGN_OR_RETURN(out.vector, ParseQueryVector(*qvec));
  }
  if (!text && !(out.vector && out.mode == search::Mode::kVector)) {
    return BadParameter("q", out.mode == search::Mode::kVector ? "is required (or give qvec)" : "is required");
  }
  out.query.text = text.value_or("");
  if (const std::string* name = q.Find("schema_name")) {
    CAIRN_RETURN_IF_ERROR(AsParameterError(model::ValidateSchemaName("schema_name", *name, limits)));
    out.query.schema_name = *name;
  }
  for (const std::string& tag : q.All("tag")) {
    CAIRN_RETURN_IF_ERROR(AsParameterError(model::ValidateTag("tag", tag, limits)));
    out.query.all_tags.push_back(tag);
  }
  if (out.query.all_tags.size() > limits.max_tags) {
    return BadParameter("tag", "too many tags (at most " + std::to_string(limits.max_tags) + ")");
  }
  if (const std::string* path = q.Find("path")) {
    CAIRN_RETURN_IF_ERROR(AsParameterError(model::ValidatePath("path", *path, limits)));
    out.query.path_prefix = *path;
  }
  CAIRN_ASSIGN_OR_RETURN(out.query.limit, q.Limit(kDefaultSearchLimit, store::kMaxSearchLimit));
  CAIRN_ASSIGN_OR_RETURN(std::optional<bool> with_context, q.Bool("include_context"));
  *include_context = with_context.value_or(false);
  out.query.snippets = true;
  return out;
}

void AddSearchRoutes(Router& router, const search::Searcher& searcher, const search::EmbeddingModels* models,
                     const model::Limits& limits) {
  router.Add("GET", "/search/status", Dispatch::kWorker, [&searcher, models](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    json::array list;
    json::value serving = nullptr;
    if (models) {
      for (const search::ModelStatus& m : models->Statuses()) {
        const search::EmbeddingStatus& s = m.embedding;
        if (m.serving) serving = json::value(s.model);
        list.emplace_back(json::object{
            {"model", s.model},
            {"dimension", s.dimension},
            {"serving", m.serving},
            {"cursor", s.cursor},
            {"last_event_seq", s.last_event_seq},
            {"backlog", s.backlog},
            {"filling", s.filling},
            {"vectors", s.vectors},
            {"failed_batches", s.failed_batches},
            {"last_error", s.last_error.empty() ? json::value(nullptr) : json::value(s.last_error)},
            {"index", json::object{{"kind", m.index.kind},
                                   {"indexes", m.index.indexes},
                                   {"indexed_vectors", m.index.indexed_vectors},
                                   {"builds", m.index.builds},
                                   {"loads", m.index.loads},
                                   {"exact_fallbacks", m.index.exact_fallbacks}}}});
      }
    }
    json::object out{{"default_mode", search::ModeName(searcher.default_mode())},
                     {"text", true},
                     {"vector", models != nullptr},
                     {"serving", std::move(serving)},
                     {"models", std::move(list)}};
    return HttpResponse::Json(200, json::serialize(out));
  });

  router.Add("GET", "/breadcrumbs/search", Dispatch::kWorker,
             [&searcher, limits](const HttpRequest& req) -> Result<HttpResponse> {
               CAIRN_ASSIGN_OR_RETURN(model::WriteContext ctx, WriteContextFrom(req));
               bool include_context = false;
               CAIRN_ASSIGN_OR_RETURN(search::SearchRequest request,
                                      ParseSearchRequest(req, limits, searcher.default_mode(), &include_context));
               request.query.reader = ctx.access;
               CAIRN_ASSIGN_OR_RETURN(std::vector<search::SearchHit> hits, searcher.Search(ctx.owner_id, request));
               json::array items;
               items.reserve(hits.size());
               for (const auto& hit : hits) {
                 json::object item = model::ListItemView(hit.breadcrumb, include_context);
                 item["score"] = hit.score;
                 if (!hit.snippet.empty()) item["snippet"] = hit.snippet;
                 items.emplace_back(std::move(item));
               }
               json::object out{{"items", std::move(items)}, {"mode", search::ModeName(request.mode)}};
               return HttpResponse::Json(200, json::serialize(out));
             });
}

}  // namespace cairn::server
