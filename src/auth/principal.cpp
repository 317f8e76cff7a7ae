#include "auth/principal.h"

#include <algorithm>
#include <cctype>

namespace cairn::auth {

std::string_view RoleName(Role role) {
  switch (role) {
    case Role::kReader: return "reader";
    case Role::kUser: return "user";
    case Role::kDeveloper: return "developer";
    case Role::kAdmin: return "admin";
  }
  return "reader";
}

std::optional<Role> ParseRole(std::string_view name) {
  for (Role role : {Role::kReader, Role::kUser, Role::kDeveloper, Role::kAdmin}) {
    if (RoleName(role) == name) return role;
  }
  return std::nullopt;
}

bool Principal::Has(Role needed) const {
  if (system_admin) return true;
  return std::any_of(roles.begin(), roles.end(), [needed](Role r) { return static_cast<int>(r) >= static_cast<int>(needed); });
}

Status ValidateTenantId(std::string_view id, const std::string& field) {
  bool ok = !id.empty() && id.size() <= 64 && std::isalnum(static_cast<unsigned char>(id.front()));
  for (char c : id) {
    bool allowed = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    ok = ok && allowed;
  }
  if (!ok) return Status::Validation(field, "must be 1 to 64 characters of a-z, 0-9, _ and -, starting with a letter or digit");
  return Status::Ok();
}

Status ValidatePrincipalId(std::string_view id, const std::string& field) {
  return model::ValidatePrincipalName(id, field);
}

model::AccessScope AccessScopeOf(const Principal& principal) {
  if (principal.Has(Role::kAdmin)) return model::AccessScope::Everything();
  model::AccessScope scope;
  scope.principal = principal.id;
  for (Role role : {Role::kReader, Role::kUser, Role::kDeveloper, Role::kAdmin}) {
    if (principal.Has(role)) scope.roles.emplace_back(RoleName(role));
  }
  return scope;
}

Result<std::vector<Role>> ParseRoles(const std::vector<std::string>& names, const std::string& field) {
  if (names.empty()) return Status::Validation(field, "must name at least one role (reader, user, developer, admin)");
  if (names.size() > 4) return Status::Validation(field, "names at most the four roles");
  std::vector<Role> roles;
  for (size_t i = 0; i < names.size(); ++i) {
    auto role = ParseRole(names[i]);
    if (!role) {
      return Status::Validation(field + "[" + std::to_string(i) + "]",
                                "unknown role '" + names[i] + "' (reader, user, developer, admin)");
    }
    roles.push_back(*role);
  }
  return roles;
}

}  // namespace cairn::auth
