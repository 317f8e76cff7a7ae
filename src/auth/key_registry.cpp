#include "auth/key_registry.h"
#include "base/log.h"

#include <openssl/rand.h>

#include <mutex>

#include "auth/jwt.h"
#include "base/json_util.h"
#include "model/breadcrumb.h"
#include "model/query.h"

namespace cairn::auth {
namespace json = boost::json;
namespace {

// Every record of `schema` in the system owner, oldest first.
Result<std::vector<model::Breadcrumb>> ListAll(store::Store& store, std::string_view schema) {
  std::vector<model::Breadcrumb> out;
  model::BreadcrumbQuery query;
  query.schema_name = std::string(schema);
  query.order = model::SortOrder::kOldestFirst;
  query.limit = 1000;
  query.include_context = true;
  for (;;) {
    CAIRN_ASSIGN_OR_RETURN(store::Page page, store.List(kSystemOwner, query));
    for (auto& crumb : page.items) out.push_back(std::move(crumb));
    if (!page.next_cursor) return out;
    query.cursor = page.next_cursor;
  }
}

}  // namespace

model::WriteContext SystemContext(const std::string& actor) {
  model::WriteContext ctx;
  ctx.owner_id = kSystemOwner;
  ctx.actor = actor;
  ctx.system = true;
  return ctx;
}

Result<std::string> RandomBytes(size_t bytes) {
  std::string out(bytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(bytes)) != 1) {
    return Status::Internal("the random number generator failed");
  }
  return out;
}

KeyRegistry::KeyRegistry(store::Store& store) : store_(store) {
  tenants_[model::kDefaultTenant] = TenantInfo{model::kDefaultTenant, "Default tenant", 0};
}

Status KeyRegistry::Load() {
  CAIRN_ASSIGN_OR_RETURN(auto tenants, ListAll(store_, kTenantSchema));
  CAIRN_ASSIGN_OR_RETURN(auto keys, ListAll(store_, kKeySchema));
  std::unique_lock lock(mu_);
  for (const auto& crumb : tenants) {
    if (!crumb.context.is_object()) continue;
    const auto& o = crumb.context.as_object();
    TenantInfo info{StringMember(o, "id"), StringMember(o, "name"), crumb.created_at};
    if (!info.id.empty()) tenants_[info.id] = std::move(info);
  }
  for (const auto& crumb : keys) {
    if (!crumb.context.is_object()) continue;
    const auto& o = crumb.context.as_object();
    Principal principal{StringMember(o, "tenant"), StringMember(o, "principal"), {}, false};
    if (const auto* roles = o.if_contains("roles"); roles && roles->is_array()) {
      for (const auto& name : roles->as_array()) {
        if (auto role = name.is_string() ? ParseRole(std::string_view(name.as_string())) : std::nullopt) {
          principal.roles.push_back(*role);
        }
      }
    }
    std::string hash = StringMember(o, "sha256");
    if (!hash.empty() && !principal.tenant.empty()) keys_[hash] = std::move(principal);
  }
  return Status::Ok();
}

Status KeyRegistry::SetBootstrapKey(const std::string& key) {
  if (key.size() < 32) return Status::InvalidArgument("the bootstrap admin key must be at least 32 characters");
  std::unique_lock lock(mu_);
  bootstrap_hash_ = Sha256Checksum(key);
  return Status::Ok();
}

Result<Principal> KeyRegistry::Authenticate(std::string_view key) const {
  std::string hash = Sha256Checksum(key);
  std::shared_lock lock(mu_);
  if (!bootstrap_hash_.empty() && hash == bootstrap_hash_) {
    return Principal{model::kDefaultTenant, "bootstrap-admin", {Role::kAdmin}, true};
  }
  auto found = keys_.find(hash);
  if (found == keys_.end()) return Status::Unauthenticated("unknown API key");
  return found->second;
}

