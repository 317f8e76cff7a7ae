#include "auth/jwt.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include <array>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

namespace cairn::auth {
namespace json = boost::json;
namespace {

constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
// Longest token Verify() looks at: cairn's are a few hundred bytes.
constexpr size_t kMaxTokenBytes = 8192;

class HmacCodec final : public JwtCodec {
 public:
  explicit HmacCodec(std::string secret) : secret_(std::move(secret)) {}
  std::string_view algorithm() const override { return "HS256"; }

 protected:
  std::string SignBytes(std::string_view input) const override {
    std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
    unsigned int size = 0;
    HMAC(EVP_sha256(), secret_.data(), static_cast<int>(secret_.size()), reinterpret_cast<const unsigned char*>(input.data()),
         input.size(), mac.data(), &size);
    return std::string(reinterpret_cast<const char*>(mac.data()), size);
  }
  bool VerifyBytes(std::string_view input, std::string_view signature) const override {
    std::string expected = SignBytes(input);
    return signature.size() == expected.size() && CRYPTO_memcmp(signature.data(), expected.data(), expected.size()) == 0;
  }

 private:
  std::string secret_;
};

struct PkeyDeleter {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
struct MdCtxDeleter {
  void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyDeleter>;
using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, MdCtxDeleter>;

// RS256 (RSASSA-PKCS1-v1_5 with SHA-256) or EdDSA (Ed25519, no digest).
class KeyPairCodec final : public JwtCodec {
 public:
  KeyPairCodec(PkeyPtr key, bool ed25519) : key_(std::move(key)), ed25519_(ed25519) {}
  std::string_view algorithm() const override { return ed25519_ ? "EdDSA" : "RS256"; }

 protected:
  std::string SignBytes(std::string_view input) const override {
    MdCtxPtr ctx(EVP_MD_CTX_new());
    size_t size = 0;
    const auto* data = reinterpret_cast<const unsigned char*>(input.data());
    if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, Digest(), nullptr, key_.get()) != 1 ||
        EVP_DigestSign(ctx.get(), nullptr, &size, data, input.size()) != 1) {
      return {};
    }
    std::string signature(size, '\0');
    if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(signature.data()), &size, data, input.size()) != 1) return {};
    signature.resize(size);
    return signature;
  }
  bool VerifyBytes(std::string_view input, std::string_view signature) const override {
    MdCtxPtr ctx(EVP_MD_CTX_new());
    return ctx && EVP_DigestVerifyInit(ctx.get(), nullptr, Digest(), nullptr, key_.get()) == 1 &&
           EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(signature.data()), signature.size(),
                            reinterpret_cast<const unsigned char*>(input.data()), input.size()) == 1;
  }

 private:
  const EVP_MD* Digest() const { return ed25519_ ? nullptr : EVP_sha256(); }
  PkeyPtr key_;
  bool ed25519_;
};

Status Refused(const std::string& why) { return Status::Unauthenticated("invalid token: " + why); }

Result<json::object> DecodeJsonPart(std::string_view part, const char* what) {
  auto bytes = Base64UrlDecode(part);
  if (!bytes) return Refused(std::string(what) + " is not base64url");
  boost::system::error_code ec;
  json::value value = json::parse(*bytes, ec);
  if (ec || !value.is_object()) return Refused(std::string(what) + " is not a JSON object");
  return std::move(value.as_object());
}

Result<TokenClaims> ClaimsFrom(const json::object& payload) {
  TokenClaims claims;
  const auto* sub = payload.if_contains("sub");
  const auto* tenant = payload.if_contains("tenant");
  const auto* roles = payload.if_contains("roles");
  const auto* exp = payload.if_contains("exp");
  if (!sub || !sub->is_string() || !tenant || !tenant->is_string() || !roles || !roles->is_array() || !exp ||
      !exp->is_int64()) {
    return Refused("claims sub, tenant, roles and exp are required");
  }
  claims.subject = std::string(sub->as_string());
  claims.tenant = std::string(tenant->as_string());
  for (const auto& role : roles->as_array()) {
    auto parsed = role.is_string() ? ParseRole(std::string_view(role.as_string())) : std::nullopt;
    if (!parsed) return Refused("unknown role in claims");
    claims.roles.push_back(*parsed);
  }
  claims.expires_at = exp->as_int64();
  if (const auto* iat = payload.if_contains("iat"); iat && iat->is_int64()) claims.issued_at = iat->as_int64();
  if (const auto* sys = payload.if_contains("sys"); sys && sys->is_bool()) claims.system_admin = sys->as_bool();
  if (const auto* kid = payload.if_contains("kid"); kid && kid->is_string()) claims.key_id = std::string(kid->as_string());
  return claims;
}

}  // namespace

