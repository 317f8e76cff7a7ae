// KeyRegistry: the tenants and API keys, kept as records of cairn's own "_system" owner (schemas
// auth.tenant.v1 and auth.key.v1; no tenant can be named so, hence no client reads them) and
// held in memory for the lookup of every request.
//
// A key is "ck_" + 43 base64url characters (32 random bytes); it is returned once by CreateKey
// and stored only as its SHA-256 (a random 256-bit key needs no slow hash). The bootstrap key (a
// setting, never stored) authenticates a system admin who is an admin of the default tenant.
// Thread-safe.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <boost/json/object.hpp>

#include "auth/principal.h"
#include "base/status.h"
#include "model/event.h"
#include "model/reserved.h"
#include "store/store.h"

namespace cairn::auth {

// The owner of the auth records: not a valid tenant id (ValidateTenantId).
inline constexpr char kSystemOwner[] = "_system";
static_assert(std::string_view(kSystemOwner) == model::kSystemOwner);
inline constexpr std::string_view kTenantSchema = model::kAuthTenantSchema;
inline constexpr std::string_view kKeySchema = model::kAuthKeySchema;

struct TenantInfo {
  std::string id;
  std::string name;
  int64_t created_at = 0;  // microseconds
  // LLM tokens a day (exec/token_quota.h), 0 unlimited; nullopt: the --daily-token-quota default.
  std::optional<int64_t> daily_token_quota = std::nullopt;
};

// What may be shown of an API key: never the key or its hash.
struct KeyInfo {
  std::string key_id;
  std::string tenant;
  std::string principal;
  std::vector<Role> roles;
  int64_t created_at = 0;  // microseconds
  std::string created_by;
  std::string last4;       // its last four characters (empty for keys made before they were kept)
};

// Bounds of a tenant's daily_token_quota.
inline constexpr int64_t kMaxDailyTokenQuota = int64_t{1} << 50;

struct IssuedKey {
  std::string key;  // shown once
  std::string key_id;
  Principal principal;
};

class KeyRegistry {
 public:
  explicit KeyRegistry(store::Store& store);

  // Reads every tenant and key from the store; the default tenant always exists.
  Status Load();

  // Makes `key` (at least 32 characters, else kInvalidArgument) the bootstrap admin's.
  Status SetBootstrapKey(const std::string& key);

  // The principal of `key`; kUnauthenticated for an unknown one.
  Result<Principal> Authenticate(std::string_view key) const;

  // kValidation for a bad id or name, kConflict when the tenant exists.
  Result<TenantInfo> CreateTenant(const std::string& id, const std::string& name, const std::string& actor,
                                  std::optional<int64_t> daily_token_quota = std::nullopt);
  // Sets (or, with nullopt, clears back to the default) the tenant's daily token quota;
  // kNotFound for an unknown tenant.
  Result<TenantInfo> SetDailyTokenQuota(const std::string& id, std::optional<int64_t> quota, const std::string& actor);
  // The tenant's own quota; nullopt: the default (or an unknown tenant).
  std::optional<int64_t> DailyTokenQuota(const std::string& id) const;
  std::vector<TenantInfo> Tenants() const;
  std::vector<std::string> TenantIds() const;
  // Called after CreateTenant stored a tenant (outside the registry's lock), e.g. to install the
  // built-in tools and agent there; a failure is logged. Set it before the registry is shared.
  void OnTenantCreated(std::function<Status(const std::string& tenant)> hook);
  bool TenantExists(const std::string& id) const;

  // The record-access scope (model/access.h) of principal `id` in `tenant` as its keys give it:
  // the highest role of any of its keys (the bootstrap admin is an admin of the default tenant).
  // A principal with no key (an executor's id, a name given by X-Cairn-Actor) has no role: it
  // reads public and team records and its own.
  model::AccessScope AccessScopeFor(const std::string& tenant, const std::string& id) const;

  // kNotFound for an unknown tenant; kValidation for a bad principal id.
  Result<IssuedKey> CreateKey(const std::string& tenant, const std::string& principal, std::vector<Role> roles,
                              const std::string& actor);
  // The tenant's live keys, oldest first.
  std::vector<KeyInfo> ListKeys(const std::string& tenant) const;
  // Revokes key `key_id` of `tenant`: it authenticates no more from now on, and neither do the
  // tokens made from it (Authenticator checks KeyIsLive). The record stays, marked revoked_at /
  // revoked_by. kNotFound for a key the tenant does not have (or has revoked already).
  Status RevokeKey(const std::string& tenant, const std::string& key_id, const std::string& actor);
  // Whether `key_id` names a key that is not revoked.
  bool KeyIsLive(const std::string& key_id) const;

  // Applies the event of an auth record another process of a cluster wrote (a shared store,
  // docs/deploy.md), so every process knows what any of them changed: a key created authenticates
  // here too, a key revoked or deleted no more, a tenant created or changed is known. Events of
  // this process's own writes change nothing (it applied them when it wrote). OnTenantCreated does
  // not run: the tenant's built-ins are installed by the process that does the background work,
  // at its next start when it did not create the tenant. Other events are ignored. Cheap: safe on
  // the bus thread.
  void Apply(const model::Event& event);

 private:
  struct KeyEntry {
    KeyInfo info;
    std::string sha256;
    std::string record_id;
  };
  Principal PrincipalOf(const KeyInfo& info) const;
  // The live key a key record holds (nullopt: revoked, or not a key record of this version).
  static std::optional<KeyEntry> KeyEntryOf(const boost::json::object& context, const std::string& record_id,
                                            int64_t created_at, const std::string& created_by);

  store::Store& store_;
  mutable std::shared_mutex mu_;
  std::mutex write_mu_;  // revocations' read-then-write of a key record
  std::map<std::string, TenantInfo> tenants_;
  std::map<std::string, KeyEntry> keys_;                       // by key id
  std::unordered_map<std::string, std::string> key_by_hash_;   // SHA-256 (hex) of the key → key id
  std::string bootstrap_hash_;
  std::function<Status(const std::string&)> on_tenant_created_;
};

// A write of the system owner's records (tenants, keys, secrets) by `actor`.
model::WriteContext SystemContext(const std::string& actor);

// `bytes` random bytes from the OS's CSPRNG (OpenSSL RAND_bytes); kInternal if it fails.
Result<std::string> RandomBytes(size_t bytes);

}  // namespace cairn::auth
