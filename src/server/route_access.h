// Who may call each route: the one table of the API's authorisation (docs/auth.md). Every route
// the router holds gets its access from here when it is added, so a route cannot go without one:
//   public        /health, POST /auth/token (and their /rcrt twins): no credentials needed
//   /rcrt/...     as the native route it calls (docs/rcrt.md); /rcrt/tenants/{id} system admin,
//                 /rcrt/agents/{id} and its secret admin
//   any principal GET /auth/me (who the caller is)
//   system admin  /tenants (the bootstrap key's principal)
//   admin         POST /tenants/{tenant}/keys (of that tenant), /metrics, /secrets
//   developer     webhooks and the dead-letter queue; definitions (tool.v1, agent.def.v1,
//                 workflow.def.v1) are checked where they are written (WriteContext::may_define)
//   reader        every other GET (and HEAD)
//   user          every other write
#pragma once

#include <string_view>

#include "auth/principal.h"

namespace cairn::server {

struct RouteAccess {
  enum class Kind { kPublic, kRole, kSystemAdmin };
  Kind kind = Kind::kRole;
  auth::Role role = auth::Role::kReader;  // for kRole
};

RouteAccess AccessFor(std::string_view method, std::string_view pattern);

}  // namespace cairn::server