std::optional<std::string> Base64UrlDecode(std::string_view text) {
  if (text.size() % 4 == 1) return std::nullopt;
  std::string out;
  out.reserve(text.size() * 3 / 4);
  uint32_t buffer = 0;
  int bits = 0;
  for (char c : text) {
    size_t value = kAlphabet.find(c);
    if (value == std::string_view::npos) return std::nullopt;
    buffer = (buffer << 6) | static_cast<uint32_t>(value);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buffer >> bits) & 0xff));
    }
  }
  return out;
}

Result<std::unique_ptr<JwtCodec>> JwtCodec::Hs256(std::string secret) {
  if (secret.size() < 32) return Status::InvalidArgument("the HS256 secret must be at least 32 bytes");
  return std::unique_ptr<JwtCodec>(std::make_unique<HmacCodec>(std::move(secret)));
}

Result<std::unique_ptr<JwtCodec>> JwtCodec::FromPrivateKeyPem(const std::string& pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
  PkeyPtr key(bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr);
  if (!key) return Status::InvalidArgument("the JWT key is not a PEM private key");
  if (EVP_PKEY_is_a(key.get(), "ED25519")) return std::unique_ptr<JwtCodec>(std::make_unique<KeyPairCodec>(std::move(key), true));
  if (EVP_PKEY_is_a(key.get(), "RSA")) {
    if (EVP_PKEY_get_bits(key.get()) < 2048) return Status::InvalidArgument("the JWT RSA key must have at least 2048 bits");
    return std::unique_ptr<JwtCodec>(std::make_unique<KeyPairCodec>(std::move(key), false));
  }
  return Status::InvalidArgument("the JWT key must be RSA (RS256) or Ed25519 (EdDSA)");
}

std::string JwtCodec::Sign(const TokenClaims& claims) const {
  json::array roles;
  for (Role role : claims.roles) roles.emplace_back(RoleName(role));
  json::object payload{{"sub", claims.subject}, {"tenant", claims.tenant}, {"roles", std::move(roles)},
                       {"iat", claims.issued_at}, {"exp", claims.expires_at}};
  if (claims.system_admin) payload["sys"] = true;
  if (!claims.key_id.empty()) payload["kid"] = claims.key_id;
  std::string input = Base64UrlEncode(json::serialize(json::object{{"alg", algorithm()}, {"typ", "JWT"}})) + "." +
                      Base64UrlEncode(json::serialize(payload));
  return input + "." + Base64UrlEncode(SignBytes(input));
}

Result<TokenClaims> JwtCodec::Verify(std::string_view token, int64_t now_seconds) const {
  if (token.size() > kMaxTokenBytes) return Refused("longer than " + std::to_string(kMaxTokenBytes) + " bytes");
  size_t first = token.find('.');
  size_t second = first == std::string_view::npos ? first : token.find('.', first + 1);
  if (second == std::string_view::npos || token.find('.', second + 1) != std::string_view::npos) {
    return Refused("not a compact JWS (header.payload.signature)");
  }
  CAIRN_ASSIGN_OR_RETURN(json::object header, DecodeJsonPart(token.substr(0, first), "header"));
  const auto* alg = header.if_contains("alg");
  if (!alg || !alg->is_string() || alg->as_string() != algorithm()) {
    return Refused("algorithm must be " + std::string(algorithm()));
  }
  auto signature = Base64UrlDecode(token.substr(second + 1));
  if (!signature || !VerifyBytes(token.substr(0, second), *signature)) return Refused("bad signature");
  CAIRN_ASSIGN_OR_RETURN(json::object payload, DecodeJsonPart(token.substr(first + 1, second - first - 1), "payload"));
  CAIRN_ASSIGN_OR_RETURN(TokenClaims claims, ClaimsFrom(payload));
  if (claims.expires_at <= now_seconds) return Status::Unauthenticated("token expired");
  return claims;
}

}  // namespace cairn::auth
