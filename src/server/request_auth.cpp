#include "server/request_auth.h"

#include <algorithm>

#include "model/reserved.h"
#include "server/error_response.h"

namespace cairn::server {
namespace {

Status Authenticate(HttpRequest& request, const RouteAccess& access, const auth::Authenticator* authenticator) {
  std::optional<std::string> access_token;
  auto token_param = [](const auto& param) { return param.first == "access_token"; };
  if (auto found = std::find_if(request.query.begin(), request.query.end(), token_param); found != request.query.end()) {
    if (std::count_if(request.query.begin(), request.query.end(), token_param) > 1) {
      return Status::Unauthenticated("access_token given more than once");
    }
    access_token = found->second;
    request.query.erase(found);
  }
  if (!authenticator) return Status::Ok();
  // A credential in a URL ends up in proxies' and browsers' histories: only where a client has no
  // other way, EventSource's GET.
  if (access_token && request.method != "GET") {
    return Status::Unauthenticated("access_token is accepted on GET only; send Authorization: Bearer");
  }
  auto authorization = request.Header("authorization");
  if (access.kind == RouteAccess::Kind::kPublic && !authorization && !access_token) return Status::Ok();
  CAIRN_ASSIGN_OR_RETURN(auth::Principal principal, authenticator->Authenticate(authorization, access_token));
  CAIRN_RETURN_IF_ERROR(AuthorizeRoute(&principal, access));
  request.principal = std::make_shared<const auth::Principal>(std::move(principal));
  return Status::Ok();
}

HttpResponse TooManyRequests(const std::string& whose, int64_t retry_after) {
  HttpResponse response = ErrorResponse(Status::ResourceExhausted("rate limit of " + whose + " reached; retry after " +
                                                                  std::to_string(retry_after) + " s"));
  for (auto& [name, value] : response.headers) {
    if (name == "Retry-After") value = std::to_string(retry_after);
  }
  return response;
}

}  // namespace

Status AuthorizeRoute(const auth::Principal* principal, const RouteAccess& access) {
  if (!principal) return Status::Ok();
  if (access.kind == RouteAccess::Kind::kSystemAdmin && !principal->system_admin) {
    return Status::PermissionDenied("this route needs a system admin (the bootstrap admin key)");
  }
  if (access.kind == RouteAccess::Kind::kRole && !principal->Has(access.role)) {
    return Status::PermissionDenied("this route needs role " + std::string(auth::RoleName(access.role)) + "; " +
                                    principal->id + " has not");
  }
  return Status::Ok();
}

std::optional<std::string_view> ActingTenant(const HttpRequest& request, const RequestGuards& guards) {
  if (request.principal) return std::string_view(request.principal->tenant);
  if (!guards.authenticator) return std::string_view(model::kDefaultTenant);
  return std::nullopt;
}

std::optional<HttpResponse> AuthenticateRequest(HttpRequest& request, const RouteAccess& access,
                                                const RequestGuards& guards) {
  if (Status allowed = Authenticate(request, access, guards.authenticator); !allowed.ok()) return ErrorResponse(allowed);
  const auth::Principal* principal = request.principal.get();
  if (principal && guards.principal_rate) {
    if (auto wait = guards.principal_rate->Take(principal->tenant + "/" + principal->id)) {
      return TooManyRequests("principal " + principal->id, *wait);
    }
  }
  // Without a principal (--auth=none) a public route, such as a health check, takes no token.
  std::optional<std::string_view> tenant = ActingTenant(request, guards);
  if (tenant && guards.tenant_rate && (principal || access.kind != RouteAccess::Kind::kPublic)) {
    if (auto wait = guards.tenant_rate->Take(std::string(*tenant))) return TooManyRequests("tenant " + std::string(*tenant), *wait);
  }
  return std::nullopt;
}

}  // namespace cairn::server
