// SecretBox: authenticated encryption of secret values at rest (libsodium's crypto_secretbox:
// XSalsa20-Poly1305, a random 24-byte nonce per value) under the server's 32-byte master key.
//
// The master key comes from the master_key setting (CAIRN_MASTER_KEY: 64 hex characters) or,
// without it, from <data-dir>/master.key (64 hex characters), created 0600 with a random key at
// the first start (src/app/auth_setup.cpp). Losing that file loses every secret; a wrong key makes
// Open() fail (kInternal naming no value), never returns garbage.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace cairn::auth {

class SecretBox {
 public:
  // `key` is the 32 raw key bytes; any other size is kInvalidArgument.
  static Result<SecretBox> FromKey(std::string key);

  // nonce || ciphertext (with its 16-byte tag).
  Result<std::string> Seal(std::string_view plaintext) const;
  // The plaintext of Seal's output; kInternal if it was not sealed with this key or was altered.
  Result<std::string> Open(std::string_view sealed) const;

 private:
  explicit SecretBox(std::string key) : key_(std::move(key)) {}
  std::string key_;
};

// The 32 key bytes of a master key written as 64 hex characters (trailing whitespace ignored);
// anything else kInvalidArgument naming `what` (the setting or file it came from).
Result<std::string> ParseMasterKey(std::string_view hex, const std::string& what);
// A new random master key as 64 hex characters (what <data-dir>/master.key holds).
Result<std::string> NewMasterKeyHex();

}  // namespace cairn::auth
