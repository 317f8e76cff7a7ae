#include "base/uuid.h"

#include <cctype>

namespace cairn {

UuidV7Generator::UuidV7Generator(const Clock& clock, uint64_t seed)
    : clock_(clock), rng_(seed != 0 ? seed : std::random_device{}()) {
  if (seed == 0) rng_.seed((static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}());
}

std::string UuidV7Generator::Next() {
  uint64_t ms;
  uint32_t counter;
  uint64_t random;
  {
    std::lock_guard lock(mu_);
    int64_t now_ms = clock_.NowMicros() / 1000;
    if (now_ms > last_ms_) {
      last_ms_ = now_ms;
      counter_ = static_cast<uint32_t>(rng_() & 0x3FF);  // leave headroom for increments
    } else if (++counter_ > 0xFFF) {
      ++last_ms_;  // counter overflow or clock stepped back: borrow the next millisecond
      counter_ = 0;
    }
    ms = static_cast<uint64_t>(last_ms_);
    counter = counter_;
    random = rng_();
  }
  uint8_t bytes[16];
  for (int i = 0; i < 6; ++i) bytes[i] = static_cast<uint8_t>(ms >> (40 - 8 * i));
  bytes[6] = static_cast<uint8_t>(0x70 | ((counter >> 8) & 0x0F));
  bytes[7] = static_cast<uint8_t>(counter & 0xFF);
  bytes[8] = static_cast<uint8_t>(0x80 | ((random >> 56) & 0x3F));
  for (int i = 9; i < 16; ++i) bytes[i] = static_cast<uint8_t>(random >> (8 * (15 - i)));
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(36);
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    out.push_back(kHex[bytes[i] >> 4]);
    out.push_back(kHex[bytes[i] & 0x0F]);
  }
  return out;
}

bool IsUuidString(std::string_view text) {
  if (text.size() != 36) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    bool dash = (i == 8 || i == 13 || i == 18 || i == 23);
    if (dash ? text[i] != '-' : !std::isxdigit(static_cast<unsigned char>(text[i]))) return false;
  }
  return true;
}

}  // namespace cairn
