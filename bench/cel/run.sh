#!/usr/bin/env bash
# bench/cel/run.sh BUILD_DIR — ns per evaluation of five trigger conditions in cairn's CEL
# (BUILD_DIR/bench/cel/cel_bench, Google Benchmark) and in @marcbachmann/cel-js (node), on the same
# data, and the ratio. Builds nothing: `cmake --build BUILD_DIR --target cel_bench` first (a
# Release build with -DCAIRN_BUILD_BENCH=ON). Target: cairn ≥ 10× faster on every condition.
# Environment: CEL_BENCH_SECONDS=2 (per condition, each side).
set -euo pipefail

[[ $# -eq 1 ]] || { echo "usage: bench/cel/run.sh BUILD_DIR" >&2; exit 2; }
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
seconds=${CEL_BENCH_SECONDS:-2}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

if [[ ! -d $here/cel-js/node_modules ]]; then
  (cd "$here/cel-js" && npm ci --silent --no-audit --no-fund)
fi
"$build/bench/cel/cel_bench" --benchmark_min_time="$seconds" --benchmark_format=json >"$out/cairn.json"
node "$here/cel-js/bench.mjs" >"$out/celjs.jsonl"

node - "$out/cairn.json" "$out/celjs.jsonl" <<'JS'
const fs = require('fs')
const cairn = JSON.parse(fs.readFileSync(process.argv[2])).benchmarks
const celjs = fs.readFileSync(process.argv[3], 'utf8').trim().split('\n').map(JSON.parse)
const nsOf = (name) => {
  const c = cairn.find(b => b.name === name)
  if (!c) return NaN
  return c.time_unit === 'ns' ? c.real_time : c.real_time * (c.time_unit === 'us' ? 1e3 : 1e6)
}
let worst = Infinity
// cairn: per event (a fresh Activation binding three JSON documents, then EvaluateBool);
// eval only: EvaluateBool on an activation bound once; hand-written: the same test in plain C++
// over the same Boost.JSON (the floor); ratio: cel-js / cairn per event.
console.log('condition            cairn ns/eval  eval only  hand-written  cel-js ns/eval   ratio')
for (const js of celjs) {
  const ns = nsOf(js.name)
  const ratio = js.ns_per_eval / ns
  worst = Math.min(worst, ratio)
  console.log(`${js.name.padEnd(20)} ${ns.toFixed(0).padStart(13)} ${nsOf(js.name + '/eval_only').toFixed(0).padStart(10)} ` +
              `${nsOf(js.name + '/hand_written').toFixed(0).padStart(13)} ${js.ns_per_eval.toFixed(0).padStart(15)} ${ratio.toFixed(1).padStart(7)}x`)
}
console.log(`worst ratio ${worst.toFixed(1)}x (target >= 10x): ${worst >= 10 ? 'PASS' : 'MISS'}`)
JS