model::AccessScope KeyRegistry::AccessScopeFor(const std::string& tenant, const std::string& id) const {
  Principal merged{tenant, id, {}, false};
  std::shared_lock lock(mu_);
  if (tenant == model::kDefaultTenant && id == "bootstrap-admin" && !bootstrap_hash_.empty()) {
    return model::AccessScope::Everything();
  }
  for (const auto& [hash, principal] : keys_) {
    if (principal.tenant != tenant || principal.id != id) continue;
    merged.roles.insert(merged.roles.end(), principal.roles.begin(), principal.roles.end());
    merged.system_admin = merged.system_admin || principal.system_admin;
  }
  return AccessScopeOf(merged);
}

Result<TenantInfo> KeyRegistry::CreateTenant(const std::string& id, const std::string& name, const std::string& actor) {
  CAIRN_RETURN_IF_ERROR(ValidateTenantId(id, "id"));
  if (name.empty() || name.size() > 256) return Status::Validation("name", "must be 1 to 256 bytes");
  if (TenantExists(id)) return Status::Conflict("tenant '" + id + "' exists");
  model::BreadcrumbDraft draft;
  draft.schema_name = std::string(kTenantSchema);
  draft.title = "tenant " + id;
  draft.path = "tenants/" + id;
  draft.visibility = "private";
  draft.context = json::object{{"id", id}, {"name", name}};
  auto created = store_.Create(SystemContext(actor), draft, "");
  if (!created.ok()) {
    return created.status().code() == StatusCode::kConflict ? Status::Conflict("tenant '" + id + "' exists") : created.status();
  }
  TenantInfo info{id, name, created->breadcrumb.created_at};
  {
    std::unique_lock lock(mu_);
    tenants_[id] = info;
  }
  if (on_tenant_created_) {
    // The tenant exists either way; what the hook did not install, the next start does.
    if (Status set_up = on_tenant_created_(id); !set_up.ok()) {
      CAIRN_LOG_WARN("tenant {}: setting it up failed (retried at the next start): {}", id, set_up.message());
    }
  }
  return info;
}

void KeyRegistry::OnTenantCreated(std::function<Status(const std::string& tenant)> hook) {
  on_tenant_created_ = std::move(hook);
}

std::vector<std::string> KeyRegistry::TenantIds() const {
  std::shared_lock lock(mu_);
  std::vector<std::string> out;
  for (const auto& [id, info] : tenants_) out.push_back(id);
  return out;
}

std::vector<TenantInfo> KeyRegistry::Tenants() const {
  std::shared_lock lock(mu_);
  std::vector<TenantInfo> out;
  for (const auto& [id, info] : tenants_) out.push_back(info);
  return out;
}

bool KeyRegistry::TenantExists(const std::string& id) const {
  std::shared_lock lock(mu_);
  return tenants_.contains(id);
}

Result<IssuedKey> KeyRegistry::CreateKey(const std::string& tenant, const std::string& principal, std::vector<Role> roles,
                                         const std::string& actor) {
  if (!TenantExists(tenant)) return Status::NotFound("tenant '" + tenant + "' not found");
  CAIRN_RETURN_IF_ERROR(ValidatePrincipalId(principal, "principal"));
  CAIRN_ASSIGN_OR_RETURN(std::string secret, RandomBytes(32));
  CAIRN_ASSIGN_OR_RETURN(std::string id_bytes, RandomBytes(9));
  IssuedKey issued;
  issued.key = "ck_" + Base64UrlEncode(secret);
  issued.key_id = Base64UrlEncode(id_bytes);
  issued.principal = Principal{tenant, principal, std::move(roles), false};
  std::string hash = Sha256Checksum(issued.key);
  json::array role_names;
  for (Role role : issued.principal.roles) role_names.emplace_back(RoleName(role));
  model::BreadcrumbDraft draft;
  draft.schema_name = std::string(kKeySchema);
  draft.title = "API key " + issued.key_id + " of " + principal;
  draft.path = "keys/" + issued.key_id;
  draft.visibility = "private";
  draft.sensitivity = "secret";
  draft.context = json::object{{"key_id", issued.key_id}, {"tenant", tenant}, {"principal", principal},
                               {"roles", std::move(role_names)}, {"sha256", hash}};
  CAIRN_RETURN_IF_ERROR(store_.Create(SystemContext(actor), draft, "").status());
  std::unique_lock lock(mu_);
  keys_[hash] = issued.principal;
  return issued;
}

}  // namespace cairn::auth
