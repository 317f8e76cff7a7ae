// cel_fuzz: the input as a CEL expression — compiled (as a trigger condition or template would
// be) for a few declared variables, and when accepted evaluated against a fixed activation.
//
// Properties, besides no sanitizer report and no stack overflow (the depth limit holds):
//   - compilation is deterministic: twice the same outcome, message and referenced variables;
//   - type checking only refuses: what compiles checked compiles unchecked, and evaluates to the
//     same value either way (the checker resolves, it does not change meaning);
//   - evaluation is deterministic and stays within the limits: a string, bytes, list or map
//     result is no larger than the configured bounds; the cost budget ends every evaluation;
//   - the outcomes agree: EvaluateBool succeeds exactly when the value is a bool, EvaluateJson
//     fails on error values;
//   - variables the program does not reference are never loaded.
#include <boost/json/parse.hpp>

#include <string>

#include "cel/program.h"
#include "fuzz_check.h"

namespace {
namespace json = boost::json;
namespace cel = cairn::cel;

const cel::Declarations kDeclarations = {{"record"}, {"item"}, {"index", cel::Type::kInt}, {"before"}};

cel::CompileOptions Options(bool type_check) {
  cel::CompileOptions options;
  options.limits.max_cost = 20'000;
  options.limits.max_string_bytes = 4096;
  options.limits.max_collection_size = 512;
  options.type_check = type_check;
  return options;
}

const json::value& Record() {
  static const json::value record = json::parse(R"({
    "context": {"status": "done", "priority": 4, "owner": "ada", "ratio": 0.5, "big": 18446744073709551615,
                "items": [{"id": 1, "done": true}, {"id": 2, "done": false}, {"id": 3, "done": true}],
                "due": "2026-11-24T10:00:00Z", "nested": {"a": {"b": [1, [2, [3]]]}}, "none": null},
    "tags": ["urgent", "x"], "schema_name": "task.v1"})");
  return record;
}

// A rendering that tells results apart (NaN included, as text).
std::string Describe(const cel::Value& v) { return v.is_error() ? "error" : cel::DebugString(v); }

struct Outcome {
  std::string description;
  int loads_of_before = 0;
};

Outcome Evaluate(const cel::Program& program, const cel::Limits& limits) {
  static const json::value item = "order-1234";
  static const json::value index = 2;
  cel::Activation activation;
  int loads = 0;
  activation.Bind("record", &Record()).Bind("item", &item).Bind("index", &index);
  activation.BindLazy("before", [&]() -> cairn::Result<json::value> {
    ++loads;
    return json::parse(R"({"context": {"status": "open"}})");
  });
  cel::Value v = program.Evaluate(activation);
  switch (v.kind()) {
    case cel::Kind::kString:
    case cel::Kind::kBytes:
      FUZZ_CHECK(v.text().size() <= limits.max_string_bytes, program.source());
      break;
    case cel::Kind::kList:
    case cel::Kind::kMap:
      FUZZ_CHECK(v.size() <= limits.max_collection_size, program.source());
      break;
    default: break;
  }
  FUZZ_CHECK(loads <= 1, "a lazy variable loaded twice");
  FUZZ_CHECK(loads == 0 || program.References("before"), "an unreferenced variable was loaded");
  auto as_bool = program.EvaluateBool(activation);
  FUZZ_CHECK(as_bool.ok() == (v.kind() == cel::Kind::kBool), program.source());
  auto as_json = program.EvaluateJson(activation);
  if (v.is_error()) FUZZ_CHECK(!as_json.ok(), program.source());
  return {Describe(v), loads};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, size_t size) {
  std::string_view source = cairn::fuzz::AsText(data, size);
  cel::CompileOptions checked = Options(true);
  auto first = cel::Program::Compile(source, kDeclarations, checked);
  auto second = cel::Program::Compile(source, kDeclarations, checked);
  FUZZ_CHECK(first.ok() == second.ok(), "compile is not deterministic");
  if (!first.ok()) {
    FUZZ_CHECK(first.status().message() == second.status().message(), first.status().message());
    return 0;
  }
  FUZZ_CHECK(first->referenced_variables() == second->referenced_variables(), "referenced variables differ");
  auto unchecked = cel::Program::Compile(source, kDeclarations, Options(false));
  FUZZ_CHECK(unchecked.ok(), "accepted checked, refused unchecked: " + unchecked.status().message());

  Outcome a = Evaluate(*first, checked.limits);
  Outcome b = Evaluate(*first, checked.limits);
  FUZZ_CHECK(a.description == b.description, a.description + " vs " + b.description);
  Outcome c = Evaluate(*unchecked, checked.limits);
  FUZZ_CHECK(a.description == c.description, "checked " + a.description + " vs unchecked " + c.description);
  return 0;
}
