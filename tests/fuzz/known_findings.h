// Findings the fuzzers made that are reported and not fixed yet (README.md, "Known findings").
// An input that reaches one is let through, with a note on stderr the first time, so that a run
// keeps looking for new findings instead of stopping at a known one. Each finding keeps its
// reproducer in tests/fuzz/findings/. When the fix lands: delete the check here and where it is
// used, and move the reproducer into the corpus, where it guards the fix.
#pragma once

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <set>
#include <string>
#include <string_view>

namespace cairn::fuzz {

// True when `reached`, with a note on stderr the first time `id` is reached.
inline bool KnownFinding(std::string_view id, bool reached) {
  static std::set<std::string_view> noted;
  if (reached && noted.insert(id).second) {
    std::fprintf(stderr, "known finding reached (not a new one): %.*s\n", static_cast<int>(id.size()), id.data());
  }
  return reached;
}

// F1 "non-finite-json": ParseJson accepts numbers that overflow a double: 1e400 is infinity, and
// Boost 1.81 reads a zero with a large exponent (0e400, 0.0e309) as NaN. Boost.JSON writes them as
// `Infinity` / `NaN`, which are not JSON: a stored context or selector holding one cannot be read
// back, its checksum covers non-JSON, and SQLite's JSON functions fail on the row ("malformed
// JSON", so every context_match list over that tenant fails). A NaN rule value compared with an
// integer casts NaN to int64 in CompareIntDouble (context_rule_eval.cpp): undefined behaviour.
// Fixed by making ParseJson refuse non-finite numbers, NaN included (in progress).
inline bool HoldsNonFiniteNumber(const boost::json::value& v) {
  if (v.is_double()) return !std::isfinite(v.get_double());
  if (v.is_array()) {
    for (const auto& item : v.get_array()) {
      if (HoldsNonFiniteNumber(item)) return true;
    }
  }
  if (v.is_object()) {
    for (const auto& member : v.get_object()) {
      if (HoldsNonFiniteNumber(member.value())) return true;
    }
  }
  return false;
}
inline constexpr std::string_view kNonFiniteJson = "F1 non-finite-json";

// F2 "sql-expression-depth": BuildListQuery unrolls an eq/ne/in/contains value into one SQL term
// per array element or object member, chained with AND; from about 990 elements SQLite refuses
// the statement ("Expression tree is too large (maximum depth 1000)") and the list answers 500.
inline constexpr std::string_view kSqlExpressionDepth = "F2 sql-expression-depth";

// F3 "ttl-past-9999": ParseRfc3339Micros accepts times that land after 9999-12-31T23:59:59Z
// ("9999-12-31T23:59:60Z", or a negative offset on the last day) and FormatRfc3339Micros clamps
// the year to 9999 without carrying the rest: a ttl of 10000-01-01T00:00:30Z is shown as
// "9999-01-01T00:00:30.000000Z", a different and earlier time that re-parses to another ttl.
inline constexpr int64_t kLastFourDigitYearMicros = 253'402'300'799'999'999;  // 9999-12-31T23:59:59.999999Z
inline constexpr std::string_view kTtlPast9999 = "F3 ttl-past-9999";

// F4 "sql-escaped-keys": for an eq/ne/in/contains value holding an object, BuildListQuery names
// each member by a quoted JSON path label; SQLite compares the label with the key as written in
// the stored text, so a key that JSON escapes — '"' (documented in query_builder.cpp), '\\' or a
// control character — never matches in GET /breadcrumbs, while selectors (streams, webhooks,
// executors) match it in memory.
inline bool HoldsKeyJsonEscapes(const boost::json::value& v) {
  if (v.is_array()) {
    for (const auto& item : v.get_array()) {
      if (HoldsKeyJsonEscapes(item)) return true;
    }
  }
  if (v.is_object()) {
    for (const auto& member : v.get_object()) {
      for (char c : member.key()) {
        if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20) return true;
      }
      if (HoldsKeyJsonEscapes(member.value())) return true;
    }
  }
  return false;
}
inline constexpr std::string_view kSqlEscapedKeys = "F4 sql-escaped-keys";

// F5 "double-drift" (Boost 1.81 Boost.JSON): number parsing is not correctly rounded (1.81 has no
// precise mode), so a double written with the shortest round-trip digits can read back one ulp
// off: -9223372036854736854775808 is stored as -9.223372036854737E24 and reads back as
// -9.223372036854736E24. The stored context differs from the accepted one, the record's checksum
// (of the accepted one) no longer matches what GET returns, and each rewrite can move it again.
inline bool HoldsDriftingDouble(const boost::json::value& v) {
  if (v.is_double()) {
    boost::system::error_code ec;
    boost::json::value back = boost::json::parse(boost::json::serialize(v), ec);
    return !ec && !(back == v);
  }
  if (v.is_array()) {
    for (const auto& item : v.get_array()) {
      if (HoldsDriftingDouble(item)) return true;
    }
  }
  if (v.is_object()) {
    for (const auto& member : v.get_object()) {
      if (HoldsDriftingDouble(member.value())) return true;
    }
  }
  return false;
}
inline constexpr std::string_view kDoubleDrift = "F5 double-drift";

// F6 "header-limit-slack" (Boost 1.81 Beast): header_limit bounds the request line and the header
// fields each, not together, when they arrive in one read: --max-header-bytes 16384 lets through
// headers of up to about 32 KiB from a fast client and refuses them (431) from a slow one.
inline constexpr std::string_view kHeaderLimitSlack = "F6 header-limit-slack";

// F7 "unbounded-chunk-lines" (Boost 1.81 Beast): a chunk-size line (its extensions) and the
// trailer after the last chunk count against no limit: the parser keeps asking for more and the
// session's buffer grows with what the client sends until the idle timeout ends the read. Beast
// bounds chunk headers since (boostorg/beast pull request 3077).
inline constexpr std::string_view kUnboundedChunkLines = "F7 unbounded-chunk-lines";

// F8 "beast-final-chunk-assert" (Boost 1.81 Beast): an assertion in parse_chunk_header fails when
// a final chunk arrives a byte at a time; debug builds of the server (`make test`) abort. See
// boost_assert_handler.cpp.
inline constexpr std::string_view kBeastFinalChunkAssert = "F8 beast-final-chunk-assert";

// F9 "subscription-default-key": ParseSubscriptions checks an explicit `key` (1 to 128 bytes, not
// "trigger"), but a subscription without one takes its selector's schema_name unchecked: up to
// 256 bytes, or "trigger" — then ContextAssembler puts the fetched records over the trigger
// (context["trigger"]). SubscriptionToJson of such an entry does not parse back.
inline bool BreaksKeyRules(const std::string& key) { return key.size() > 128 || key == "trigger"; }
inline constexpr std::string_view kSubscriptionDefaultKey = "F9 subscription-default-key";

}  // namespace cairn::fuzz
