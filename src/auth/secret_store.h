// SecretStore: a tenant's named secrets (POST/GET/DELETE /secrets; docs/secrets.md), sealed with
// the SecretBox and kept as records of cairn's own "_system" owner (schema auth.secret.v1, path
// secrets/<tenant>/<name>), which no tenant can read through the record routes, streams or
// search. The record holds only the sealed value, so its events and history carry no plaintext;
// a write commits with its event (kill -9 safe like every record). Writing a name again replaces
// the value (rotation): references by name resolve to the new value from then on.
// Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "auth/secret_box.h"
#include "base/status.h"
#include "model/reserved.h"
#include "store/store.h"

namespace cairn::auth {

inline constexpr std::string_view kSecretSchema = model::kAuthSecretSchema;
inline constexpr size_t kMaxSecretBytes = 64 * 1024;

// What may be shown of a secret: never its value.
struct SecretInfo {
  std::string name;
  int64_t version = 0;     // 1 at creation, +1 at every rotation
  int64_t created_at = 0;  // microseconds
  int64_t updated_at = 0;
  std::string updated_by;
};

class SecretStore {
 public:
  // Both must outlive the SecretStore.
  SecretStore(store::Store& store, const SecretBox& box) : store_(store), box_(box) {}

  // Creates or rotates `name` in `tenant`. kValidation naming "name" ([A-Za-z0-9_.-]{1,128}) or
  // "value" (1..kMaxSecretBytes bytes).
  Result<SecretInfo> Put(const std::string& tenant, const std::string& name, const std::string& value,
                         const std::string& actor);
  // The tenant's secrets, by name.
  Result<std::vector<SecretInfo>> List(const std::string& tenant);
  // kNotFound when the tenant has no secret of that name.
  Status Delete(const std::string& tenant, const std::string& name, const std::string& actor);
  // The value, for use at the moment it is needed (never to be stored or shown). kNotFound
  // naming the secret when the tenant has none of that name.
  Result<std::string> Resolve(const std::string& tenant, const std::string& name);

 private:
  Result<std::optional<model::Breadcrumb>> Find(const std::string& tenant, const std::string& name);

  store::Store& store_;
  const SecretBox& box_;
  std::mutex write_mu_;  // a Put's find-then-write
};

// Whether `name` is a valid secret name.
bool IsValidSecretName(std::string_view name);

}  // namespace cairn::auth
