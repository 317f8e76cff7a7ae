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

// Fixed findings whose predicates the targets still assert never to hold again:
// F1 "non-finite-json": ParseJson accepted numbers that overflow a double (1e400 as infinity, 0e400
// as NaN), which the store wrote as `Infinity`/`NaN`; it now refuses them.
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

// F9 "subscription-default-key": a subscription without a key took its schema name unchecked (over
// 128 bytes, or "trigger"); keys now take up to 256 bytes and "trigger" must be named. Asserted.
inline bool BreaksKeyRules(const std::string& key) { return key.size() > 256 || key == "trigger"; }

}  // namespace cairn::fuzz
