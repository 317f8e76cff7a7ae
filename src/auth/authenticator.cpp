#include "auth/authenticator.h"

namespace cairn::auth {
namespace {

constexpr std::string_view kApiKeyPrefix = "ck_";

}  // namespace

Authenticator::Authenticator(KeyRegistry& keys, std::unique_ptr<JwtCodec> jwt, const Clock& clock,
                             int64_t token_ttl_seconds)
    : keys_(keys), jwt_(std::move(jwt)), clock_(clock), token_ttl_seconds_(token_ttl_seconds) {}

Result<Principal> Authenticator::Authenticate(std::optional<std::string_view> authorization,
                                              std::optional<std::string_view> access_token) const {
  if (authorization && access_token) {
    return Status::Unauthenticated("give credentials once: an Authorization header or access_token, not both");
  }
  if (access_token) return FromCredential(*access_token);
  if (!authorization) {
    return Status::Unauthenticated("authentication required: send Authorization: Bearer <API key or token>");
  }
  std::string_view header = *authorization;
  if (header.size() < 7 || (header.substr(0, 7) != "Bearer " && header.substr(0, 7) != "bearer ")) {
    return Status::Unauthenticated("the Authorization header must be 'Bearer <API key or token>'");
  }
  header.remove_prefix(7);
  while (!header.empty() && header.front() == ' ') header.remove_prefix(1);
  return FromCredential(header);
}

Result<Principal> Authenticator::FromCredential(std::string_view credential) const {
  if (credential.empty()) return Status::Unauthenticated("empty credential");
  if (credential.substr(0, kApiKeyPrefix.size()) == kApiKeyPrefix || credential.find('.') == std::string_view::npos) {
    return keys_.Authenticate(credential);
  }
  CAIRN_ASSIGN_OR_RETURN(TokenClaims claims, jwt_->Verify(credential, clock_.NowMicros() / 1'000'000));
  // A token outlives nothing it names: a tenant that is gone (never, today) refuses it.
  if (!keys_.TenantExists(claims.tenant)) return Status::Unauthenticated("the token's tenant does not exist");
  // Nor a key that was revoked: its tokens stop working with it (DELETE /tenants/{t}/keys/{id}).
  if (!claims.key_id.empty() && !keys_.KeyIsLive(claims.key_id)) {
    return Status::Unauthenticated("the API key this token was made from has been revoked");
  }
  return Principal{std::move(claims.tenant), std::move(claims.subject), std::move(claims.roles), claims.system_admin,
                   std::move(claims.key_id)};
}

Result<IssuedToken> Authenticator::IssueToken(std::string_view api_key) const {
  CAIRN_ASSIGN_OR_RETURN(Principal principal, keys_.Authenticate(api_key));
  TokenClaims claims;
  claims.subject = principal.id;
  claims.tenant = principal.tenant;
  claims.roles = principal.roles;
  claims.system_admin = principal.system_admin;
  claims.key_id = principal.key_id;
  claims.issued_at = clock_.NowMicros() / 1'000'000;
  claims.expires_at = claims.issued_at + token_ttl_seconds_;
  return IssuedToken{jwt_->Sign(claims), token_ttl_seconds_, std::string(jwt_->algorithm())};
}

}  // namespace cairn::auth
