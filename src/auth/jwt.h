// JwtCodec: signs and verifies the short-lived tokens of POST /auth/token (RFC 7519, compact
// JWS). One algorithm per codec: HS256 with a shared secret, or RS256 / EdDSA (Ed25519) with a
// private key in PEM (OpenSSL 3). Verification accepts only the codec's own algorithm (a token
// naming another one, "none" included, is refused), checks the signature before reading the
// claims, and refuses an expired token. Thread-safe after construction.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "auth/principal.h"
#include "base/base64.h"
#include "base/status.h"

namespace cairn::auth {

// The claims cairn issues: sub (principal id), tenant, roles, sys (system admin), kid (the id of
// the API key the token was made from: a revoked key's tokens are refused), iat, exp (seconds
// since the Unix epoch).
struct TokenClaims {
  std::string subject;
  std::string tenant;
  std::vector<Role> roles;
  bool system_admin = false;
  int64_t issued_at = 0;
  int64_t expires_at = 0;
  std::string key_id = {};  // empty: made from the bootstrap key (or by a version without kid)
};

class JwtCodec {
 public:
  virtual ~JwtCodec() = default;

  // HS256 with `secret` (at least 32 bytes; kInvalidArgument otherwise).
  static Result<std::unique_ptr<JwtCodec>> Hs256(std::string secret);
  // RS256 (an RSA key of at least 2048 bits) or EdDSA (an Ed25519 key), from a PEM private key;
  // kInvalidArgument for anything else.
  static Result<std::unique_ptr<JwtCodec>> FromPrivateKeyPem(const std::string& pem);

  // "HS256", "RS256" or "EdDSA".
  virtual std::string_view algorithm() const = 0;

  std::string Sign(const TokenClaims& claims) const;
  // kUnauthenticated (with the reason) for a malformed, wrongly signed or expired token, or one
  // whose claims are not cairn's (`now_seconds` decides expiry).
  Result<TokenClaims> Verify(std::string_view token, int64_t now_seconds) const;

 protected:
  virtual std::string SignBytes(std::string_view signing_input) const = 0;
  virtual bool VerifyBytes(std::string_view signing_input, std::string_view signature) const = 0;
};

// Base64url without padding (RFC 4648 §5), as JWS uses it: cairn::Base64UrlEncode (base/base64.h).
using cairn::Base64UrlEncode;
// nullopt for characters outside the alphabet, padding, or an impossible length.
std::optional<std::string> Base64UrlDecode(std::string_view text);

}  // namespace cairn::auth
