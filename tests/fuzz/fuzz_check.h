// How a fuzz target reports a broken property: what failed and the detail on stderr, then abort,
// which libFuzzer records as a crash and saves with the input that caused it.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace cairn::fuzz {

[[noreturn]] inline void PropertyFailed(const char* condition, const char* file, int line, std::string_view detail) {
  std::fprintf(stderr, "\nproperty failed: %s\n  at %s:%d\n  %.*s\n", condition, file, line,
               static_cast<int>(detail.size()), detail.data());
  std::abort();
}

// The input as text; libFuzzer hands over bytes.
inline std::string_view AsText(const unsigned char* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace cairn::fuzz

// FUZZ_CHECK(condition, detail): `detail` (anything convertible to std::string_view) is built only
// when the condition fails.
#define FUZZ_CHECK(condition, detail)                                                         \
  do {                                                                                        \
    if (!(condition)) ::cairn::fuzz::PropertyFailed(#condition, __FILE__, __LINE__, (detail)); \
  } while (0)
