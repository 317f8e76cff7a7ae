#include "auth/key_registry.h"
#include "base/log.h"

#include <openssl/rand.h>

#include <algorithm>
#include <mutex>

#include "auth/jwt.h"
#include "base/clock.h"
#include "base/json_util.h"
#include "base/time_format.h"
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

TenantInfo TenantOf(const model::Breadcrumb& crumb) {
  const auto& o = crumb.context.as_object();
  TenantInfo info{StringMember(o, "id"), StringMember(o, "name"), crumb.created_at, std::nullopt};
  if (const auto* quota = o.if_contains("daily_token_quota"); quota && quota->is_int64()) {
    info.daily_token_quota = quota->as_int64();
  }
  return info;
}

// The record of `info` (path tenants/<id>): {id, name, daily_token_quota?}.
model::BreadcrumbDraft TenantDraft(const TenantInfo& info) {
  model::BreadcrumbDraft draft;
  draft.schema_name = std::string(kTenantSchema);
  draft.title = "tenant " + info.id;
  draft.path = "tenants/" + info.id;
  draft.visibility = "private";
  json::object context{{"id", info.id}, {"name", info.name}};
  if (info.daily_token_quota) context["daily_token_quota"] = *info.daily_token_quota;
  draft.context = std::move(context);
  return draft;
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
    TenantInfo info = TenantOf(crumb);
    if (!info.id.empty()) tenants_[info.id] = std::move(info);
  }
  for (const auto& crumb : keys) {
    if (!crumb.context.is_object()) continue;
    auto entry = KeyEntryOf(crumb.context.as_object(), crumb.id, crumb.created_at, crumb.created_by);
    if (!entry) continue;
    key_by_hash_[entry->sha256] = entry->info.key_id;
    keys_[entry->info.key_id] = std::move(*entry);
  }
  return Status::Ok();
}

std::optional<KeyRegistry::KeyEntry> KeyRegistry::KeyEntryOf(const json::object& o, const std::string& record_id,
                                                            int64_t created_at, const std::string& created_by) {
  if (o.contains("revoked_at")) return std::nullopt;
  KeyEntry entry;
  entry.info.key_id = StringMember(o, "key_id");
  entry.info.tenant = StringMember(o, "tenant");
  entry.info.principal = StringMember(o, "principal");
  entry.info.created_at = created_at;
  entry.info.created_by = created_by;
  entry.info.last4 = StringMember(o, "last4");
  if (const auto* roles = o.if_contains("roles"); roles && roles->is_array()) {
    for (const auto& name : roles->as_array()) {
      if (auto role = name.is_string() ? ParseRole(std::string_view(name.as_string())) : std::nullopt) {
        entry.info.roles.push_back(*role);
      }
    }
  }
  entry.sha256 = StringMember(o, "sha256");
  entry.record_id = record_id;
  if (entry.sha256.empty() || entry.info.tenant.empty() || entry.info.key_id.empty()) return std::nullopt;
  return entry;
}

void KeyRegistry::Apply(const model::Event& event) {
  if (event.owner_id != kSystemOwner || !event.schema_name) return;
  const json::object* context = event.context.if_object();
  std::unique_lock lock(mu_);
  if (*event.schema_name == kTenantSchema) {
    if (event.type == "breadcrumb.deleted" || context == nullptr) return;
    model::Breadcrumb record;
    record.context = *context;
    TenantInfo info = TenantOf(record);
    if (info.id.empty()) return;
    auto known = tenants_.find(info.id);
    info.created_at = known != tenants_.end() ? known->second.created_at : event.at;
    tenants_[info.id] = std::move(info);
    return;
  }
  if (*event.schema_name != kKeySchema) return;
  // Whatever the event, the record's key is dropped first; a live key is put back from it.
  for (auto it = keys_.begin(); it != keys_.end(); ++it) {
    if (it->second.record_id != event.breadcrumb_id) continue;
    key_by_hash_.erase(it->second.sha256);
    keys_.erase(it);
    break;
  }
  if (event.type == "breadcrumb.deleted" || context == nullptr) return;
  auto entry = KeyEntryOf(*context, event.breadcrumb_id, event.at, event.created_by);
  if (!entry) return;
  key_by_hash_[entry->sha256] = entry->info.key_id;
  keys_[entry->info.key_id] = std::move(*entry);
}

