#include "auth/jwt.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

namespace cairn::auth {
namespace {

constexpr int64_t kNow = 1'800'000'000;

TokenClaims Claims() {
  TokenClaims c;
  c.subject = "alice";
  c.tenant = "acme";
  c.roles = {Role::kDeveloper, Role::kReader};
  c.issued_at = kNow;
  c.expires_at = kNow + 60;
  return c;
}

std::unique_ptr<JwtCodec> Hs(std::string secret = std::string(32, 'k')) { return std::move(JwtCodec::Hs256(secret)).value(); }

std::string PemOf(const char* type, int bits = 0) {
  EVP_PKEY* key = bits ? EVP_PKEY_Q_keygen(nullptr, nullptr, type, static_cast<size_t>(bits))
                       : EVP_PKEY_Q_keygen(nullptr, nullptr, type);
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long size = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<size_t>(size));
  BIO_free(bio);
  EVP_PKEY_free(key);
  return pem;
}

TEST(Base64UrlTest, RoundTripsEveryLength) {
  std::string bytes;
  for (int i = 0; i < 40; ++i) {
    auto decoded = Base64UrlDecode(Base64UrlEncode(bytes));
    ASSERT_TRUE(decoded);
    EXPECT_EQ(*decoded, bytes);
    bytes.push_back(static_cast<char>(i * 37));
  }
  EXPECT_EQ(Base64UrlEncode("\xfb\xff"), "-_8");
  EXPECT_FALSE(Base64UrlDecode("ab=c"));
  EXPECT_FALSE(Base64UrlDecode("abcde"));
}

TEST(JwtTest, Hs256RoundTripsTheClaims) {
  auto codec = Hs();
  auto claims = codec->Verify(codec->Sign(Claims()), kNow);
  ASSERT_TRUE(claims.ok()) << claims.status().ToString();
  EXPECT_EQ(claims->subject, "alice");
  EXPECT_EQ(claims->tenant, "acme");
  EXPECT_EQ(claims->roles, (std::vector<Role>{Role::kDeveloper, Role::kReader}));
  EXPECT_FALSE(claims->system_admin);
  EXPECT_EQ(claims->expires_at, kNow + 60);
}

TEST(JwtTest, RefusesExpiredForgedAndMalformedTokens) {
  auto codec = Hs();
  std::string token = codec->Sign(Claims());
  EXPECT_EQ(codec->Verify(token, kNow + 60).status().code(), StatusCode::kUnauthenticated);  // exp is exclusive
  EXPECT_EQ(Hs(std::string(32, 'x'))->Verify(token, kNow).status().code(), StatusCode::kUnauthenticated);
  // A changed payload (another tenant) with the old signature.
  size_t first = token.find('.'), second = token.rfind('.');
  TokenClaims other = Claims();
  other.tenant = "other";
  std::string forged_payload = codec->Sign(other);
  std::string forged = token.substr(0, first) + forged_payload.substr(forged_payload.find('.'), forged_payload.rfind('.') - forged_payload.find('.')) + token.substr(second);
  auto refused = codec->Verify(forged, kNow);
  EXPECT_EQ(refused.status().code(), StatusCode::kUnauthenticated);
  EXPECT_NE(refused.status().message().find("bad signature"), std::string::npos);
  for (const char* bad : {"", "a.b", "a.b.c.d", "!!.b.c", "e30.e30.", "x"}) {
    EXPECT_EQ(codec->Verify(bad, kNow).status().code(), StatusCode::kUnauthenticated) << bad;
  }
}

TEST(JwtTest, RefusesAlgNoneAndOtherAlgorithms) {
  auto codec = Hs();
  std::string token = codec->Sign(Claims());
  std::string payload = token.substr(token.find('.') + 1, token.rfind('.') - token.find('.') - 1);
  std::string none = Base64UrlEncode(R"({"alg":"none","typ":"JWT"})") + "." + payload + ".";
  auto refused = codec->Verify(none, kNow);
  EXPECT_EQ(refused.status().code(), StatusCode::kUnauthenticated);
  EXPECT_NE(refused.status().message().find("HS256"), std::string::npos);
}

TEST(JwtTest, Rs256AndEdDsaSignAndVerify) {
  for (auto [type, bits, alg] : {std::tuple{"RSA", 2048, "RS256"}, std::tuple{"ED25519", 0, "EdDSA"}}) {
    auto codec = JwtCodec::FromPrivateKeyPem(PemOf(type, bits));
    ASSERT_TRUE(codec.ok()) << codec.status().ToString();
    EXPECT_EQ((*codec)->algorithm(), alg);
    std::string token = (*codec)->Sign(Claims());
    EXPECT_TRUE((*codec)->Verify(token, kNow).ok()) << alg;
    // Another key of the same kind does not verify it; neither does an HS256 codec.
    auto other = JwtCodec::FromPrivateKeyPem(PemOf(type, bits));
    EXPECT_EQ((*other)->Verify(token, kNow).status().code(), StatusCode::kUnauthenticated);
    EXPECT_EQ(Hs()->Verify(token, kNow).status().code(), StatusCode::kUnauthenticated);
  }
}

TEST(JwtTest, RefusesWeakOrUnknownKeys) {
  EXPECT_EQ(JwtCodec::Hs256("short").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(JwtCodec::FromPrivateKeyPem("not a key").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(JwtCodec::FromPrivateKeyPem(PemOf("RSA", 1024)).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace cairn::auth
