// Principals and roles: who a request acts as, in which tenant, with which roles.
//
// Roles are ordered: reader < user < developer < admin, and a role includes every role below it
// (a developer may do what a user may). A system admin (the bootstrap key) manages tenants and
// their keys and is an admin of its own tenant.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "model/access.h"

namespace cairn::auth {

enum class Role { kReader = 0, kUser = 1, kDeveloper = 2, kAdmin = 3 };

// "reader", "user", "developer", "admin".
std::string_view RoleName(Role role);
std::optional<Role> ParseRole(std::string_view name);

struct Principal {
  std::string tenant;  // the owner_id of everything it reads and writes
  std::string id;      // the actor of its writes
  std::vector<Role> roles;
  bool system_admin = false;
  std::string key_id = {};  // the API key it authenticated with (directly or through a token); empty: bootstrap

  // Whether one of its roles is `needed` or above it.
  bool Has(Role needed) const;
};

// The record-access scope of `principal` (model/access.h): its id and the names of its roles and
// every role below them; an admin (or system admin) reads and writes every record of its tenant.
model::AccessScope AccessScopeOf(const Principal& principal);

// Tenant ids: 1 to 64 characters of [a-z0-9_-], starting with a letter or digit (so cairn's own
// "_system" owner can never be a tenant). kValidation naming `field` otherwise.
Status ValidateTenantId(std::string_view id, const std::string& field = "id");
// Principal ids: 1 to 128 printable ASCII characters without spaces, not starting with "role:"
// (model::ValidatePrincipalName). kValidation naming `field`.
Status ValidatePrincipalId(std::string_view id, const std::string& field = "principal");
// A JSON array of role names, at least one; kValidation naming `field` (or `field[i]`).
Result<std::vector<Role>> ParseRoles(const std::vector<std::string>& names, const std::string& field = "roles");

}  // namespace cairn::auth
