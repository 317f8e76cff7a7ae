// Base64 (RFC 4648): the one encoder (CEL bytes, JWS parts, the forms SecretRedactor looks for).
#pragma once

#include <string>
#include <string_view>

namespace cairn {

// Base64 (RFC 4648 §4, with padding) of `bytes`.
std::string Base64Encode(std::string_view bytes);
// `base64` in the URL alphabet ('-' and '_' for '+' and '/'), padding kept as it is.
std::string ToUrlAlphabet(std::string base64);
// `base64` without its trailing '=' padding.
std::string WithoutPadding(std::string base64);
// Base64url without padding (RFC 4648 §5), as JWS uses it.
inline std::string Base64UrlEncode(std::string_view bytes) { return WithoutPadding(ToUrlAlphabet(Base64Encode(bytes))); }

}  // namespace cairn
