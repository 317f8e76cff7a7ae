// json_fuzz: a request body through the JSON entry point (ParseJson at the server's depth limit)
// and, when it parses, through what the store and the API do with a value:
//   - the store keeps serialize(value) and reads it back with ParseJson(…, 1000): the re-read
//     value must equal the first and give the same CanonicalJson, or the stored checksum
//     (sha256 of CanonicalJson) would stop matching the record it describes;
//   - CanonicalJson is a fixed point: it parses, and canonicalising that gives the same bytes;
//   - the depth limit is exact: accepted at 64 means JsonDepth <= 64, and refused as too deep
//     means deeper than 64;
//   - as a create or patch body (ParseDraft/ParsePatch): an accepted draft's views serialise the
//     same way through the fast path (SerializeContextView) and the plain one, and a ttl survives
//     formatting and re-parsing.
#include <boost/json/serialize.hpp>
#include <cstdint>
#include <string>

#include "base/json_util.h"
#include "base/time_format.h"
#include "fuzz_check.h"
#include "known_findings.h"
#include "model/breadcrumb_codec.h"
#include "model/limits.h"

namespace {
namespace json = boost::json;
using cairn::ParseJson;
using cairn::CanonicalJson;

constexpr size_t kStoreReadDepth = 1000;          // what src/store/sqlite reads stored JSON with
constexpr int64_t kNow = 1'750'000'000'000'000;   // a fixed "now": ttl checks stay deterministic

void CheckStoredRoundTrip(const json::value& value) {
  const std::string canonical = CanonicalJson(value);
  const std::string stored = json::serialize(value);
  auto reread = ParseJson(stored, kStoreReadDepth);
  FUZZ_CHECK(reread.ok(), "stored JSON does not parse back: " + stored + " -> " + reread.status().message());
  FUZZ_CHECK(*reread == value, "stored JSON parses back to another value: " + stored);
  const std::string recanonical = CanonicalJson(*reread);
  FUZZ_CHECK(recanonical == canonical, "checksum input changes after storing: " + canonical + " vs " + recanonical);

  auto again = ParseJson(canonical, kStoreReadDepth);
  FUZZ_CHECK(again.ok(), "canonical JSON does not parse: " + canonical);
  FUZZ_CHECK(CanonicalJson(*again) == canonical, "canonical JSON is not a fixed point: " + canonical);
}

void CheckAsBody(const json::value& value, const cairn::model::Limits& limits) {
  namespace model = cairn::model;
  (void)model::ParsePatch(value, limits, kNow);  // refusals and all: only sanitizer reports count
  auto draft = model::ParseDraft(value, limits, kNow);
  if (!draft.ok()) return;

  model::Breadcrumb crumb;
  crumb.id = "0190a000-0000-7000-8000-000000000000";
  crumb.schema_name = draft->schema_name;
  crumb.title = draft->title;
  crumb.description = draft->description;
  crumb.tags = draft->tags;
  crumb.context = draft->context;
  crumb.path = draft->path;
  crumb.llm_hints = draft->llm_hints;
  crumb.version = 1;
  crumb.checksum = cairn::Sha256Checksum(CanonicalJson(draft->context));
  crumb.ttl_micros = draft->ttl_micros;
  crumb.created_at = crumb.updated_at = kNow;

  const std::string fast = model::SerializeContextView(crumb);
  const std::string plain = json::serialize(model::ContextView(crumb));
  FUZZ_CHECK(fast == plain, "SerializeContextView differs from ContextView: " + fast + " vs " + plain);
  FUZZ_CHECK(ParseJson(fast, kStoreReadDepth).ok(), "the context view is not JSON: " + fast);
  FUZZ_CHECK(model::SerializeFullView(crumb) == json::serialize(model::FullView(crumb)), "full views differ");

  if (draft->ttl_micros) {
    std::string text = cairn::FormatRfc3339Micros(*draft->ttl_micros);
    auto back = cairn::ParseRfc3339Micros(text);
    FUZZ_CHECK(back && *back == *draft->ttl_micros, "ttl does not survive formatting: " + text);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = cairn::fuzz::AsText(data, size);
  const cairn::model::Limits limits;  // the server's defaults: max_json_depth 64
  auto parsed = ParseJson(text, limits.max_json_depth);
  if (!parsed.ok()) {
    FUZZ_CHECK(parsed.status().code() == cairn::StatusCode::kInvalidArgument, parsed.status().ToString());
    // Refused as too deep: it is deeper than the limit, not merely close to it.
    if (parsed.status().message().starts_with("JSON nested deeper")) {
      auto deep = ParseJson(text, kStoreReadDepth);
      FUZZ_CHECK(!deep.ok() || cairn::JsonDepth(*deep) > limits.max_json_depth, "refused a document within the limit");
    }
    return 0;
  }
  const json::value& value = *parsed;
  FUZZ_CHECK(cairn::JsonDepth(value) <= limits.max_json_depth, "accepted a document deeper than the limit");
  FUZZ_CHECK(!cairn::fuzz::HoldsNonFiniteNumber(value), "ParseJson accepted a non-finite number");
  if (!cairn::fuzz::KnownFinding(cairn::fuzz::kDoubleDrift, cairn::fuzz::HoldsDriftingDouble(value))) {
    CheckStoredRoundTrip(value);
  }
  CheckAsBody(value, limits);
  return 0;
}
