#include "server/rcrt/rcrt_routes.h"

#include <boost/json/serialize.hpp>
#include <algorithm>

#include "server/rcrt/native_routes.h"
#include "server/rcrt/rcrt_views.h"
#include "server/request_support.h"
#include "server/sse_stream.h"
#include "server/webhooks/webhook_codec.h"

namespace cairn::server::rcrt {
namespace json = boost::json;
namespace {

using Reshape = std::function<json::value(json::value)>;

json::value Same(json::value value) { return value; }
json::value IdOnly(json::value value) { return json::object{{"id", value.as_object().at("id")}}; }
Reshape Field(const char* name) {
  return [name](json::value value) { return value.as_object().at(name); };
}

// A reference request body: a JSON object with only `allowed` fields (422 naming any other).
Result<json::object> BodyWith(const HttpRequest& req, const model::Limits& limits,
                              std::initializer_list<std::string_view> allowed) {
  CAIRN_ASSIGN_OR_RETURN(json::value body, ParseJsonBody(req, limits));
  if (!body.is_object()) return Status::Validation("body", "must be a JSON object");
  for (const auto& [key, value] : body.as_object()) {
    if (std::find(allowed.begin(), allowed.end(), std::string_view(key)) == allowed.end()) {
      return Status::Validation(std::string(key), "unknown field");
    }
  }
  return std::move(body.as_object());
}

// Registers `method rcrt_pattern` as a call of the native `method native_pattern` with the same
// request, its successful answer reshaped.
Status Forward(Router& router, const NativeRoutes& native, const std::string& method, const std::string& rcrt_pattern,
               const std::string& native_pattern, Dispatch dispatch, Reshape reshape) {
  CAIRN_ASSIGN_OR_RETURN(Handler handler, native.Get(method, native_pattern));
  router.Add(method, rcrt_pattern, dispatch, [handler, reshape](const HttpRequest& req) {
    return CallAndReshape(handler, req, reshape);
  });
  return Status::Ok();
}

Status AddBreadcrumbRoutes(Router& router, const NativeRoutes& native, const RcrtServices& s) {
  CAIRN_RETURN_IF_ERROR(Forward(router, native, "POST", "/rcrt/breadcrumbs", "/breadcrumbs", Dispatch::kWorker, IdOnly));
  CAIRN_RETURN_IF_ERROR(Forward(router, native, "GET", "/rcrt/breadcrumbs", "/breadcrumbs", Dispatch::kWorker, Field("items")));
  // The reference names the number of results `nn`; cairn calls it `limit`. Before /{id}, which
  // would take "search" as an id.
  CAIRN_ASSIGN_OR_RETURN(Handler search, native.Get("GET", "/breadcrumbs/search"));
  router.Add("GET", "/rcrt/breadcrumbs/search", Dispatch::kWorker, [search](const HttpRequest& req) {
    HttpRequest renamed = req;
    for (auto& [name, value] : renamed.query) {
      if (name == "nn") name = "limit";
    }
    return CallAndReshape(search, renamed, Field("items"));
  });
  for (const char* tail : {"", "/full"}) {
    CAIRN_RETURN_IF_ERROR(Forward(router, native, "GET", std::string("/rcrt/breadcrumbs/{id}") + tail,
                                  std::string("/breadcrumbs/{id}") + tail, Dispatch::kInline, Same));
  }
  CAIRN_RETURN_IF_ERROR(Forward(router, native, "GET", "/rcrt/breadcrumbs/{id}/history", "/breadcrumbs/{id}/history",
                                Dispatch::kInline, Field("versions")));
  CAIRN_RETURN_IF_ERROR(Forward(router, native, "PATCH", "/rcrt/breadcrumbs/{id}", "/breadcrumbs/{id}", Dispatch::kWorker, Same));
  CAIRN_RETURN_IF_ERROR(Forward(router, native, "DELETE", "/rcrt/breadcrumbs/{id}", "/breadcrumbs/{id}", Dispatch::kWorker, Same));

  // The reference's body is the selector itself; cairn stores it as a named stored selector.
  CAIRN_ASSIGN_OR_RETURN(Handler selectors, native.Get("POST", "/subscriptions/selectors"));
  router.Add("POST", "/rcrt/subscriptions/selectors", Dispatch::kWorker, [selectors, limits = s.limits](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(model::WriteContext ctx, WriteContextFrom(req));
    CAIRN_ASSIGN_OR_RETURN(json::value body, ParseJsonBody(req, limits));
    json::object wrapped{{"name", "rcrt selector of " + ctx.actor}, {"selector", std::move(body)}};
    auto created = CallAndReshape(selectors, Rewritten(req, req.path_params, wrapped), IdOnly);
    // The fields of the reference's body are the selector's: name them without cairn's wrapper.
    if (!created.ok() && created.status().field().starts_with("selector.")) {
      const std::string& field = created.status().field();
      std::string message = created.status().message();
      if (message.starts_with(field + ": ")) message.erase(0, field.size() + 2);
      return Status::Validation(field.substr(9), message);
    }
    return created;
  });

  // The native stream (same selector parameters, resume point, tenant), with the reference's frames
  // and its ping interval.
  CAIRN_ASSIGN_OR_RETURN(Handler stream, native.Get("GET", "/events/stream"));
  router.Add("GET", "/rcrt/events/stream", Dispatch::kWorker, [stream, s](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(HttpResponse response, stream(req));
    auto native_spec = std::dynamic_pointer_cast<const SseSpec>(response.event_stream);
    if (!native_spec) return Status::Internal("rcrt: the native event stream answered without a stream");
    auto spec = std::make_shared<SseSpec>(*native_spec);
    spec->heartbeat = s.ping_interval;
    spec->stored_view = [max = s.event_context_max_bytes](const model::Event& event) -> std::optional<json::object> {
      return EventFrame(event, max);
    };
    response.event_stream = std::move(spec);
    return response;
  });
  return Status::Ok();
}

Status AddAdminRoutes(Router& router, const NativeRoutes& native, const RcrtServices& s) {
  router.Add("GET", "/rcrt/health", Dispatch::kInline, [](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    HttpResponse response;
    response.content_type = "text/plain; charset=utf-8";
    response.body = "ok";
    return response;
  });

  CAIRN_RETURN_IF_ERROR(Forward(router, native, "POST", "/rcrt/auth/token", "/auth/token", Dispatch::kInline, Same));

  CAIRN_ASSIGN_OR_RETURN(Handler tenants, native.Get("POST", "/tenants"));
  router.Add("POST", "/rcrt/tenants/{id}", Dispatch::kWorker, [tenants, limits = s.limits](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    CAIRN_ASSIGN_OR_RETURN(json::object body, BodyWith(req, limits, {"name"}));
    body["id"] = req.path_params[0];
    return CallAndReshape(tenants, Rewritten(req, {}, body), Same);
  });

  // An agent is a principal of the request's tenant; its API key is returned once.
  CAIRN_ASSIGN_OR_RETURN(Handler keys, native.Get("POST", "/tenants/{tenant}/keys"));
  router.Add("POST", "/rcrt/agents/{id}", Dispatch::kWorker, [keys, limits = s.limits](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(model::WriteContext ctx, WriteContextFrom(req));
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    CAIRN_ASSIGN_OR_RETURN(json::object body, BodyWith(req, limits, {"roles"}));
    if (json::array* roles = body.contains("roles") ? body["roles"].if_array() : nullptr) {
      for (auto& role : *roles) {
        if (role.is_string()) role = CairnRoleName(role.get_string());
      }
    }
    body["principal"] = req.path_params[0];
    return CallAndReshape(keys, Rewritten(req, {ctx.owner_id}, body), [](json::value value) {
      json::object& issued = value.as_object();
      return json::value(json::object{{"agent_id", issued["principal"]}, {"owner_id", issued["tenant"]},
                                      {"roles", issued["roles"]}, {"key", issued["key"]}, {"key_id", issued["key_id"]}});
    });
  });

  CAIRN_ASSIGN_OR_RETURN(Handler create_webhook, native.Get("POST", "/webhooks"));
  router.Add("POST", "/rcrt/agents/{id}/webhooks", Dispatch::kWorker, [create_webhook](const HttpRequest& req) {
    return CallAndReshape(create_webhook, req, IdOnly);
  });

  // cairn's webhooks belong to the tenant, not to an agent: the secret signs every webhook of the
  // tenant (docs/rcrt.md).
  router.Add("POST", "/rcrt/agents/{id}/secret", Dispatch::kWorker, [s](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_ASSIGN_OR_RETURN(model::WriteContext ctx, WriteContextFrom(req));
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    CAIRN_ASSIGN_OR_RETURN(json::object body, BodyWith(req, s.limits, {"secret"}));
    const json::value* secret = body.if_contains("secret");
    if (!secret || !secret->is_string() || secret->get_string().empty() ||
        secret->get_string().size() > webhooks::kMaxSecretBytes) {
      return Status::Validation("secret", "is required: a string of 1 to " + std::to_string(webhooks::kMaxSecretBytes) + " bytes");
    }
    CAIRN_ASSIGN_OR_RETURN(std::vector<store::Webhook> hooks, s.webhooks.ListWebhooks(ctx.owner_id));
    store::WebhookPatch patch;
    patch.secret = std::optional<std::string>(std::string(secret->get_string()));
    patch.secret_name = std::optional<std::string>();  // a literal secret replaces a reference
    int64_t updated = 0;
    for (const auto& hook : hooks) {
      auto changed = s.webhooks.UpdateWebhook(ctx.owner_id, hook.id, patch);
      if (!changed.ok() && changed.status().code() != StatusCode::kNotFound) return changed.status();
      if (changed.ok()) ++updated;
    }
    if (s.on_webhooks_change) CAIRN_RETURN_IF_ERROR(s.on_webhooks_change());
    return HttpResponse::Json(200, json::serialize(json::object{{"ok", true}, {"webhooks_updated", updated}}));
  });
  return Status::Ok();
}

}  // namespace

Status AddRcrtRoutes(Router& router, const RcrtServices& services) {
  NativeRoutes native(router);
  CAIRN_RETURN_IF_ERROR(AddAdminRoutes(router, native, services));
  return AddBreadcrumbRoutes(router, native, services);
}

}  // namespace cairn::server::rcrt
