// Record access (docs/security.md "Record access"): who may read and change a breadcrumb.
//
// The one rule, used by every read path (GET by id, lists, history, search, event streams,
// webhooks, context assembly) and by every write of an existing record:
//
//   reads:  an admin of the tenant; the record's creator; everyone of the tenant when visibility
//           is `public`; else, when the record has `acl.read`, whoever it names; else everyone of
//           the tenant when visibility is `team` (the default). `private` without `acl.read` is
//           the creator and admins only. So `acl.read` narrows a `team` record to the listed
//           readers and opens a `private` one to them.
//   writes: (update, delete) whoever may read it, and, when the record has `acl.write`, only
//           the creator, admins and whoever `acl.write` names; a `private` record without
//           `acl.write` only its creator and admins. Only the creator and admins change
//           `visibility`, `sensitivity` or `acl`.
//
// ACL entries are `role:<reader|user|developer|admin>` (the role or any above it, as roles
// include those below) or a principal id (any other string: 1 to 128 printable ASCII
// characters, no spaces, not starting with `role:`).
//
// A stored query takes the rule as an AccessScope (BreadcrumbQuery::reader,
// store::TextSearchQuery::reader) and each backend turns it into its own filter (SQL WHERE for
// SQLite), so pages are never short or leaky; in memory, AccessScope::MayRead is the same rule.
#pragma once

#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace cairn::model {

// Most entries in each of acl.read and acl.write.
inline constexpr size_t kMaxAclEntries = 64;
// The prefix of an ACL entry naming a role.
inline constexpr std::string_view kAclRolePrefix = "role:";
// The role names, lowest first (auth/principal.h orders the same roles).
inline constexpr std::string_view kRoleNames[] = {"reader", "user", "developer", "admin"};

struct RecordAcl {
  std::optional<std::vector<std::string>> read;   // absent: the visibility decides
  std::optional<std::vector<std::string>> write;  // absent: the visibility decides
  bool operator==(const RecordAcl&) const = default;
};

// `acl` of a create or patch body: null (no ACL) or {"read": [...], "write": [...]} (either may be
// left out; an object with neither is no ACL). kValidation naming the part at fault ("acl.read[2]").
Result<std::optional<RecordAcl>> ParseAcl(const boost::json::value& value, const std::string& field = "acl");
// Principal ids (auth::ValidatePrincipalId uses this rule): 1 to 128 printable ASCII characters
// without spaces, not starting with "role:" (which names roles in ACLs). kValidation naming `field`.
Status ValidatePrincipalName(std::string_view id, const std::string& field);
// The JSON of an ACL (null when absent); ParseAcl(AclJson(a)) == a.
boost::json::value AclJson(const std::optional<RecordAcl>& acl);

// Who reads or writes: the request's principal (server), the principal a run acts for (exec).
struct AccessScope {
  std::string principal;           // compared with creators and principal entries
  std::vector<std::string> roles;  // the role names it holds, the lower ones included
  bool admin = false;              // reads and writes every record of the tenant

  // The scope of a tenant admin (and of --auth=none): everything.
  static AccessScope Everything();

  bool MayRead(std::string_view visibility, std::string_view creator, const std::optional<RecordAcl>& acl) const;
  // Read access that does not come from the tenant-wide default: admin, creator, or named in
  // acl.read. The context of a `secret` record goes out in events only to such readers.
  bool ReadsExplicitly(std::string_view creator, const std::optional<RecordAcl>& acl) const;
  // Whether an entry of `entries` names this principal or one of its roles.
  bool Named(const std::vector<std::string>& entries) const;
};

// What a write of an existing record must respect (the record as it is now).
struct WriteTarget {
  std::string_view id;
  std::string_view visibility;
  std::string_view creator;
  const std::optional<RecordAcl>& acl;
};

// Whether `scope` may update (changes_access: the patch sets visibility, sensitivity or acl) or
// delete the record: kNotFound when it may not even read it (as if it did not exist),
// kPermissionDenied naming the rule otherwise.
Status CheckWrite(const AccessScope& scope, const WriteTarget& target, bool changes_access);

}  // namespace cairn::model
