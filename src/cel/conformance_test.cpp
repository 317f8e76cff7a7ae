// The cel-spec conformance suite (npm @bufbuild/cel-spec, dumped to JSON by
// tests/cel/spec-node/dump.js) run against cel::Program.
//
// Suites about protobuf messages, enums, wrappers, optionals and extension libraries are out of
// scope; inside the in-scope suites a test is skipped (and counted, with its reason) when it needs
// a container, protobuf values or declarations beyond variables. Each suite's pass count must not
// fall below conformance_baseline.json. Set CAIRN_CEL_CONFORMANCE_VERBOSE=1 to list every failing
// test, CAIRN_CEL_WRITE_BASELINE=1 to rewrite the baseline from this run.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "cel/program.h"

namespace cairn::cel {
namespace {

namespace json = boost::json;

const std::set<std::string> kInScopeSuites = {"basic",   "comparisons", "conversions", "fields",  "fp_math",
                                              "integer_math", "lists", "logic",       "macros",  "parse",
                                              "plumbing", "string",   "timestamps"};

std::string RunDump() {
  std::string command = std::string("node ") + CAIRN_CEL_SPEC_NODE_DIR + "/dump.js";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return "";
  std::string out;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  int rc = pclose(pipe);
  return rc == 0 ? out : "";
}

std::string DecodeBase64(std::string_view in) {
  auto index = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
  };
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    int v = index(c);
    if (v < 0) continue;
    acc = (acc << 6) | uint32_t(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(char((acc >> bits) & 0xFF));
    }
  }
  return out;
}

// A protobuf-JSON cel.expr.Value to a cel::Value; nullopt (with `why`) for what is out of scope.
std::optional<Value> FromProtoJson(const json::value& v, std::string* why) {
  const auto& o = v.as_object();
  if (auto* p = o.if_contains("int64Value")) {
    return Value::Int(p->is_string() ? std::stoll(std::string(p->as_string())) : p->to_number<int64_t>());
  }
  if (auto* p = o.if_contains("uint64Value")) {
    return Value::Uint(p->is_string() ? std::stoull(std::string(p->as_string())) : p->to_number<uint64_t>());
  }
  if (auto* p = o.if_contains("doubleValue")) {
    if (p->is_string()) {
      std::string s(p->as_string());
      if (s == "NaN") return Value::Double(std::nan(""));
      if (s == "Infinity") return Value::Double(INFINITY);
      if (s == "-Infinity") return Value::Double(-INFINITY);
      return Value::Double(std::stod(s));
    }
    return Value::Double(p->to_number<double>());
  }
  if (auto* p = o.if_contains("stringValue")) return Value::String(std::string(p->as_string()));
  if (auto* p = o.if_contains("bytesValue")) return Value::Bytes(DecodeBase64(p->as_string()));
  if (auto* p = o.if_contains("boolValue")) return Value::Bool(p->as_bool());
  if (o.contains("nullValue")) return Value::Null();
  if (auto* p = o.if_contains("listValue")) {
    ValueList items;
    if (auto* values = p->as_object().if_contains("values")) {
      for (const auto& item : values->as_array()) {
        auto converted = FromProtoJson(item, why);
        if (!converted) return std::nullopt;
        items.push_back(*converted);
      }
    }
    return Value::List(std::move(items));
  }
  if (auto* p = o.if_contains("mapValue")) {
    MapEntries entries;
    if (auto* list = p->as_object().if_contains("entries")) {
      for (const auto& entry : list->as_array()) {
        auto key = FromProtoJson(entry.at("key"), why);
        auto value = key ? FromProtoJson(entry.at("value"), why) : std::nullopt;
        if (!value) return std::nullopt;
        entries.emplace_back(*key, *value);
      }
    }
    return Value::Map(std::move(entries));
  }
  if (auto* p = o.if_contains("typeValue")) {
    static const std::map<std::string, TypeName> kTypes = {
        {"int", TypeName::kInt}, {"uint", TypeName::kUint}, {"double", TypeName::kDouble},
        {"bool", TypeName::kBool}, {"string", TypeName::kString}, {"bytes", TypeName::kBytes},
        {"list", TypeName::kList}, {"map", TypeName::kMap}, {"null_type", TypeName::kNull},
        {"type", TypeName::kType}, {"google.protobuf.Timestamp", TypeName::kTimestamp},
        {"google.protobuf.Duration", TypeName::kDuration}};
    auto it = kTypes.find(std::string(p->as_string()));
    if (it == kTypes.end()) {
      *why = "protobuf type value";
      return std::nullopt;
    }
    return Value::Type(it->second);
  }
  if (o.contains("objectValue")) {
    *why = "protobuf message value";
    return std::nullopt;
  }
  if (o.contains("enumValue")) {
    *why = "enum value";
    return std::nullopt;
  }
  *why = "unsupported value form";
  return std::nullopt;
}

