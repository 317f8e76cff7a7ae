// Routes of authentication and tenants (docs/auth.md):
//   POST /auth/token               {"key"} or Authorization: Bearer <API key> → {token, token_type, expires_in}
//   GET /auth/me                   the caller: {principal, tenant, roles, system_admin, auth: "on"}; with
//                                  --auth=none the local admin {..., roles: ["admin"], auth: "none"}
//   POST /tenants, GET /tenants    create and list tenants (system admins): {id, name, daily_token_quota}
//   PATCH /tenants/{tenant}        {"daily_token_quota": n | null} (system admins)
//   POST /tenants/{tenant}/keys    {"principal", "roles"} → {"key", ...}, the key shown once
//   GET /tenants/{tenant}/keys     the live keys: {key_id, principal, roles, created_at, last4, ...}
//   DELETE /tenants/{tenant}/keys/{key_id}  revokes the key and the tokens made from it
//                                  (keys: a system admin, or an admin of that tenant)
//   GET /tenants/{tenant}/usage    today's LLM tokens {tenant, day, tokens_used, daily_token_quota (0: unlimited)}
//                                  (an admin of that tenant, or a system admin)
//   POST /secrets                  {"name", "value"} → 201 (new) or 200 (rotated) {name, version, ...}
//   GET /secrets                   the tenant's secrets' names and metadata, never values
//   DELETE /secrets/{name}         204; admins of the tenant (route_access.cpp; docs/secrets.md)
// With --auth=none there are no principals: whoever reaches the loopback port may do all of it.
#pragma once

#include "auth/authenticator.h"
#include "auth/secret_store.h"
#include "exec/token_quota.h"
#include "model/limits.h"
#include "server/router.h"

namespace cairn::server {

// `authenticator` must outlive the router.
void AddAuthRoutes(Router& router, const auth::Authenticator& authenticator, const model::Limits& limits);
// `keys` and `quota` must outlive the router.
void AddUsageRoutes(Router& router, const auth::KeyRegistry& keys, exec::TokenQuota& quota);
// `secrets` must outlive the router.
void AddSecretRoutes(Router& router, auth::SecretStore& secrets, const model::Limits& limits);

}  // namespace cairn::server
