#include "server/webhooks/webhook_handlers.h"

#include <boost/json/serialize.hpp>

#include "base/log.h"
#include "server/request_support.h"
#include "server/webhooks/delivery_policy.h"
#include "server/webhooks/webhook_codec.h"
#include "server/webhooks/webhook_url.h"

namespace cairn::server {
namespace json = boost::json;
namespace {

constexpr size_t kDefaultDlqLimit = 100;
constexpr size_t kMaxDlqLimit = 1000;

struct DlqQuery {
  std::optional<std::string> webhook_id;
  std::string after;
  size_t limit = kDefaultDlqLimit;
};

// webhook_id (a webhook's id), cursor (the id of the last dead letter of the previous page: ids
// are UUIDv7, so they sort in creation order), limit.
Result<DlqQuery> ParseDlqQuery(const HttpRequest& req) {
  CAIRN_ASSIGN_OR_RETURN(QueryReader query, QueryReader::Open(req.query, {"webhook_id", "cursor", "limit"}));
  DlqQuery q;
  CAIRN_ASSIGN_OR_RETURN(q.webhook_id, query.Uuid("webhook_id"));
  CAIRN_ASSIGN_OR_RETURN(std::optional<std::string> after, query.Uuid("cursor"));
  q.after = after.value_or("");
  CAIRN_ASSIGN_OR_RETURN(q.limit, query.Limit(kDefaultDlqLimit, kMaxDlqLimit));
  return q;
}

HttpResponse NoContent() {
  HttpResponse response;
  response.status = 204;
  response.content_type.clear();
  return response;
}

// Reconciles the deliverer; the write itself has succeeded, so a failure here is only logged
// (the next change or restart reconciles again).
void NotifyChange(const std::function<Status()>& on_change) {
  if (!on_change) return;
  Status refreshed = on_change();
  if (!refreshed.ok()) CAIRN_LOG_WARN("webhooks: reloading delivery threads failed: {}", refreshed.message());
}

}  // namespace

void AddWebhookRoutes(Router& router, store::WebhookStore& store, webhooks::WebhookSender& sender,
                      std::function<Status()> on_change, const WebhookRouteOptions& given_options) {
  WebhookRouteOptions options = given_options;
  if (!options.outbound_policy) options.outbound_policy = std::make_shared<const net::OutboundPolicy>();
  router.Add("POST", "/webhooks", Dispatch::kWorker, [&store, on_change, options](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(model::WriteContext ctx, WriteContextFrom(req));
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    CAIRN_ASSIGN_OR_RETURN(json::value body, ParseJsonBody(req, options.limits));
    CAIRN_ASSIGN_OR_RETURN(store::WebhookDraft draft, webhooks::ParseWebhookDraft(body, options.limits, ctx.owner_id));
    draft.created_by = ctx.actor;  // its events are those this principal may read
    CAIRN_RETURN_IF_ERROR(webhooks::CheckWebhookDestination(draft.url, *options.outbound_policy));
    CAIRN_ASSIGN_OR_RETURN(store::Webhook hook, store.CreateWebhook(draft, options.max_webhooks_per_tenant));
    NotifyChange(on_change);
    HttpResponse response = HttpResponse::Json(201, json::serialize(webhooks::WebhookView(hook)));
    response.headers.emplace_back("Location", "/webhooks/" + hook.id);
    return response;
  });

  router.Add("GET", "/webhooks", Dispatch::kWorker, [&store](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(model::WriteContext ctx, WriteContextFrom(req));
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    CAIRN_ASSIGN_OR_RETURN(std::vector<store::Webhook> hooks, store.ListWebhooks(ctx.owner_id));
    json::array items;
    for (const auto& hook : hooks) items.emplace_back(webhooks::WebhookView(hook));
    return HttpResponse::Json(200, json::serialize(json::object{{"items", std::move(items)}}));
  });

  router.Add("GET", "/webhooks/{id}", Dispatch::kWorker, [&store](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(model::WriteContext ctx, WriteContextFrom(req));
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    CAIRN_ASSIGN_OR_RETURN(store::Webhook hook, store.GetWebhook(ctx.owner_id, req.path_params[0]));
    return HttpResponse::Json(200, json::serialize(webhooks::WebhookView(hook)));
  });

  router.Add("PATCH", "/webhooks/{id}", Dispatch::kWorker, [&store, on_change, options](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(model::WriteContext ctx, WriteContextFrom(req));
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    CAIRN_ASSIGN_OR_RETURN(json::value body, ParseJsonBody(req, options.limits));
    CAIRN_ASSIGN_OR_RETURN(store::WebhookPatch patch, webhooks::ParseWebhookPatch(body, options.limits));
    if (patch.url) CAIRN_RETURN_IF_ERROR(webhooks::CheckWebhookDestination(*patch.url, *options.outbound_policy));
    CAIRN_ASSIGN_OR_RETURN(store::Webhook hook, store.UpdateWebhook(ctx.owner_id, req.path_params[0], patch));
    NotifyChange(on_change);
    return HttpResponse::Json(200, json::serialize(webhooks::WebhookView(hook)));
  });

  router.Add("DELETE", "/webhooks/{id}", Dispatch::kWorker, [&store, on_change](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(model::WriteContext ctx, WriteContextFrom(req));
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    CAIRN_RETURN_IF_ERROR(store.DeleteWebhook(ctx.owner_id, req.path_params[0]));
    NotifyChange(on_change);
    return NoContent();
  });

  router.Add("GET", "/dlq", Dispatch::kWorker, [&store](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(model::WriteContext ctx, WriteContextFrom(req));
    CAIRN_ASSIGN_OR_RETURN(DlqQuery query, ParseDlqQuery(req));
    CAIRN_ASSIGN_OR_RETURN(store::DeadLetterPage page,
                           store.ListDeadLetters(ctx.owner_id, query.webhook_id, query.after, query.limit));
    json::array items;
    for (const auto& letter : page.items) items.emplace_back(webhooks::DeadLetterView(letter));
    json::object out{{"items", std::move(items)},
                     {"next_cursor", page.next_cursor ? json::value(*page.next_cursor) : json::value(nullptr)}};
    return HttpResponse::Json(200, json::serialize(out));
  });

  router.Add("GET", "/dlq/{id}", Dispatch::kWorker, [&store](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(model::WriteContext ctx, WriteContextFrom(req));
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    CAIRN_ASSIGN_OR_RETURN(store::DeadLetter letter, store.GetDeadLetter(ctx.owner_id, req.path_params[0]));
    return HttpResponse::Json(200, json::serialize(webhooks::DeadLetterView(letter)));
  });

  // One more attempt, now, with the webhook's current url, headers and secret (references resolved
  // now). Runs on a worker thread and takes at most the attempt timeout.
  router.Add("POST", "/dlq/{id}/retry", Dispatch::kWorker, [&store, &sender, options](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(model::WriteContext ctx, WriteContextFrom(req));
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    CAIRN_ASSIGN_OR_RETURN(store::DeadLetter letter, store.GetDeadLetter(ctx.owner_id, req.path_params[0]));
    CAIRN_ASSIGN_OR_RETURN(store::Webhook hook, store.GetWebhook(ctx.owner_id, letter.webhook_id));
    auto built = webhooks::BuildDeliveryRequest(hook, letter.event_seq, letter.payload, options.attempt_timeout,
                                                options.resolve_secret);
    webhooks::WebhookResponse response;
    if (built.ok()) {
      response = sender.Send(*built, nullptr);
    } else {
      response.error = webhooks::BuildFailureText(built.status());  // not sent: a secret is missing
    }
    json::object out{{"delivered", false},
                     {"status", response.status != 0 ? json::value(response.status) : json::value(nullptr)}};
    if (webhooks::Classify(response.status) == webhooks::AttemptVerdict::kDelivered) {
      Status removed = store.DeleteDeadLetter(ctx.owner_id, letter.id);
      // kNotFound: a concurrent retry or delete got there first; the delivery happened anyway.
      if (!removed.ok() && removed.code() != StatusCode::kNotFound) return removed;
      out["delivered"] = true;
      return HttpResponse::Json(200, json::serialize(out));
    }
    std::optional<int64_t> status;
    if (response.status != 0) status = response.status;
    CAIRN_ASSIGN_OR_RETURN(store::DeadLetter updated,
                           store.RecordDeadLetterAttempt(ctx.owner_id, letter.id, status, response.error));
    out["error"] = response.error;
    out["dead_letter"] = webhooks::DeadLetterView(updated);
    return HttpResponse::Json(200, json::serialize(out));
  });

  router.Add("DELETE", "/dlq/{id}", Dispatch::kWorker, [&store](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(model::WriteContext ctx, WriteContextFrom(req));
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    CAIRN_RETURN_IF_ERROR(store.DeleteDeadLetter(ctx.owner_id, req.path_params[0]));
    return NoContent();
  });
}

}  // namespace cairn::server
