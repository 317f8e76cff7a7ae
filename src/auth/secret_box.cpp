#include "auth/secret_box.h"

#include <sodium.h>

#include "auth/key_registry.h"

namespace cairn::auth {
namespace {

bool InitSodium() {
  static const bool ready = sodium_init() >= 0;
  return ready;
}

std::string ToHex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

Result<std::string> KeyFromHex(std::string_view hex, const std::string& what) {
  while (!hex.empty() && (hex.back() == '\n' || hex.back() == '\r' || hex.back() == ' ')) hex.remove_suffix(1);
  if (hex.size() != 2 * crypto_secretbox_KEYBYTES) {
    return Status::InvalidArgument(what + " must be 64 hex characters (32 bytes; e.g. openssl rand -hex 32)");
  }
  std::string key(crypto_secretbox_KEYBYTES, '\0');
  size_t length = 0;
  if (sodium_hex2bin(reinterpret_cast<unsigned char*>(key.data()), key.size(), hex.data(), hex.size(), nullptr,
                     &length, nullptr) != 0 ||
      length != key.size()) {
    return Status::InvalidArgument(what + " must be 64 hex characters (32 bytes; e.g. openssl rand -hex 32)");
  }
  return key;
}

}  // namespace

Result<SecretBox> SecretBox::FromKey(std::string key) {
  if (!InitSodium()) return Status::Internal("libsodium could not be initialised");
  if (key.size() != crypto_secretbox_KEYBYTES) return Status::InvalidArgument("the master key must be 32 bytes");
  return SecretBox(std::move(key));
}

Result<std::string> SecretBox::Seal(std::string_view plaintext) const {
  std::string out(crypto_secretbox_NONCEBYTES + crypto_secretbox_MACBYTES + plaintext.size(), '\0');
  auto* nonce = reinterpret_cast<unsigned char*>(out.data());
  randombytes_buf(nonce, crypto_secretbox_NONCEBYTES);
  if (crypto_secretbox_easy(nonce + crypto_secretbox_NONCEBYTES,
                            reinterpret_cast<const unsigned char*>(plaintext.data()), plaintext.size(), nonce,
                            reinterpret_cast<const unsigned char*>(key_.data())) != 0) {
    return Status::Internal("sealing a secret failed");
  }
  return out;
}

Result<std::string> SecretBox::Open(std::string_view sealed) const {
  if (sealed.size() < crypto_secretbox_NONCEBYTES + crypto_secretbox_MACBYTES) {
    return Status::Internal("a stored secret is truncated");
  }
  std::string out(sealed.size() - crypto_secretbox_NONCEBYTES - crypto_secretbox_MACBYTES, '\0');
  const auto* nonce = reinterpret_cast<const unsigned char*>(sealed.data());
  if (crypto_secretbox_open_easy(reinterpret_cast<unsigned char*>(out.data()), nonce + crypto_secretbox_NONCEBYTES,
                                 sealed.size() - crypto_secretbox_NONCEBYTES, nonce,
                                 reinterpret_cast<const unsigned char*>(key_.data())) != 0) {
    return Status::Internal("a stored secret does not open with the master key (another key, or altered)");
  }
  return out;
}

Result<std::string> ParseMasterKey(std::string_view hex, const std::string& what) { return KeyFromHex(hex, what); }

Result<std::string> NewMasterKeyHex() {
  CAIRN_ASSIGN_OR_RETURN(std::string key, RandomBytes(crypto_secretbox_KEYBYTES));
  return ToHex(key);
}

}  // namespace cairn::auth
