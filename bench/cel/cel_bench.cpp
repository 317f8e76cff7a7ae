// ns per evaluation of five representative trigger conditions (conditions.json) over one event,
// its record and the record's previous version (data.json), each compiled once. Per iteration: a
// fresh Activation binding the three JSON documents by pointer, then EvaluateBool — what a
// trigger check costs per event. bench/cel/run.sh runs this beside cel-js/bench.mjs (the same
// conditions and data in @marcbachmann/cel-js) and prints the ratio.
#include <benchmark/benchmark.h>

#include <boost/json.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "cel/program.h"

namespace {

namespace json = boost::json;
namespace cel = cairn::cel;

json::value ReadJson(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str());
}

// The floor: each condition written by hand in C++ over the same Boost.JSON (no CEL, no error
// values, no bounds), so the figures show what is left to gain and what JSON lookups cost anyway.
using HandWritten = bool (*)(const json::value& event, const json::value& record, const json::value& before);
const json::value& Field(const json::value& v, std::string_view key) { return *v.as_object().if_contains(key); }
bool StatusTransition(const json::value&, const json::value& record, const json::value& before) {
  return Field(Field(record, "context"), "status").as_string() == "done" &&
         Field(Field(before, "context"), "status").as_string() != "done";
}
bool SchemaAndTag(const json::value& event, const json::value& record, const json::value&) {
  if (!Field(event, "schema_name").as_string().starts_with("task.")) return false;
  for (const auto& tag : Field(record, "tags").as_array()) {
    if (tag.as_string() == "urgent") return true;
  }
  return false;
}
bool PriorityOrOwner(const json::value&, const json::value& record, const json::value&) {
  const auto& context = Field(record, "context");
  return Field(context, "priority").to_number<double>() > 3 || Field(context, "owner").as_string() == "ada";
}
bool FilterSize(const json::value&, const json::value& record, const json::value&) {
  int done = 0;
  for (const auto& item : Field(Field(record, "context"), "items").as_array()) done += Field(item, "done").as_bool();
  return done >= 2;
}
bool TimestampCompare(const json::value&, const json::value& record, const json::value&) {
  // RFC 3339 UTC timestamps of one length compare as text; a real implementation would parse.
  return std::string_view(Field(Field(record, "context"), "due").as_string()) < "2027-01-01T00:00:00Z";
}
HandWritten FloorOf(std::string_view name) {
  if (name == "status_transition") return StatusTransition;
  if (name == "schema_and_tag") return SchemaAndTag;
  if (name == "priority_or_owner") return PriorityOrOwner;
  if (name == "filter_size") return FilterSize;
  if (name == "timestamp_compare") return TimestampCompare;
  return nullptr;
}

void RegisterConditions() {
  static const json::value data = ReadJson(CAIRN_CEL_BENCH_DIR "/data.json");
  static const json::value conditions = ReadJson(CAIRN_CEL_BENCH_DIR "/conditions.json");
  for (const auto& c : conditions.as_array()) {
    std::string name(c.at("name").as_string());
    std::string expr(c.at("expr").as_string());
    auto program = cel::Program::Compile(expr, {{"event"}, {"record"}, {"before"}});
    if (!program.ok()) {
      std::fprintf(stderr, "%s: %s\n", name.c_str(), program.status().message().c_str());
      std::exit(1);
    }
    benchmark::RegisterBenchmark(name.c_str(), [p = *program](benchmark::State& state) {
      const json::value* event = &data.at("event");
      const json::value* record = &data.at("record");
      const json::value* before = &data.at("before");
      for (auto _ : state) {
        cel::Activation activation;
        activation.Bind("event", event).Bind("record", record).Bind("before", before);
        auto matched = p.EvaluateBool(activation);
        if (!matched.ok() || !*matched) state.SkipWithError("the condition should hold on the data");
        benchmark::DoNotOptimize(matched);
      }
    });
    if (HandWritten floor = FloorOf(name)) {
      benchmark::RegisterBenchmark((name + "/hand_written").c_str(), [floor](benchmark::State& state) {
        for (auto _ : state) {
          bool matched = floor(data.at("event"), data.at("record"), data.at("before"));
          if (!matched) state.SkipWithError("the condition should hold on the data");
          benchmark::DoNotOptimize(matched);
        }
      });
    }
    // The evaluation alone: one activation, bound once (what remains when a caller reuses it).
    benchmark::RegisterBenchmark((name + "/eval_only").c_str(), [p = *program](benchmark::State& state) {
      cel::Activation activation;
      activation.Bind("event", &data.at("event")).Bind("record", &data.at("record")).Bind("before", &data.at("before"));
      for (auto _ : state) {
        auto matched = p.EvaluateBool(activation);
        if (!matched.ok() || !*matched) state.SkipWithError("the condition should hold on the data");
        benchmark::DoNotOptimize(matched);
      }
    });
  }
}

}  // namespace

int main(int argc, char** argv) {
  RegisterConditions();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
