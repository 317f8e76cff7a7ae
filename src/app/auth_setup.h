// Authentication of `cairn serve`, from its settings (auth, insecure_no_auth,
// bootstrap_admin_key, jwt_secret, jwt_private_key_file, token_ttl_s in docs/config.md;
// docs/auth.md).
#pragma once

#include <memory>
#include <string>

#include "auth/authenticator.h"
#include "auth/key_registry.h"
#include "auth/rate_limiter.h"
#include "auth/secret_box.h"
#include "auth/secret_store.h"
#include "base/clock.h"
#include "base/settings.h"
#include "store/store.h"

namespace cairn::app {

struct AuthSetup {
  std::unique_ptr<auth::KeyRegistry> keys;
  std::unique_ptr<auth::Authenticator> authenticator;
  bool enabled = false;  // --auth=on: the server authenticates every request
  // Requests per principal and per tenant (rate_limit_*); checked with --auth=on only.
  std::unique_ptr<auth::RateLimiter> principal_rate;
  std::unique_ptr<auth::RateLimiter> tenant_rate;
  // The tenants' secrets, sealed with the master key (master_key, else <data-dir>/master.key).
  std::unique_ptr<auth::SecretBox> secret_box;
  std::unique_ptr<auth::SecretStore> secrets;
};

// Refuses (kInvalidArgument) --auth=none on a non-loopback `listen_host` unless
// --insecure-no-auth, an unknown --auth, a short bootstrap key or a bad JWT key. The JWT key is
// the PEM of jwt_private_key_file (RS256/EdDSA), else jwt_secret (HS256), else a random secret
// kept in <data-dir>/jwt.key (0600), made at the first start. A master_key that is not 64 hex
// characters is kInvalidArgument.
Result<AuthSetup> MakeAuth(const Settings& settings, const std::string& listen_host, store::Store& store,
                           const Clock& clock);

}  // namespace cairn::app
