#!/usr/bin/env bash
# bench/mcp/run.sh [BUILD_DIR] [--quick] — the MCP tool-call benchmark (run by `make bench`).
#
# One MCP tool call after another (server-everything's `echo` over stdio, tests/e2e/mcp-node), in
# the same run: the official TypeScript SDK client calling the server itself (the baseline), and
# the same call through cairn (POST tool.request.v1 for everything__echo → cairn's MCP client →
# the server → tool.response.v1 on GET /events/stream). Reports latency p50/p90/p99, calls/s and
# the ratio cairn p50 / direct p50: what cairn adds (a durable request, a claim, an execution
# record, the response write and its event) per call.
#
# Environment: MCP_BENCH_CALLS=500 measured calls per mode (after MCP_BENCH_WARMUP=50);
# --quick: 100 calls.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=bench/args.sh
source "$ROOT/bench/args.sh"
parse_bench_args mcp "${MCP_BENCH_QUICK:-0}" "$@"
CAIRN=$BUILD/src/app/cairn
NODE_DIR=$ROOT/tests/e2e/mcp-node
CALLS=${MCP_BENCH_CALLS:-500}
((QUICK)) && CALLS=${MCP_BENCH_CALLS:-100}
WARMUP=${MCP_BENCH_WARMUP:-50}

need_commands " (scripts/install-deps bench)" node curl timeout
need_cairn "$CAIRN"
[[ -d $NODE_DIR/node_modules/@modelcontextprotocol/server-everything ]] ||
  { echo "bench/mcp: $NODE_DIR/node_modules is missing; run scripts/install-deps test" >&2; exit 2; }

new_results
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
trap_cleanup
{ machine_info; echo "calls=$CALLS warmup=$WARMUP quick=$QUICK"; } >"$RESULTS/machine.txt"
show_machine

DATA_DIR=$(mktemp -d "${TMPDIR:-/tmp}/cairn-mcpbench.XXXXXX")
start_cairn "$CAIRN" "$DATA_DIR"
log "cairn pid $SERVER_PID on 127.0.0.1:$PORT; $CALLS calls per mode"
bench_rc=0
timeout --kill-after=10 600 node "$ROOT/bench/mcp/roundtrip.mjs" --port "$PORT" --node-dir "$NODE_DIR" \
  --calls "$CALLS" --warmup "$WARMUP" >"$RESULTS/bench.jsonl" 2>"$RESULTS/bench.stderr" || bench_rc=$?
stop_server
rm -rf "$DATA_DIR"; DATA_DIR=""
((bench_rc == 0)) || { cat "$RESULTS/bench.stderr" >&2; die "roundtrip.mjs exited with status $bench_rc"; }

field() { node -e 'const [m, k] = process.argv.slice(1); for (const l of require("fs").readFileSync(0, "utf8").trim().split("\n")) { const o = JSON.parse(l); if ((o.mode ?? "ratio") === m) { console.log(o[k] ?? ""); break; } }' "$1" "$2" <"$RESULTS/bench.jsonl"; }
{
  echo "== MCP tool call round trip ($(nproc) CPUs shared by the client, cairn and the server; sequential calls)"
  printf '%-7s %8s %9s %9s %9s %9s %7s\n' mode calls "calls/s" "p50 ms" "p90 ms" "p99 ms" errors
  for m in direct cairn; do
    printf '%-7s %8s %9s %9s %9s %9s %7s\n' "$m" "$(field "$m" calls)" "$(field "$m" rps)" "$(field "$m" p50_ms)" \
      "$(field "$m" p90_ms)" "$(field "$m" p99_ms)" "$(field "$m" errors)"
  done
  echo "ratio cairn/direct p50: $(field ratio ratio_p50) (cairn adds $(field ratio added_p50_ms) ms per call)"
  echo "raw outputs: $RESULTS"
} >"$RESULTS/summary.txt"
cat "$RESULTS/summary.txt"
