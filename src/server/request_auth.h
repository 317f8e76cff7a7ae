// The one place a request is authenticated and its route's access checked (HttpSession calls it
// for every matched route, before the handler runs).
//
// With an authenticator (--auth=on): the credential is the Authorization header or the
// `access_token` query parameter (EventSource clients cannot set headers); a missing, malformed,
// expired or forged one is kUnauthenticated (401) unless the route is public; a principal without
// the route's role is kPermissionDenied (403) naming the role. The principal is then the
// request's (WriteContextFrom reads its tenant and id).
// Without one (--auth=none): nobody is asked for credentials and the request has no principal.
// Either way `access_token` is taken off the query, so no route sees it as a parameter.
#pragma once

#include "auth/authenticator.h"
#include "base/status.h"
#include "server/http_types.h"
#include "server/route_access.h"

namespace cairn::server {

Status AuthenticateRequest(HttpRequest& request, const RouteAccess& access, const auth::Authenticator* authenticator);

}  // namespace cairn::server
