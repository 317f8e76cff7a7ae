#include "server/selector_handlers.h"

#include <boost/json/serialize.hpp>

#include "base/time_format.h"
#include "model/breadcrumb_codec.h"
#include "model/reserved.h"
#include "server/request_support.h"
#include "store/record_pages.h"

namespace cairn::server {
namespace json = boost::json;
namespace {

constexpr size_t kMaxNameBytes = 200;

bool IsStoredSelector(const model::Breadcrumb& crumb) { return crumb.schema_name == model::kStoredSelectorSchema; }

json::object SelectorView(const model::Breadcrumb& crumb) {
  const json::object* context = crumb.context.if_object();
  return json::object{{"id", crumb.id},
                      {"name", context && context->contains("name") ? context->at("name") : json::value(crumb.title)},
                      {"selector", context && context->contains("selector") ? context->at("selector") : json::value()},
                      {"version", crumb.version},
                      {"created_by", crumb.created_by},
                      {"created_at", FormatRfc3339Micros(crumb.created_at)}};
}

// {name, selector}: both required; nothing else.
Result<model::BreadcrumbDraft> ParseSelectorBody(const json::value& body, const model::Limits& limits) {
  if (!body.is_object()) return Status::Validation("body", "must be a JSON object {name, selector}");
  for (const auto& kv : body.get_object()) {
    if (kv.key() != "name" && kv.key() != "selector") return Status::Validation(std::string(kv.key()), "unknown field");
  }
  const json::value* name = body.get_object().if_contains("name");
  if (!name || !name->is_string() || name->get_string().empty() || name->get_string().size() > kMaxNameBytes) {
    return Status::Validation("name", "is required: a string of 1 to " + std::to_string(kMaxNameBytes) + " bytes");
  }
  const json::value* selector_json = body.get_object().if_contains("selector");
  if (!selector_json) return Status::Validation("selector", "is required");
  auto selector = model::ParseSelector(*selector_json, limits);
  if (!selector.ok()) {
    const Status& error = selector.status();
    return Status::Validation("selector." + error.field(), error.message());
  }
  model::BreadcrumbDraft draft;
  draft.schema_name = model::kStoredSelectorSchema;
  draft.title = std::string(name->get_string());
  draft.tags = {"subscription:selector"};
  draft.context = json::object{{"name", *name}, {"selector", model::SelectorToJson(*selector)}};
  return draft;
}

}  // namespace

Result<model::Selector> LoadStoredSelector(store::Store& store, const std::string& owner_id, const std::string& id,
                                           const model::Limits& limits) {
  auto crumb = store.Get(owner_id, id);
  if (!crumb.ok() || !IsStoredSelector(*crumb)) return Status::NotFound("stored selector " + id + " not found");
  const json::object* context = crumb->context.if_object();
  const json::value* selector = context ? context->if_contains("selector") : nullptr;
  if (!selector) return Status::Validation("selector_id", "stored selector " + id + " has no selector");
  return model::ParseSelector(*selector, limits);
}

void AddSelectorRoutes(Router& router, store::Store& store, const model::Limits& limits) {
  router.Add("POST", "/subscriptions/selectors", Dispatch::kWorker, [&store, limits](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(model::WriteContext ctx, WriteContextFrom(req));
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    CAIRN_ASSIGN_OR_RETURN(json::value body, ParseJsonBody(req, limits));
    CAIRN_ASSIGN_OR_RETURN(model::BreadcrumbDraft draft, ParseSelectorBody(body, limits));
    CAIRN_ASSIGN_OR_RETURN(store::CreateResult created, store.Create(ctx, draft, ""));
    HttpResponse response = HttpResponse::Json(201, json::serialize(SelectorView(created.breadcrumb)));
    response.headers.emplace_back("Location", "/subscriptions/selectors/" + created.breadcrumb.id);
    return response;
  });

  router.Add("GET", "/subscriptions/selectors", Dispatch::kWorker, [&store](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(model::WriteContext ctx, WriteContextFrom(req));
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    model::BreadcrumbQuery query;
    query.schema_name = model::kStoredSelectorSchema;
    query.order = model::SortOrder::kOldestFirst;
    query.limit = 1000;
    query.include_context = true;
    query.reader = ctx.access;
    json::array items;
    CAIRN_RETURN_IF_ERROR(store::ForEachRecord(store, ctx.owner_id, query,
                                               [&](const model::Breadcrumb& crumb) { items.emplace_back(SelectorView(crumb)); }));
    return HttpResponse::Json(200, json::serialize(json::object{{"items", std::move(items)}}));
  });

  router.Add("GET", "/subscriptions/selectors/{id}", Dispatch::kInline, [&store](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(model::WriteContext ctx, WriteContextFrom(req));
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    auto crumb = store.Get(ctx.owner_id, req.path_params[0]);
    if (!crumb.ok() || !IsStoredSelector(*crumb) || !CheckReadable(ctx, *crumb).ok()) {
      return Status::NotFound("stored selector " + req.path_params[0] + " not found");
    }
    return HttpResponse::Json(200, json::serialize(SelectorView(*crumb)));
  });

  router.Add("DELETE", "/subscriptions/selectors/{id}", Dispatch::kWorker, [&store](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(model::WriteContext ctx, WriteContextFrom(req));
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    auto crumb = store.Get(ctx.owner_id, req.path_params[0]);
    if (!crumb.ok() || !IsStoredSelector(*crumb)) {
      return Status::NotFound("stored selector " + req.path_params[0] + " not found");
    }
    CAIRN_RETURN_IF_ERROR(store.Delete(ctx, req.path_params[0], crumb->version));
    HttpResponse response;
    response.status = 204;
    response.content_type.clear();
    return response;
  });
}

}  // namespace cairn::server
