#include "server/route_access.h"

namespace cairn::server {
namespace {

bool Under(std::string_view pattern, std::string_view prefix) {
  return pattern == prefix || (pattern.starts_with(prefix) && pattern[prefix.size()] == '/');
}

}  // namespace

RouteAccess AccessFor(std::string_view method, std::string_view pattern) {
  using K = RouteAccess::Kind;
  using auth::Role;
  // The reference API (docs/rcrt.md) needs what the native route it calls needs; creating a tenant
  // is for system admins, an agent (a principal and its key) and its secret for admins.
  if (pattern == "/rcrt/tenants/{id}") return {K::kSystemAdmin, Role::kAdmin};
  if (pattern == "/rcrt/agents/{id}" || pattern == "/rcrt/agents/{id}/secret") return {K::kRole, Role::kAdmin};
  if (pattern.starts_with("/rcrt/")) pattern.remove_prefix(5);
  bool read = method == "GET" || method == "HEAD";
  // The dashboard's files hold no data (the page signs in and calls the API with its key), so a
  // browser can load the sign-in page.
  if ((read && (pattern == "/health" || Under(pattern, "/ui"))) ||
      (method == "POST" && pattern == "/auth/token")) {
    return {K::kPublic, Role::kReader};
  }
  // Who am I: any principal (each has at least one role, so reader is every principal).
  if (read && pattern == "/auth/me") return {K::kRole, Role::kReader};
  if (pattern == "/tenants") return {K::kSystemAdmin, Role::kAdmin};
  // A tenant's quota is set by system admins; its keys (list, create, revoke) and usage by its
  // admins too (the handlers check the tenant), below.
  if (pattern == "/tenants/{tenant}") return {K::kSystemAdmin, Role::kAdmin};
  if (Under(pattern, "/tenants") || pattern == "/metrics" || Under(pattern, "/secrets")) return {K::kRole, Role::kAdmin};
  if (Under(pattern, "/webhooks") || pattern == "/agents/{id}/webhooks" || Under(pattern, "/dlq")) return {K::kRole, Role::kDeveloper};
  return {K::kRole, read ? Role::kReader : Role::kUser};
}

}  // namespace cairn::server
