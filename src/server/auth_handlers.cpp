#include "server/auth_handlers.h"

#include <boost/json/serialize.hpp>

#include "base/time_format.h"
#include "model/definition_fields.h"
#include "server/request_support.h"

namespace cairn::server {
namespace json = boost::json;
namespace {

Result<const json::object*> BodyObject(const json::value& body, std::initializer_list<std::string_view> allowed) {
  if (!body.is_object()) return Status::Validation("body", "must be a JSON object");
  for (const auto& [key, value] : body.as_object()) {
    if (std::find(allowed.begin(), allowed.end(), std::string_view(key)) == allowed.end()) {
      return Status::Validation(std::string(key), "unknown field");
    }
  }
  return &body.as_object();
}

Result<std::string> RequiredString(const json::object& body, const std::string& field, size_t max_bytes) {
  const auto* value = body.if_contains(field);
  if (!value) return Status::Validation(field, "is required");
  return model::RequireString(*value, field, max_bytes);
}

std::string ActorOf(const HttpRequest& req) { return req.principal ? req.principal->id : "anonymous"; }

// GET /auth/me: who the caller is. With --auth=none there are no principals: whoever reaches the
// port is the local admin of tenant "default", acting as X-Cairn-Actor (or "anonymous").
Result<json::object> CallerView(const HttpRequest& req) {
  json::array roles;
  if (!req.principal) {
    CAIRN_ASSIGN_OR_RETURN(model::WriteContext ctx, WriteContextFrom(req));
    roles.emplace_back(auth::RoleName(auth::Role::kAdmin));
    return json::object{{"principal", ctx.actor}, {"tenant", ctx.owner_id}, {"roles", std::move(roles)},
                        {"system_admin", true}, {"auth", "none"}};
  }
  const auth::Principal& principal = *req.principal;
  for (auth::Role role : principal.roles) roles.emplace_back(auth::RoleName(role));
  return json::object{{"principal", principal.id}, {"tenant", principal.tenant}, {"roles", std::move(roles)},
                      {"system_admin", principal.system_admin}, {"auth", "on"}};
}

json::object TenantView(const auth::TenantInfo& tenant) {
  return {{"id", tenant.id},
          {"name", tenant.name},
          {"daily_token_quota", tenant.daily_token_quota ? json::value(*tenant.daily_token_quota) : json::value(nullptr)}};
}

// daily_token_quota: tokens a day, 0 unlimited; null (in a PATCH) goes back to the default.
Result<std::optional<int64_t>> QuotaField(const json::object& body) {
  const json::value* value = body.if_contains("daily_token_quota");
  if (!value || value->is_null()) return std::optional<int64_t>();
  CAIRN_ASSIGN_OR_RETURN(int64_t quota, model::RequireInt(*value, "daily_token_quota", 0, auth::kMaxDailyTokenQuota));
  return std::optional<int64_t>(quota);
}

// Keys of a tenant are managed by its admins (the route's role) or a system admin.
Status CheckKeysOf(const HttpRequest& req, const std::string& tenant) {
  if (req.principal && !req.principal->system_admin && req.principal->tenant != tenant) {
    return Status::PermissionDenied("keys of tenant " + tenant + " are managed by its admins or a system admin");
  }
  return Status::Ok();
}

// What a client sees of an API key: never the key or its hash.
json::object KeyView(const auth::KeyInfo& key) {
  json::array roles;
  for (auth::Role role : key.roles) roles.emplace_back(auth::RoleName(role));
  return {{"key_id", key.key_id},
          {"tenant", key.tenant},
          {"principal", key.principal},
          {"roles", std::move(roles)},
          {"created_at", FormatRfc3339Micros(key.created_at)},
          {"created_by", key.created_by},
          {"last4", key.last4.empty() ? json::value(nullptr) : json::value(key.last4)}};
}

// What a client sees of a secret: never its value.
json::object SecretView(const auth::SecretInfo& secret) {
  return {{"name", secret.name},
          {"version", secret.version},
          {"created_at", FormatRfc3339Micros(secret.created_at)},
          {"updated_at", FormatRfc3339Micros(secret.updated_at)},
          {"updated_by", secret.updated_by}};
}

}  // namespace

void AddAuthRoutes(Router& router, const auth::Authenticator& authenticator, const model::Limits& limits) {
  router.Add("POST", "/auth/token", Dispatch::kInline, [&authenticator, limits](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    std::string key;
    if (!req.body.empty()) {
      CAIRN_ASSIGN_OR_RETURN(json::value body, ParseJsonBody(req, limits));
      CAIRN_ASSIGN_OR_RETURN(const json::object* fields, BodyObject(body, {"key"}));
      CAIRN_ASSIGN_OR_RETURN(key, RequiredString(*fields, "key", 256));
    } else if (auto header = req.Header("authorization"); header && header->starts_with("Bearer ")) {
      key = std::string(header->substr(7));
    } else {
      return Status::Unauthenticated("send the API key as {\"key\": ...} or Authorization: Bearer <API key>");
    }
    CAIRN_ASSIGN_OR_RETURN(auth::IssuedToken issued, authenticator.IssueToken(key));
    return HttpResponse::Json(200, json::serialize(json::object{{"token", issued.token},
                                                                {"token_type", "Bearer"},
                                                                {"algorithm", issued.algorithm},
                                                                {"expires_in", issued.expires_in}}));
  });

  router.Add("GET", "/auth/me", Dispatch::kInline, [](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    CAIRN_ASSIGN_OR_RETURN(json::object caller, CallerView(req));
    return HttpResponse::Json(200, json::serialize(caller));
  });

  router.Add("POST", "/tenants", Dispatch::kWorker, [&authenticator, limits](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    CAIRN_ASSIGN_OR_RETURN(json::value body, ParseJsonBody(req, limits));
    CAIRN_ASSIGN_OR_RETURN(const json::object* fields, BodyObject(body, {"id", "name", "daily_token_quota"}));
    CAIRN_ASSIGN_OR_RETURN(std::string id, RequiredString(*fields, "id", 64));
    std::string name = id;
    if (fields->contains("name")) {
      CAIRN_ASSIGN_OR_RETURN(name, RequiredString(*fields, "name", 256));
    }
    CAIRN_ASSIGN_OR_RETURN(std::optional<int64_t> quota, QuotaField(*fields));
    CAIRN_ASSIGN_OR_RETURN(auth::TenantInfo tenant, authenticator.keys().CreateTenant(id, name, ActorOf(req), quota));
    HttpResponse response = HttpResponse::Json(201, json::serialize(TenantView(tenant)));
    response.headers.emplace_back("Location", "/tenants/" + tenant.id);
    return response;
  });

  router.Add("GET", "/tenants", Dispatch::kInline, [&authenticator](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    json::array items;
    for (const auto& tenant : authenticator.keys().Tenants()) items.emplace_back(TenantView(tenant));
    return HttpResponse::Json(200, json::serialize(json::object{{"items", std::move(items)}}));
  });

  // System admins only (route_access.cpp): a tenant's admins do not set their own quota.
  router.Add("PATCH", "/tenants/{tenant}", Dispatch::kWorker, [&authenticator, limits](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    CAIRN_ASSIGN_OR_RETURN(json::value body, ParseJsonBody(req, limits));
    CAIRN_ASSIGN_OR_RETURN(const json::object* fields, BodyObject(body, {"daily_token_quota"}));
    if (!fields->contains("daily_token_quota")) return Status::Validation("daily_token_quota", "is required (null: the default)");
    CAIRN_ASSIGN_OR_RETURN(std::optional<int64_t> quota, QuotaField(*fields));
    CAIRN_ASSIGN_OR_RETURN(auth::TenantInfo tenant,
                           authenticator.keys().SetDailyTokenQuota(req.path_params[0], quota, ActorOf(req)));
    return HttpResponse::Json(200, json::serialize(TenantView(tenant)));
  });

  router.Add("GET", "/tenants/{tenant}/keys", Dispatch::kInline, [&authenticator](const HttpRequest& req) -> Result<HttpResponse> {
    const std::string& tenant = req.path_params[0];
    CAIRN_RETURN_IF_ERROR(CheckKeysOf(req, tenant));
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    if (!authenticator.keys().TenantExists(tenant)) return Status::NotFound("tenant '" + tenant + "' not found");
    json::array items;
    for (const auto& key : authenticator.keys().ListKeys(tenant)) items.emplace_back(KeyView(key));
    return HttpResponse::Json(200, json::serialize(json::object{{"items", std::move(items)}}));
  });

  router.Add("DELETE", "/tenants/{tenant}/keys/{key_id}", Dispatch::kWorker, [&authenticator](const HttpRequest& req) -> Result<HttpResponse> {
    const std::string& tenant = req.path_params[0];
    CAIRN_RETURN_IF_ERROR(CheckKeysOf(req, tenant));
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    CAIRN_RETURN_IF_ERROR(authenticator.keys().RevokeKey(tenant, req.path_params[1], ActorOf(req)));
    HttpResponse response;
    response.status = 204;
    response.content_type.clear();
    return response;
  });

  router.Add("POST", "/tenants/{tenant}/keys", Dispatch::kWorker, [&authenticator, limits](const HttpRequest& req) -> Result<HttpResponse> {
    const std::string& tenant = req.path_params[0];
    CAIRN_RETURN_IF_ERROR(CheckKeysOf(req, tenant));
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    CAIRN_ASSIGN_OR_RETURN(json::value body, ParseJsonBody(req, limits));
    CAIRN_ASSIGN_OR_RETURN(const json::object* fields, BodyObject(body, {"principal", "roles"}));
    CAIRN_ASSIGN_OR_RETURN(std::string principal, RequiredString(*fields, "principal", 128));
    const auto* roles_value = fields->if_contains("roles");
    if (!roles_value) return Status::Validation("roles", "is required");
    CAIRN_ASSIGN_OR_RETURN(std::vector<std::string> names, model::RequireStrings(*roles_value, "roles", true));
    CAIRN_ASSIGN_OR_RETURN(std::vector<auth::Role> roles, auth::ParseRoles(names));
    CAIRN_ASSIGN_OR_RETURN(auth::IssuedKey issued, authenticator.keys().CreateKey(tenant, principal, roles, ActorOf(req)));
    json::array role_names;
    for (auth::Role role : issued.principal.roles) role_names.emplace_back(auth::RoleName(role));
    return HttpResponse::Json(201, json::serialize(json::object{{"key", issued.key},
                                                                {"key_id", issued.key_id},
                                                                {"last4", issued.key.substr(issued.key.size() - 4)},
                                                                {"tenant", tenant},
                                                                {"principal", principal},
                                                                {"roles", std::move(role_names)}}));
  });
}

void AddUsageRoutes(Router& router, const auth::KeyRegistry& keys, exec::TokenQuota& quota) {
  router.Add("GET", "/tenants/{tenant}/usage", Dispatch::kWorker, [&keys, &quota](const HttpRequest& req) -> Result<HttpResponse> {
    const std::string& tenant = req.path_params[0];
    if (req.principal && !req.principal->system_admin && req.principal->tenant != tenant) {
      return Status::PermissionDenied("the usage of tenant " + tenant + " is shown to its admins or a system admin");
    }
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    if (!keys.TenantExists(tenant)) return Status::NotFound("tenant '" + tenant + "' not found");
    CAIRN_ASSIGN_OR_RETURN(exec::TokenQuota::Usage usage, quota.Today(tenant));
    return HttpResponse::Json(200, json::serialize(json::object{{"tenant", tenant},
                                                                {"day", usage.day},
                                                                {"tokens_used", usage.used},
                                                                {"daily_token_quota", usage.quota}}));
  });
}

void AddSecretRoutes(Router& router, auth::SecretStore& secrets, const model::Limits& limits) {
  router.Add("POST", "/secrets", Dispatch::kWorker, [&secrets, limits](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    CAIRN_ASSIGN_OR_RETURN(model::WriteContext ctx, WriteContextFrom(req));
    CAIRN_ASSIGN_OR_RETURN(json::value body, ParseJsonBody(req, limits));
    CAIRN_ASSIGN_OR_RETURN(const json::object* fields, BodyObject(body, {"name", "value"}));
    CAIRN_ASSIGN_OR_RETURN(std::string name, RequiredString(*fields, "name", 128));
    CAIRN_ASSIGN_OR_RETURN(std::string value, RequiredString(*fields, "value", auth::kMaxSecretBytes));
    CAIRN_ASSIGN_OR_RETURN(auth::SecretInfo secret, secrets.Put(ctx.owner_id, name, value, ctx.actor));
    // 201 for a new secret, 200 for a rotation (the same name, a new value).
    return HttpResponse::Json(secret.version == 1 ? 201 : 200, json::serialize(SecretView(secret)));
  });

  router.Add("GET", "/secrets", Dispatch::kWorker, [&secrets](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    CAIRN_ASSIGN_OR_RETURN(model::WriteContext ctx, WriteContextFrom(req));
    CAIRN_ASSIGN_OR_RETURN(std::vector<auth::SecretInfo> list, secrets.List(ctx.owner_id));
    json::array items;
    for (const auto& secret : list) items.emplace_back(SecretView(secret));
    return HttpResponse::Json(200, json::serialize(json::object{{"items", std::move(items)}}));
  });

  router.Add("DELETE", "/secrets/{name}", Dispatch::kWorker, [&secrets](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    CAIRN_ASSIGN_OR_RETURN(model::WriteContext ctx, WriteContextFrom(req));
    CAIRN_RETURN_IF_ERROR(secrets.Delete(ctx.owner_id, req.path_params[0], ctx.actor));
    HttpResponse response;
    response.status = 204;
    response.content_type.clear();
    return response;
  });
}

}  // namespace cairn::server