Status KeyRegistry::SetBootstrapKey(const std::string& key) {
  if (key.size() < 32) return Status::InvalidArgument("the bootstrap admin key must be at least 32 characters");
  std::unique_lock lock(mu_);
  bootstrap_hash_ = Sha256Checksum(key);
  return Status::Ok();
}

Principal KeyRegistry::PrincipalOf(const KeyInfo& info) const {
  return Principal{info.tenant, info.principal, info.roles, false, info.key_id};
}

Result<Principal> KeyRegistry::Authenticate(std::string_view key) const {
  std::string hash = Sha256Checksum(key);
  std::shared_lock lock(mu_);
  if (!bootstrap_hash_.empty() && hash == bootstrap_hash_) {
    return Principal{model::kDefaultTenant, "bootstrap-admin", {Role::kAdmin}, true};
  }
  auto found = key_by_hash_.find(hash);
  if (found == key_by_hash_.end()) return Status::Unauthenticated("unknown API key");
  return PrincipalOf(keys_.at(found->second).info);
}

model::AccessScope KeyRegistry::AccessScopeFor(const std::string& tenant, const std::string& id) const {
  Principal merged{tenant, id, {}, false};
  std::shared_lock lock(mu_);
  if (tenant == model::kDefaultTenant && id == "bootstrap-admin" && !bootstrap_hash_.empty()) {
    return model::AccessScope::Everything();
  }
  for (const auto& [key_id, entry] : keys_) {
    if (entry.info.tenant != tenant || entry.info.principal != id) continue;
    merged.roles.insert(merged.roles.end(), entry.info.roles.begin(), entry.info.roles.end());
  }
  return AccessScopeOf(merged);
}

