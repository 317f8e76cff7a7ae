#include "auth_support.h"

#include <chrono>

namespace cairn::e2e {

Headers Bearer(const std::string& credential) { return {{"Authorization", "Bearer " + credential}}; }

std::string AuthServerTest::KeyFor(const std::string& tenant, const std::string& principal,
                                   const std::vector<std::string>& roles) {
  json::array role_names(roles.begin(), roles.end());
  Response r = client().Post("/tenants/" + tenant + "/keys",
                             JsonText(json::object{{"principal", principal}, {"roles", std::move(role_names)}}),
                             Bearer(kBootstrapKey));
  EXPECT_EQ(r.status, 201) << r.Describe();
  return r.status == 201 ? StringAt(ObjectOf(r), "key") : "";
}

const auth::JwtCodec& AuthServerTest::ServerCodec() {
  if (!codec_) codec_ = std::move(auth::JwtCodec::Hs256(kJwtSecret)).value();
  return *codec_;
}

int64_t AuthServerTest::NowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace cairn::e2e
