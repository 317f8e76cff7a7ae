#include "base/random_id.h"

#include <random>

namespace cairn {

std::string RandomId(std::string_view prefix) {
  std::random_device device;
  std::mt19937_64 rng(device());
  static const char* kHex = "0123456789abcdef";
  std::string id(prefix);
  for (int i = 0; i < 24; ++i) id += kHex[rng() % 16];
  return id;
}

}  // namespace cairn
