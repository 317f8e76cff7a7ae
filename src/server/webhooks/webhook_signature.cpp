#include "server/webhooks/webhook_signature.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

namespace cairn::server::webhooks {

std::string HmacSha256Hex(std::string_view key, std::string_view data) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_len = 0;
  // An empty key is valid HMAC; OpenSSL wants a non-null pointer for it.
  static const unsigned char kEmpty = 0;
  const void* key_ptr = key.empty() ? static_cast<const void*>(&kEmpty) : key.data();
  HMAC(EVP_sha256(), key_ptr, static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
       data.size(), mac, &mac_len);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(mac_len * 2);
  for (unsigned int i = 0; i < mac_len; ++i) {
    hex.push_back(kHex[mac[i] >> 4]);
    hex.push_back(kHex[mac[i] & 0xf]);
  }
  return hex;
}

std::string SignatureHeader(std::string_view secret, std::string_view body) {
  return "sha256=" + HmacSha256Hex(secret, body);
}

}  // namespace cairn::server::webhooks
