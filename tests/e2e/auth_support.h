// A server with --auth=on, a bootstrap admin key and a known HS256 secret, and helpers to make
// keys and Authorization headers (tests/e2e/auth_test.cpp, tenants_test.cpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "auth/jwt.h"
#include "e2e_support.h"

namespace cairn::e2e {

class AuthServerTest : public ServerTest {
 public:
  static constexpr const char* kBootstrapKey = "bootstrap-admin-key-0123456789abcdef";
  static constexpr const char* kJwtSecret = "jwt-secret-for-tests-0123456789abcdef";

 protected:
  std::vector<std::string> ServerArgs() const override {
    return {"--auth=on", "--bootstrap-admin-key", kBootstrapKey, "--jwt-secret", kJwtSecret};
  }
  // A new API key of `principal` in `tenant` (made by the bootstrap admin); "" and a test failure
  // if the server refuses.
  std::string KeyFor(const std::string& tenant, const std::string& principal, const std::vector<std::string>& roles);
  // A codec with the server's secret: to make tokens the server must accept (or, expired, refuse).
  const auth::JwtCodec& ServerCodec();
  static int64_t NowSeconds();

 private:
  std::unique_ptr<auth::JwtCodec> codec_;
};

// {"Authorization": "Bearer <credential>"}.
Headers Bearer(const std::string& credential);

}  // namespace cairn::e2e
