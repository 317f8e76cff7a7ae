// Boost's assertion handler for the fuzz build (BOOST_ENABLE_ASSERT_HANDLER, fuzz_build.cmake):
// a failed BOOST_ASSERT aborts as assert() would — a crash libFuzzer records — except one known
// assertion of Boost 1.81's Beast that is wrong, not the code it guards.
//
// F8 (known_findings.h): parse_chunk_header asserts n >= 5 when it re-enters after a final chunk ("0\r\n") whose trailer
// has not arrived; four bytes are legal when the client sends one byte at a time ("0\r\n\r" then
// "\n"). The code after it only looks for the end of the trailer, and release builds (NDEBUG) run
// it. Fixed upstream in Beast (boostorg/beast pull request 2861); drop this once Boost has it.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "known_findings.h"

namespace {

bool KnownWrongAssertion(const char* expr, const char* function) {
  return cairn::fuzz::KnownFinding(cairn::fuzz::kBeastFinalChunkAssert,
                                   std::strcmp(expr, "n >= 5") == 0 && std::strstr(function, "parse_chunk_header"));
}

[[noreturn]] void Fail(const char* expr, const char* msg, const char* function, const char* file, long line) {
  std::fprintf(stderr, "\nBoost assertion failed: %s%s%s\n  in %s\n  at %s:%ld\n", expr, msg ? ": " : "", msg ? msg : "",
               function, file, line);
  std::abort();
}

}  // namespace

namespace boost {

void assertion_failed(const char* expr, const char* function, const char* file, long line) {
  if (KnownWrongAssertion(expr, function)) return;
  Fail(expr, nullptr, function, file, line);
}

void assertion_failed_msg(const char* expr, const char* msg, const char* function, const char* file, long line) {
  Fail(expr, msg, function, file, line);
}

}  // namespace boost