std::optional<Type> DeclaredType(const json::value& type, std::string* why) {
  const auto& o = type.as_object();
  if (auto* p = o.if_contains("primitive")) {
    static const std::map<std::string, Type> kPrimitive = {
        {"INT64", Type::kInt}, {"UINT64", Type::kUint}, {"DOUBLE", Type::kDouble},
        {"STRING", Type::kString}, {"BYTES", Type::kBytes}, {"BOOL", Type::kBool}};
    auto it = kPrimitive.find(std::string(p->as_string()));
    if (it != kPrimitive.end()) return it->second;
  }
  if (auto* p = o.if_contains("wellKnown")) {
    if (p->as_string() == "TIMESTAMP") return Type::kTimestamp;
    if (p->as_string() == "DURATION") return Type::kDuration;
  }
  if (o.contains("listType")) return Type::kList;
  if (o.contains("mapType")) return Type::kMap;
  if (o.contains("dyn")) return Type::kDyn;
  if (o.contains("null")) return Type::kNull;
  *why = "declaration of a protobuf or abstract type";
  return std::nullopt;
}

// Same kind and value; NaN matches NaN (expected results are exact, not numerically equal).
bool StrictlyEqual(const Value& a, const Value& b) {
  if (a.kind() != b.kind()) return false;
  if (a.kind() == Kind::kDouble && std::isnan(a.double_value())) return std::isnan(b.double_value());
  if (a.kind() == Kind::kList) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!StrictlyEqual(a.ListAt(i), b.ListAt(i))) return false;
    }
    return true;
  }
  if (a.kind() == Kind::kMap) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      auto other = b.MapFind(a.MapKeyAt(i));
      if (!other || !StrictlyEqual(a.MapValueAt(i), *other)) return false;
    }
    return true;
  }
  return ValuesEqual(a, b);
}

struct SuiteCounts {
  int in_scope = 0;
  int passed = 0;
  std::map<std::string, int> skipped;  // reason -> count
  std::vector<std::string> failures;
};

// Runs one test: "" when it passes, the failure otherwise; sets `skip` for out-of-scope tests.
std::string RunOne(const json::object& t, std::string* skip) {
  if (t.contains("container")) return *skip = "needs a container (namespace)", "";
  if (t.contains("checkOnly") || t.contains("typedResult")) return *skip = "type deduction only", "";
  std::string expr(t.at("expr").as_string());
  if (expr.find("TestAllTypes") != std::string::npos || expr.find("proto.") != std::string::npos ||
      (expr.find("google.protobuf.") != std::string::npos && expr.find("google.protobuf.Timestamp") == std::string::npos &&
       expr.find("google.protobuf.Duration") == std::string::npos)) {
    return *skip = "protobuf message or type", "";
  }
  Declarations declarations;
  Activation activation;
  std::string why;
  if (auto* env = t.if_contains("typeEnv")) {
    for (const auto& decl : env->as_array()) {
      const auto& d = decl.as_object();
      if (!d.contains("ident")) return *skip = "function declaration", "";
      auto type = DeclaredType(d.at("ident").at("type"), &why);
      if (!type) return *skip = why, "";
      declarations.push_back({std::string(d.at("name").as_string()), *type});
    }
  }
  if (auto* bindings = t.if_contains("bindings")) {
    for (const auto& [name, binding] : bindings->as_object()) {
      auto value = FromProtoJson(binding.at("value"), &why);
      if (!value) return *skip = why, "";
      bool declared = false;
      for (const auto& d : declarations) declared = declared || d.name == name;
      if (!declared) declarations.push_back({std::string(name), Type::kDyn});
      activation.BindValue(std::string(name), *value);
    }
  }
  std::optional<Value> expected;
  bool expect_error = t.contains("evalError");
  if (auto* v = t.if_contains("value")) {
    expected = FromProtoJson(*v, &why);
    if (!expected) return *skip = why, "";
  } else if (!expect_error) {
    return *skip = "no value to compare (unknowns or check-only)", "";
  }
  CompileDiagnostic diagnostic;
  CompileOptions options;
  options.type_check = !t.contains("disableCheck");
  auto program = Program::Compile(expr, declarations, options, &diagnostic);
  if (!program.ok()) {
    if (diagnostic.message.find("not supported") != std::string::npos) {
      // Refused on purpose, with a message naming the feature: counted by that feature.
      const char* feature = diagnostic.message.find("qualified names") != std::string::npos ? "qualified names"
                            : diagnostic.message.find("optional") != std::string::npos   ? "optional syntax"
                            : diagnostic.message.find("message") != std::string::npos    ? "message construction"
                                                                                         : "other feature";
      return *skip = std::string("refused by design: ") + feature, "";
    }
    if (expect_error && t.contains("disableCheck")) return "";  // refused at compile time instead
    return "compile error: " + program.status().message();
  }
  Value got = program->Evaluate(activation);
  if (expect_error) return got.is_error() ? "" : "expected an error, got " + DebugString(got);
  if (got.is_error()) return "evaluation error: " + got.error_message();
  if (!StrictlyEqual(got, *expected)) return "got " + DebugString(got) + ", want " + DebugString(*expected);
  return "";
}

