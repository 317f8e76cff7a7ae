#include "server/breadcrumb_handlers.h"

#include <boost/json/serialize.hpp>

#include "model/breadcrumb_codec.h"
#include "server/request_support.h"

namespace cairn::server {
namespace json = boost::json;
namespace {

HttpResponse RecordResponse(int status, const model::Breadcrumb& crumb, std::string body) {
  HttpResponse response = HttpResponse::Json(status, std::move(body));
  response.headers.emplace_back("ETag", "\"" + std::to_string(crumb.version) + "\"");
  return response;
}

// A create as the request asks for it.
struct CreateRequest {
  model::WriteContext ctx;
  model::BreadcrumbDraft draft;
  std::string idempotency_key;
};

Result<CreateRequest> ParseCreate(const HttpRequest& req, const Clock& clock, const model::Limits& limits) {
  CreateRequest create;
  CAIRN_ASSIGN_OR_RETURN(create.ctx, WriteContextFrom(req));
  CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
  CAIRN_ASSIGN_OR_RETURN(create.idempotency_key, ParseIdempotencyKey(req));
  CAIRN_ASSIGN_OR_RETURN(json::value body, ParseJsonBody(req, limits));
  CAIRN_ASSIGN_OR_RETURN(create.draft, model::ParseDraft(body, limits, clock.NowMicros()));
  return create;
}

HttpResponse CreatedResponse(const store::CreateResult& created) {
  HttpResponse response = RecordResponse(created.replayed ? 200 : 201, created.breadcrumb,
                                         model::SerializeFullView(created.breadcrumb));
  response.headers.emplace_back("Location", "/breadcrumbs/" + created.breadcrumb.id);
  if (created.replayed) response.headers.emplace_back("Idempotent-Replayed", "true");
  return response;
}

}  // namespace

void AddBreadcrumbRoutes(Router& router, store::Store& store, const Clock& clock, const model::Limits& limits) {
  // Creates do not hold a thread while they wait for their group commit: the write is queued and
  // the writer's commit hands the result to the connection, which answers.
  router.AddAsync("POST", "/breadcrumbs", [&store, &clock, limits](const HttpRequest& req, Reply reply) {
    auto create = ParseCreate(req, clock, limits);
    if (!create.ok()) return reply([status = create.status()]() -> Result<HttpResponse> { return status; });
    store.CreateAsync(create->ctx, std::move(create->draft), std::move(create->idempotency_key),
                      [reply](Result<store::CreateResult> result) {
                        reply([result = std::move(result)]() -> Result<HttpResponse> {
                          if (!result.ok()) return result.status();
                          return CreatedResponse(*result);
                        });
                      });
  });

  router.Add("GET", "/breadcrumbs", Dispatch::kWorker, [&store, limits](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(model::WriteContext ctx, WriteContextFrom(req));
    CAIRN_ASSIGN_OR_RETURN(model::BreadcrumbQuery query, ParseListQuery(req, limits));
    query.reader = ctx.access;
    CAIRN_ASSIGN_OR_RETURN(store::Page page, store.List(ctx.owner_id, query));
    json::array items;
    items.reserve(page.items.size());
    for (const auto& crumb : page.items) items.emplace_back(model::ListItemView(crumb, query.include_context));
    json::object out{{"items", std::move(items)},
                     {"next_cursor", page.next_cursor ? json::value(*page.next_cursor) : json::value(nullptr)}};
    return HttpResponse::Json(200, json::serialize(out));
  });

  // Point reads share the cached record and serialise it directly: the hottest path of the API.
  router.Add("GET", "/breadcrumbs/{id}", Dispatch::kInline, [&store](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(model::WriteContext ctx, WriteContextFrom(req));
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    CAIRN_ASSIGN_OR_RETURN(auto crumb, store.GetShared(ctx.owner_id, req.path_params[0]));
    CAIRN_RETURN_IF_ERROR(CheckReadable(ctx, *crumb));
    return RecordResponse(200, *crumb, model::SerializeContextView(*crumb));
  });

  router.Add("GET", "/breadcrumbs/{id}/full", Dispatch::kInline, [&store](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(model::WriteContext ctx, WriteContextFrom(req));
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    CAIRN_ASSIGN_OR_RETURN(auto crumb, store.GetShared(ctx.owner_id, req.path_params[0]));
    CAIRN_RETURN_IF_ERROR(CheckReadable(ctx, *crumb));
    return RecordResponse(200, *crumb, model::SerializeFullView(*crumb));
  });

  router.Add("GET", "/breadcrumbs/{id}/history", Dispatch::kInline, [&store](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(model::WriteContext ctx, WriteContextFrom(req));
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    if (ctx.access) {  // the history of a record is as readable as the record
      CAIRN_ASSIGN_OR_RETURN(auto crumb, store.GetShared(ctx.owner_id, req.path_params[0]));
      CAIRN_RETURN_IF_ERROR(CheckReadable(ctx, *crumb));
    }
    CAIRN_ASSIGN_OR_RETURN(auto versions, store.History(ctx.owner_id, req.path_params[0]));
    json::array items;
    for (const auto& version : versions) items.emplace_back(model::VersionView(version));
    return HttpResponse::Json(200, json::serialize(json::object{{"id", req.path_params[0]}, {"versions", std::move(items)}}));
  });

  router.Add("PATCH", "/breadcrumbs/{id}", Dispatch::kWorker, [&store, &clock, limits](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(model::WriteContext ctx, WriteContextFrom(req));
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    CAIRN_ASSIGN_OR_RETURN(std::optional<int64_t> expected, ParseIfMatch(req));
    CAIRN_ASSIGN_OR_RETURN(json::value body, ParseJsonBody(req, limits));
    CAIRN_ASSIGN_OR_RETURN(model::BreadcrumbPatch patch, model::ParsePatch(body, limits, clock.NowMicros()));
    CAIRN_ASSIGN_OR_RETURN(model::Breadcrumb updated, store.Update(ctx, req.path_params[0], patch, expected));
    return RecordResponse(200, updated, model::SerializeFullView(updated));
  });

  router.Add("DELETE", "/breadcrumbs/{id}", Dispatch::kWorker, [&store](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(model::WriteContext ctx, WriteContextFrom(req));
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    CAIRN_ASSIGN_OR_RETURN(std::optional<int64_t> expected, ParseIfMatch(req));
    CAIRN_RETURN_IF_ERROR(store.Delete(ctx, req.path_params[0], expected));
    HttpResponse response;
    response.status = 204;
    response.content_type.clear();
    return response;
  });
}

}  // namespace cairn::server
