#include "model/access.h"

#include <algorithm>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include "base/json_util.h"

namespace cairn::model {
namespace json = boost::json;
namespace {

bool IsRoleName(std::string_view name) {
  return std::find(std::begin(kRoleNames), std::end(kRoleNames), name) != std::end(kRoleNames);
}

Result<std::vector<std::string>> ParseEntries(const json::value& value, const std::string& field) {
  const json::array* items = value.if_array();
  if (items == nullptr) return Status::Validation(field, "must be an array of \"role:<name>\" or principal ids");
  if (items->size() > kMaxAclEntries) {
    return Status::Validation(field, "has more than " + std::to_string(kMaxAclEntries) + " entries");
  }
  std::vector<std::string> entries;
  for (size_t i = 0; i < items->size(); ++i) {
    const std::string at = field + "[" + std::to_string(i) + "]";
    const json::string* text = (*items)[i].if_string();
    if (text == nullptr) return Status::Validation(at, "must be a string, got " + std::string(JsonKindName((*items)[i])));
    std::string_view entry(*text);
    if (entry.substr(0, kAclRolePrefix.size()) == kAclRolePrefix) {
      std::string_view role = entry.substr(kAclRolePrefix.size());
      if (!IsRoleName(role)) {
        return Status::Validation(at, "unknown role '" + std::string(role) + "' (reader, user, developer, admin)");
      }
    } else {
      CAIRN_RETURN_IF_ERROR(ValidatePrincipalName(entry, at));
    }
    if (std::find(entries.begin(), entries.end(), entry) == entries.end()) entries.emplace_back(entry);
  }
  return entries;
}

json::array EntriesJson(const std::vector<std::string>& entries) {
  json::array out;
  for (const auto& entry : entries) out.emplace_back(entry);
  return out;
}

}  // namespace

Status ValidatePrincipalName(std::string_view id, const std::string& field) {
  bool ok = !id.empty() && id.size() <= 128;
  for (char c : id) ok = ok && c > 0x20 && c < 0x7f;
  if (!ok) return Status::Validation(field, "must be 1 to 128 printable ASCII characters without spaces");
  if (id.substr(0, kAclRolePrefix.size()) == kAclRolePrefix) {
    return Status::Validation(field, "must not start with \"role:\" (ACL entries use it for roles)");
  }
  return Status::Ok();
}

Result<std::optional<RecordAcl>> ParseAcl(const json::value& value, const std::string& field) {
  if (value.is_null()) return std::optional<RecordAcl>();
  const json::object* object = value.if_object();
  if (object == nullptr) return Status::Validation(field, "must be an object {\"read\": [...], \"write\": [...]} or null");
  RecordAcl acl;
  for (const auto& kv : *object) {
    const std::string at = field + "." + std::string(kv.key());
    if (kv.key() == "read") {
      CAIRN_ASSIGN_OR_RETURN(acl.read, ParseEntries(kv.value(), at));
    } else if (kv.key() == "write") {
      CAIRN_ASSIGN_OR_RETURN(acl.write, ParseEntries(kv.value(), at));
    } else {
      return Status::Validation(at, "unknown field (an acl has read and write)");
    }
  }
  if (!acl.read && !acl.write) return std::optional<RecordAcl>();
  return std::optional<RecordAcl>(std::move(acl));
}

json::value AclJson(const std::optional<RecordAcl>& acl) {
  if (!acl) return nullptr;
  json::object out;
  if (acl->read) out["read"] = EntriesJson(*acl->read);
  if (acl->write) out["write"] = EntriesJson(*acl->write);
  return out;
}

AccessScope AccessScope::Everything() {
  AccessScope scope;
  scope.admin = true;
  return scope;
}

bool AccessScope::Named(const std::vector<std::string>& entries) const {
  for (const std::string& entry : entries) {
    std::string_view text(entry);
    if (text.substr(0, kAclRolePrefix.size()) == kAclRolePrefix) {
      std::string_view role = text.substr(kAclRolePrefix.size());
      if (std::find(roles.begin(), roles.end(), role) != roles.end()) return true;
    } else if (!principal.empty() && text == principal) {
      return true;
    }
  }
  return false;
}

bool AccessScope::MayRead(std::string_view visibility, std::string_view creator,
                          const std::optional<RecordAcl>& acl) const {
  if (admin || visibility == "public") return true;
  if (!principal.empty() && creator == principal) return true;
  if (acl && acl->read) return Named(*acl->read);
  return visibility == "team";
}

bool AccessScope::ReadsExplicitly(std::string_view creator, const std::optional<RecordAcl>& acl) const {
  if (admin || (!principal.empty() && creator == principal)) return true;
  return acl && acl->read && Named(*acl->read);
}

Status CheckWrite(const AccessScope& scope, const WriteTarget& target, bool changes_access) {
  if (scope.admin) return Status::Ok();
  if (!scope.MayRead(target.visibility, target.creator, target.acl)) {
    return Status::NotFound("breadcrumb " + std::string(target.id) + " not found");
  }
  if (!scope.principal.empty() && target.creator == scope.principal) return Status::Ok();
  const std::string who = scope.principal.empty() ? std::string("this principal") : scope.principal;
  if (changes_access) {
    return Status::PermissionDenied("only the creator of breadcrumb " + std::string(target.id) +
                                    " or an admin may change its visibility, sensitivity or acl; " + who + " is neither");
  }
  if (target.acl && target.acl->write) {
    if (scope.Named(*target.acl->write)) return Status::Ok();
    return Status::PermissionDenied("breadcrumb " + std::string(target.id) + ": acl.write names neither " + who +
                                    " nor a role of theirs");
  }
  if (target.visibility == "private") {
    return Status::PermissionDenied("breadcrumb " + std::string(target.id) +
                                    " is private: only its creator and admins may change it (or those its acl.write names)");
  }
  return Status::Ok();
}

}  // namespace cairn::model
