#include "auth/secret_store.h"

#include <algorithm>

#include "auth/jwt.h"
#include "auth/key_registry.h"
#include "base/json_util.h"
#include "model/breadcrumb.h"
#include "model/query.h"
#include "model/secret_ref.h"

namespace cairn::auth {
namespace json = boost::json;
namespace {

std::string SecretPath(const std::string& tenant, const std::string& name) { return "secrets/" + tenant + "/" + name; }

SecretInfo InfoOf(const model::Breadcrumb& crumb) {
  const json::object empty;
  const json::object& o = crumb.context.is_object() ? crumb.context.as_object() : empty;
  return SecretInfo{StringMember(o, "name"), crumb.version, crumb.created_at, crumb.updated_at, crumb.updated_by};
}

}  // namespace

bool IsValidSecretName(std::string_view name) { return model::IsValidSecretName(name); }

Result<std::optional<model::Breadcrumb>> SecretStore::Find(const std::string& tenant, const std::string& name) {
  model::BreadcrumbQuery query;
  query.schema_name = std::string(kSecretSchema);
  query.path = SecretPath(tenant, name);
  query.include_context = true;
  query.limit = 1;
  CAIRN_ASSIGN_OR_RETURN(store::Page page, store_.List(kSystemOwner, query));
  if (page.items.empty()) return std::optional<model::Breadcrumb>();
  return std::optional<model::Breadcrumb>(std::move(page.items.front()));
}

Result<SecretInfo> SecretStore::Put(const std::string& tenant, const std::string& name, const std::string& value,
                                    const std::string& actor) {
  if (!IsValidSecretName(name)) return Status::Validation("name", "must be 1 to 128 of A-Z a-z 0-9 _ . -");
  if (value.empty() || value.size() > kMaxSecretBytes) {
    return Status::Validation("value", "must be 1 to " + std::to_string(kMaxSecretBytes) + " bytes");
  }
  CAIRN_ASSIGN_OR_RETURN(std::string sealed, box_.Seal(value));
  json::object context{{"tenant", tenant}, {"name", name}, {"sealed", Base64UrlEncode(sealed)}};
  std::lock_guard lock(write_mu_);
  CAIRN_ASSIGN_OR_RETURN(std::optional<model::Breadcrumb> existing, Find(tenant, name));
  if (existing) {
    model::BreadcrumbPatch patch;
    patch.context.Set(std::move(context));
    CAIRN_ASSIGN_OR_RETURN(model::Breadcrumb updated,
                           store_.Update(SystemContext(actor), existing->id, patch, existing->version));
    return InfoOf(updated);
  }
  model::BreadcrumbDraft draft;
  draft.schema_name = std::string(kSecretSchema);
  draft.title = "secret " + name + " of " + tenant;
  draft.path = SecretPath(tenant, name);
  draft.visibility = "private";
  draft.context = std::move(context);
  CAIRN_ASSIGN_OR_RETURN(store::CreateResult created, store_.Create(SystemContext(actor), draft, ""));
  return InfoOf(created.breadcrumb);
}

Result<std::vector<SecretInfo>> SecretStore::List(const std::string& tenant) {
  std::vector<SecretInfo> out;
  model::BreadcrumbQuery query;
  query.schema_name = std::string(kSecretSchema);
  query.path_prefix = "secrets/" + tenant;
  query.include_context = true;
  query.limit = 1000;
  for (;;) {
    CAIRN_ASSIGN_OR_RETURN(store::Page page, store_.List(kSystemOwner, query));
    for (const auto& crumb : page.items) out.push_back(InfoOf(crumb));
    if (!page.next_cursor) break;
    query.cursor = page.next_cursor;
  }
  std::sort(out.begin(), out.end(), [](const SecretInfo& a, const SecretInfo& b) { return a.name < b.name; });
  return out;
}

Status SecretStore::Delete(const std::string& tenant, const std::string& name, const std::string& actor) {
  std::lock_guard lock(write_mu_);
  CAIRN_ASSIGN_OR_RETURN(std::optional<model::Breadcrumb> existing, Find(tenant, name));
  if (!existing) return Status::NotFound("secret '" + name + "' not found");
  return store_.Delete(SystemContext(actor), existing->id, std::nullopt);
}

Result<std::string> SecretStore::Resolve(const std::string& tenant, const std::string& name) {
  CAIRN_ASSIGN_OR_RETURN(std::optional<model::Breadcrumb> existing, Find(tenant, name));
  if (!existing) return Status::NotFound("secret '" + name + "' not found (create it with POST /secrets)");
  std::string sealed_text = existing->context.is_object() ? StringMember(existing->context.as_object(), "sealed") : "";
  std::optional<std::string> sealed = Base64UrlDecode(sealed_text);
  if (!sealed) return Status::Internal("secret '" + name + "' is stored damaged");
  return box_.Open(*sealed);
}

}  // namespace cairn::auth