Result<TenantInfo> KeyRegistry::CreateTenant(const std::string& id, const std::string& name, const std::string& actor,
                                             std::optional<int64_t> daily_token_quota) {
  CAIRN_RETURN_IF_ERROR(ValidateTenantId(id, "id"));
  if (name.empty() || name.size() > 256) return Status::Validation("name", "must be 1 to 256 bytes");
  if (TenantExists(id)) return Status::Conflict("tenant '" + id + "' exists");
  TenantInfo info{id, name, 0, daily_token_quota};
  auto created = store_.Create(SystemContext(actor), TenantDraft(info), "");
  if (!created.ok()) {
    return created.status().code() == StatusCode::kConflict ? Status::Conflict("tenant '" + id + "' exists") : created.status();
  }
  info.created_at = created->breadcrumb.created_at;
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

Result<TenantInfo> KeyRegistry::SetDailyTokenQuota(const std::string& id, std::optional<int64_t> quota,
                                                   const std::string& actor) {
  std::lock_guard write(write_mu_);
  TenantInfo info;
  {
    std::shared_lock lock(mu_);
    auto it = tenants_.find(id);
    if (it == tenants_.end()) return Status::NotFound("tenant '" + id + "' not found");
    info = it->second;
  }
  info.daily_token_quota = quota;
  model::BreadcrumbQuery query;
  query.schema_name = std::string(kTenantSchema);
  query.path = "tenants/" + id;
  query.limit = 1;
  CAIRN_ASSIGN_OR_RETURN(store::Page page, store_.List(kSystemOwner, query));
  if (page.items.empty()) {
    // The default tenant exists without a record until something about it is stored.
    CAIRN_ASSIGN_OR_RETURN(store::CreateResult created, store_.Create(SystemContext(actor), TenantDraft(info), ""));
    (void)created;
  } else {
    model::BreadcrumbPatch patch;
    patch.context.Set(TenantDraft(info).context);
    CAIRN_RETURN_IF_ERROR(store_.Update(SystemContext(actor), page.items.front().id, patch, page.items.front().version).status());
  }
  std::unique_lock lock(mu_);
  tenants_[id] = info;
  return info;
}

std::optional<int64_t> KeyRegistry::DailyTokenQuota(const std::string& id) const {
  std::shared_lock lock(mu_);
  auto it = tenants_.find(id);
  return it == tenants_.end() ? std::nullopt : it->second.daily_token_quota;
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
  KeyEntry entry;
  entry.info = KeyInfo{issued.key_id, tenant, principal, std::move(roles), 0, actor, issued.key.substr(issued.key.size() - 4)};
  entry.sha256 = Sha256Checksum(issued.key);
  json::array role_names;
  for (Role role : entry.info.roles) role_names.emplace_back(RoleName(role));
  model::BreadcrumbDraft draft;
  draft.schema_name = std::string(kKeySchema);
  draft.title = "API key " + issued.key_id + " of " + principal;
  draft.path = "keys/" + issued.key_id;
  draft.visibility = "private";
  draft.sensitivity = "secret";
  draft.context = json::object{{"key_id", issued.key_id}, {"tenant", tenant}, {"principal", principal},
                               {"roles", std::move(role_names)}, {"sha256", entry.sha256}, {"last4", entry.info.last4}};
  CAIRN_ASSIGN_OR_RETURN(store::CreateResult created, store_.Create(SystemContext(actor), draft, ""));
  entry.info.created_at = created.breadcrumb.created_at;
  entry.record_id = created.breadcrumb.id;
  issued.principal = PrincipalOf(entry.info);
  std::unique_lock lock(mu_);
  key_by_hash_[entry.sha256] = issued.key_id;
  keys_[issued.key_id] = std::move(entry);
  return issued;
}

std::vector<KeyInfo> KeyRegistry::ListKeys(const std::string& tenant) const {
  std::vector<const KeyEntry*> entries;
  std::shared_lock lock(mu_);
  for (const auto& [id, entry] : keys_) {
    if (entry.info.tenant == tenant) entries.push_back(&entry);
  }
  // Oldest first: record ids are UUIDv7, in creation order.
  std::sort(entries.begin(), entries.end(), [](const KeyEntry* a, const KeyEntry* b) { return a->record_id < b->record_id; });
  std::vector<KeyInfo> out;
  for (const KeyEntry* entry : entries) out.push_back(entry->info);
  return out;
}

Status KeyRegistry::RevokeKey(const std::string& tenant, const std::string& key_id, const std::string& actor) {
  std::lock_guard write(write_mu_);
  KeyEntry entry;
  {
    std::shared_lock lock(mu_);
    auto it = keys_.find(key_id);
    if (it == keys_.end() || it->second.info.tenant != tenant) {
      return Status::NotFound("tenant " + tenant + " has no API key " + key_id);
    }
    entry = it->second;
  }
  CAIRN_ASSIGN_OR_RETURN(model::Breadcrumb record, store_.Get(kSystemOwner, entry.record_id));
  json::object context = record.context.is_object() ? record.context.as_object() : json::object{};
  context["revoked_at"] = FormatRfc3339Micros(SystemClock::Instance().NowMicros());
  context["revoked_by"] = actor;
  model::BreadcrumbPatch patch;
  patch.context.Set(std::move(context));
  CAIRN_RETURN_IF_ERROR(store_.Update(SystemContext(actor), record.id, patch, record.version).status());
  std::unique_lock lock(mu_);
  key_by_hash_.erase(entry.sha256);
  keys_.erase(key_id);
  return Status::Ok();
}

bool KeyRegistry::KeyIsLive(const std::string& key_id) const {
  std::shared_lock lock(mu_);
  return keys_.contains(key_id);
}

}  // namespace cairn::auth
