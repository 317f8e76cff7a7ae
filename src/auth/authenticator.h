// Authenticator: turns a request's credentials into a Principal, and API keys into tokens.
//
// Credentials are `Authorization: Bearer <credential>` or, for EventSource clients (which cannot
// set headers), the `access_token` query parameter; a credential is an API key ("ck_...") or a
// JWT issued by IssueToken(). Every failure is kUnauthenticated with a client-facing reason.
// Thread-safe.
#pragma once

#include <memory>
#include <optional>
#include <string_view>

#include "auth/jwt.h"
#include "auth/key_registry.h"
#include "auth/principal.h"
#include "base/clock.h"

namespace cairn::auth {

struct IssuedToken {
  std::string token;
  int64_t expires_in = 0;  // seconds
  std::string algorithm;
};

class Authenticator {
 public:
  // `keys` and `clock` must outlive the authenticator.
  Authenticator(KeyRegistry& keys, std::unique_ptr<JwtCodec> jwt, const Clock& clock, int64_t token_ttl_seconds);

  // `authorization`: the Authorization header if any; `access_token`: the query parameter if any.
  // Exactly one must be given.
  Result<Principal> Authenticate(std::optional<std::string_view> authorization,
                                 std::optional<std::string_view> access_token) const;

  // Exchanges an API key for a token carrying its principal.
  Result<IssuedToken> IssueToken(std::string_view api_key) const;

  KeyRegistry& keys() const { return keys_; }

 private:
  Result<Principal> FromCredential(std::string_view credential) const;

  KeyRegistry& keys_;
  std::unique_ptr<JwtCodec> jwt_;
  const Clock& clock_;
  int64_t token_ttl_seconds_;
};

}  // namespace cairn::auth
