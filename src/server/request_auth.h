// The one place a request is authenticated and its route's access checked (HttpSession calls it
// for every matched route, before the handler runs).
//
// With an authenticator (--auth=on): the credential is the Authorization header or the
// `access_token` query parameter on GET (EventSource clients cannot set headers); a missing, malformed,
// expired or forged one is kUnauthenticated (401) unless the route is public; a principal without
// the route's role is kPermissionDenied (403) naming the role. The principal is then the
// request's (WriteContextFrom reads its tenant and id).
// Without one (--auth=none): nobody is asked for credentials and the request has no principal.
// Either way `access_token` is taken off the query, so no route sees it as a parameter.
// Rate limits: a token of the principal's bucket and of its tenant's (with --auth=none, of the
// default tenant's); an empty bucket is 429 with Retry-After (whole seconds until a token).
#pragma once

#include <optional>
#include <string_view>

#include "auth/authenticator.h"
#include "auth/rate_limiter.h"
#include "base/status.h"
#include "server/http_types.h"
#include "server/route_access.h"

namespace cairn::server {

// What the server checks before a handler runs; null members are off. Must outlive the server.
struct RequestGuards {
  const auth::Authenticator* authenticator = nullptr;  // null: --auth=none
  auth::RateLimiter* principal_rate = nullptr;
  auth::RateLimiter* tenant_rate = nullptr;
};

// Whether `principal` may use a route of `access` (kPermissionDenied naming what is missing). A null
// principal (--auth=none) may use every route. For requests made inside the server on a client's
// behalf (POST /mcp's API calls), which do not pass through AuthenticateRequest again.
Status AuthorizeRoute(const auth::Principal* principal, const RouteAccess& access);

// The tenant an authenticated request acts in: its principal's, or the default tenant with
// --auth=none; nullopt for a request without a principal while auth is on (a public route).
std::optional<std::string_view> ActingTenant(const HttpRequest& request, const RequestGuards& guards);

// nullopt when the request may go on (with request.principal set); else the answer refusing it.
std::optional<HttpResponse> AuthenticateRequest(HttpRequest& request, const RouteAccess& access,
                                                const RequestGuards& guards);

}  // namespace cairn::server
