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