TEST(CelConformance, SuitesMeetTheirBaseline) {
  std::string dumped = RunDump();
  ASSERT_FALSE(dumped.empty()) << "could not dump the conformance tests: is node installed and "
                               << CAIRN_CEL_SPEC_NODE_DIR << "/node_modules present (scripts/install-deps)?";
  json::value all = json::parse(dumped);
  ASSERT_GT(all.as_array().size(), 1000u);
  std::map<std::string, SuiteCounts> suites;
  for (const auto& test : all.as_array()) {
    const auto& t = test.as_object();
    std::string suite(t.at("suite").as_string());
    if (!kInScopeSuites.count(suite)) continue;
    SuiteCounts& counts = suites[suite];
    std::string skip;
    std::string failure = RunOne(t, &skip);
    if (!skip.empty()) {
      ++counts.skipped[skip.substr(0, 60)];
      continue;
    }
    ++counts.in_scope;
    if (failure.empty()) {
      ++counts.passed;
    } else {
      counts.failures.push_back(std::string(t.at("section").as_string()) + "/" + std::string(t.at("name").as_string()) +
                                ": " + std::string(t.at("expr").as_string()).substr(0, 120) + " -> " + failure);
    }
  }
  ASSERT_EQ(suites.size(), kInScopeSuites.size()) << "some in-scope suites are missing from the dump";

  json::object baseline;
  if (std::ifstream in(CAIRN_CEL_BASELINE); in) {
    std::stringstream text;
    text << in.rdbuf();
    baseline = json::parse(text.str()).as_object();
  }
  bool verbose = std::getenv("CAIRN_CEL_CONFORMANCE_VERBOSE") != nullptr;
  int total_in_scope = 0, total_passed = 0;
  json::object current;
  std::printf("%-14s %9s %7s %8s  skipped reasons\n", "suite", "in scope", "passed", "skipped");
  for (const auto& [name, counts] : suites) {
    int skipped = 0;
    std::string reasons;
    for (const auto& [reason, n] : counts.skipped) {
      skipped += n;
      reasons += (reasons.empty() ? "" : "; ") + reason + " (" + std::to_string(n) + ")";
    }
    std::printf("%-14s %9d %7d %8d  %s\n", name.c_str(), counts.in_scope, counts.passed, skipped, reasons.c_str());
    total_in_scope += counts.in_scope;
    total_passed += counts.passed;
    current[name] = counts.passed;
    int floor = baseline.contains(name) ? int(baseline.at(name).to_number<int64_t>()) : 0;
    EXPECT_GE(counts.passed, floor) << "suite " << name << " passes fewer tests than its baseline";
    if (verbose || counts.passed < floor) {
      for (const auto& f : counts.failures) std::printf("  FAIL %s: %s\n", name.c_str(), f.c_str());
    }
  }
  std::printf("total: %d of %d in-scope tests pass (%.1f%%)\n", total_passed, total_in_scope,
              100.0 * total_passed / std::max(total_in_scope, 1));
  EXPECT_FALSE(baseline.empty()) << "no baseline at " << CAIRN_CEL_BASELINE;
  if (std::getenv("CAIRN_CEL_WRITE_BASELINE")) {
    std::ofstream out(CAIRN_CEL_BASELINE);
    out << json::serialize(current) << "\n";
  }
}

}  // namespace
}  // namespace cairn::cel
