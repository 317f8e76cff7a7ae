#!/usr/bin/env bash
# bench/workflows/run.sh [BUILD_DIR] [--quick] — the workflow-engine benchmark (run by `make bench`):
# a 3-step chain of `echo` tools in cairn against LangGraph JS's StateGraph with 3 no-op nodes and
# its SQLite checkpointer, on the same machine in the same run, at the same durability.
#
# Builds nothing: BUILD_DIR (default build/bench) must hold a release src/app/cairn, e.g.
#   cmake -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DCAIRN_BUILD_TESTS=OFF -DCAIRN_BUILD_BENCH=ON
#   cmake --build build/bench -j2 --target cairn
# and the LangGraph side needs bench/workflows/langgraph/node_modules (scripts/install-deps bench,
# or `npm ci --legacy-peer-deps --prefix bench/workflows/langgraph`).
#
# For each durability (cairn --sync normal | full; the checkpointer's PRAGMA synchronous NORMAL |
# FULL) and each level (runs in flight, 1 and 32), closed loop, warm-up then a measured window:
#   cairn      `cairn serve` (fresh data dir, built-in tools) with the workflow.def.v1 `chain`: steps
#              a, b, c, each the built-in echo, b needs a, c needs b; ../agents/cairn-load.mjs
#              --workflow chain POSTs /workflows/chain/runs and waits for each workflow.result.v1
#              on one SSE stream (matched by request_id)
#   langgraph  langgraph/bench.mjs: StateGraph a -> b -> c of no-op nodes + SqliteSaver on a
#              temporary file, one thread_id per run
# Prints runs/s, run latency p50/p99, cairn's server CPU per step, and the ratio cairn/LangGraph of
# runs/s against the target (>= 10x). Raw outputs go to BUILD_DIR/results/workflows-<stamp>/.
# Each phase is bounded by a timeout; cairn is stopped on exit.
#
# Environment (all optional):
#   WORKFLOW_BENCH_SECONDS=10       measured seconds per (runtime, sync, level)
#   WORKFLOW_BENCH_WARMUP=2         warm-up seconds before each measurement
#   WORKFLOW_BENCH_LEVELS="1 32"    runs in flight
#   WORKFLOW_BENCH_SYNCS="normal full"  durabilities (cairn --sync, SQLite synchronous)
#   WORKFLOW_BENCH_TIMEOUT_MS=30000 a run with no answer after this long counts as a timeout
#   WORKFLOW_BENCH_LANGGRAPH=1      0 skips the LangGraph side
#   WORKFLOW_BENCH_SERVER_ARGS=""   extra `cairn serve` flags
#   WORKFLOW_BENCH_DATA_PARENT=$TMPDIR where the temporary data directories go
#   WORKFLOW_BENCH_TARGET=10        the target ratio cairn runs/s ÷ LangGraph runs/s
#   WORKFLOW_BENCH_STRICT=0         1: exit with status 3 when a row FAILs
#   --quick (or WORKFLOW_BENCH_QUICK=1): 3 s per measurement, 1 s of warm-up
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck source=bench/args.sh
source "$HERE/../args.sh"
parse_bench_args workflows "${WORKFLOW_BENCH_QUICK:-0}" "$@"

if ((QUICK)); then
  SECS=${WORKFLOW_BENCH_SECONDS:-3}; WARMUP=${WORKFLOW_BENCH_WARMUP:-1}
else
  SECS=${WORKFLOW_BENCH_SECONDS:-10}; WARMUP=${WORKFLOW_BENCH_WARMUP:-2}
fi
LEVELS=${WORKFLOW_BENCH_LEVELS:-"1 32"}
SYNCS=${WORKFLOW_BENCH_SYNCS:-"normal full"}
TIMEOUT_MS=${WORKFLOW_BENCH_TIMEOUT_MS:-30000}
RUN_LANGGRAPH=${WORKFLOW_BENCH_LANGGRAPH:-1}
DATA_PARENT=${WORKFLOW_BENCH_DATA_PARENT:-${TMPDIR:-/tmp}}
TARGET=${WORKFLOW_BENCH_TARGET:-10}
STRICT=${WORKFLOW_BENCH_STRICT:-0}
read -ra LEVEL_LIST <<<"$LEVELS"
read -ra SYNC_LIST <<<"$SYNCS"
((${#LEVEL_LIST[@]} > 0)) || { echo "bench/workflows: WORKFLOW_BENCH_LEVELS is empty" >&2; exit 2; }
for s in "${SYNC_LIST[@]}"; do
  [[ $s == normal || $s == full ]] || { echo "bench/workflows: WORKFLOW_BENCH_SYNCS holds normal and/or full" >&2; exit 2; }
done
PHASE_TIMEOUT=$((WARMUP + SECS + TIMEOUT_MS / 1000 + 30))

CAIRN=$BUILD/src/app/cairn
LANGGRAPH_DIR=$HERE/langgraph
need_commands " (run make deps)" node curl awk timeout
need_cairn "$CAIRN"
need_langgraph "$LANGGRAPH_DIR" WORKFLOW_BENCH_LANGGRAPH

new_results
# shellcheck source=bench/lib.sh
source "$HERE/../lib.sh"
trap_cleanup

{
  machine_info
  data_fs_info "$DATA_PARENT"
  echo "node=$(node --version)"
  echo "seconds=$SECS warmup=$WARMUP levels=$LEVELS syncs=$SYNCS timeout_ms=$TIMEOUT_MS quick=$QUICK" \
       "server_args=${WORKFLOW_BENCH_SERVER_ARGS:-}"
} >"$RESULTS/machine.txt"
show_machine

# The workflow: three echo steps chained by needs; the run's output is the last step's value.
cat >"$RESULTS/workflow-def.json" <<'EOF2'
{"title": "chain", "schema_name": "workflow.def.v1", "context": {
  "name": "chain",
  "description": "The workflow benchmark: three echo steps chained by needs.",
  "input_schema": {"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}},
  "concurrency": 32,
  "steps": [
    {"id": "a", "tool": "echo", "input": {"v": "${{ input.n }}"}},
    {"id": "b", "tool": "echo", "needs": ["a"], "input": {"v": "${{ steps.a.output.v }}"}},
    {"id": "c", "tool": "echo", "needs": ["b"], "input": {"v": "${{ steps.b.output.v }}"}}
  ],
  "output": {"v": "${{ steps.c.output.v }}"}
}}
EOF2

# ---------------------------------------------------------------------------------------------
# cairn, once per durability (a fresh server and data directory each).
server_dead=0
for sync in "${SYNC_LIST[@]}"; do
  DATA_DIR=$(mktemp -d "$DATA_PARENT/cairn-wfbench.XXXXXX")
  # shellcheck disable=SC2086  # WORKFLOW_BENCH_SERVER_ARGS is a list of flags
  start_cairn "$CAIRN" "$DATA_DIR" --sync "$sync" --builtin-tools=true --run-executors=true --default-agent=false \
    ${WORKFLOW_BENCH_SERVER_ARGS:-}
  log "cairn pid $SERVER_PID on 127.0.0.1:$PORT (--sync $sync)"
  curl -fsS --max-time 10 -XPOST "http://127.0.0.1:$PORT/breadcrumbs" -H 'Content-Type: application/json' \
    -d @"$RESULTS/workflow-def.json" >"$RESULTS/workflow-def-$sync.answer.json" || die "defining the workflow failed"

  # The workflow's executor starts asynchronously: one run must be answered before the measurements.
  cairn_load "cairn-$sync-ready" 1 1 0 20000 --workflow chain || true
  [[ $(val "cairn-$sync-ready" runs) -ge 1 && $(val "cairn-$sync-ready" errors) == 0 ]] ||
    die "the workflow did not answer (see $RESULTS/cairn-$sync-ready.json, $RESULTS/server.log)"
  log "workflow ready: $(val "cairn-$sync-ready" runs) runs in 1 s, p50 $(val "cairn-$sync-ready" p50_ms) ms"

  for c in "${LEVEL_LIST[@]}"; do
    name=cairn-$sync-c$c
    log "cairn --sync $sync at concurrency $c: ${WARMUP}s warm-up + ${SECS}s (load $(loadavg))"
    cairn_load "$name" "$c" "$SECS" "$WARMUP" "$TIMEOUT_MS" --workflow chain || log "cairn-load exited with an error (see $RESULTS/$name.stderr)"
    log "cairn $sync c=$c: $(val "$name" runs_per_s) runs/s, p50 $(val "$name" p50_ms) ms, p99 $(val "$name" p99_ms) ms," \
        "errors $(val "$name" errors), server CPU $(val "$name" server_cpu_us_per_run) us/run"
  done
  save_server_end "-$sync"
  ((SERVER_ALIVE)) || server_dead=1
  stop_server
  mv "$RESULTS/server.log" "$RESULTS/server-$sync.log"
  rm -rf "$DATA_DIR"; DATA_DIR=""
done

# ---------------------------------------------------------------------------------------------
# LangGraph JS, at each durability (cairn is stopped: the two never share the machine).
if ((RUN_LANGGRAPH)); then
  for sync in "${SYNC_LIST[@]}"; do
    for c in "${LEVEL_LIST[@]}"; do
      name=langgraph-$sync-c$c
      log "LangGraph synchronous=$sync at concurrency $c: ${WARMUP}s warm-up + ${SECS}s (load $(loadavg))"
      langgraph_load "$name" --synchronous "$sync" --seconds "$SECS" --warmup-seconds "$WARMUP" \
        --timeout-ms "$TIMEOUT_MS" --concurrency "$c" || log "LangGraph bench exited with status $PHASE_RC (see $RESULTS/$name.stderr)"
      log "LangGraph $sync c=$c: $(val "$name" runs_per_s) runs/s, p50 $(val "$name" p50_ms) ms, errors $(val "$name" errors)"
    done
  done
fi

# ---------------------------------------------------------------------------------------------
# Summary.
row() { printf '%-6s %4s | %8s %8s %8s %9s | %8s %8s %8s %9s | %7s | %s\n' "$@"; }
fails=0
{
  summary_head "workflow" "the load generator and the runtime under test share the $(nproc) CPUs"
  echo "workload: one run = 3 steps chained by needs (cairn: the built-in echo tool as child executions;" \
       "LangGraph: StateGraph nodes a -> b -> c returning their input)"
  echo "closed loop, N runs in flight, ${WARMUP}s warm-up then ${SECS}s measured per row; latency = run started ->" \
       "its result (cairn: POST /workflows/chain/runs sent -> workflow.result.v1 frame read; LangGraph: invoke() -> resolved)"
  echo "sync: cairn --sync normal|full; LangGraph SqliteSaver (WAL) PRAGMA synchronous NORMAL|FULL"
  echo "CPU/step = CPU time per run / 3 (cairn: the server process from /proc; LangGraph: its node process," \
       "which is also its load generator)"
  echo
  row "sync" "runs" "cairn/s" "p50 ms" "p99 ms" "CPU/step" "LG/s" "p50 ms" "p99 ms" "CPU/step" "ratio" "result"
  for sync in "${SYNC_LIST[@]}"; do
    for c in "${LEVEL_LIST[@]}"; do
      a=cairn-$sync-c$c b=langgraph-$sync-c$c
      ratio=$(ratio_of "$(val "$a" runs_per_s)" "$(val "$b" runs_per_s)")
      if ((RUN_LANGGRAPH)); then
        result=$(awk -v r="$ratio" -v t="$TARGET" 'BEGIN { print (r != "n/a" && r + 0 >= t) ? "PASS" : "FAIL" }')
        bad=$(awk '{ $1 = $1; print }' <<<"$(problems "$a") $(problems "$b")")
        [[ -n $bad ]] && result="FAIL ($bad)"
      else
        result="n/a"; bad=$(problems "$a"); [[ -n $bad ]] && result="FAIL ($bad)"
      fi
      [[ $result == PASS || $result == n/a ]] || fails=$((fails + 1))
      row "$sync" "$c" "$(val "$a" runs_per_s)" "$(val "$a" p50_ms)" "$(val "$a" p99_ms)" "$(cpu_step "$a" server_cpu_us_per_run) us" \
          "$(val "$b" runs_per_s)" "$(val "$b" p50_ms)" "$(val "$b" p99_ms)" "$(cpu_step "$b" client_cpu_us_per_run) us" \
          "${ratio}x" "$result"
    done
  done
  echo
  echo "target: cairn runs/s >= ${TARGET} x LangGraph runs/s in every row, no errors on either side"
  echo
  echo "details:"
  for sync in "${SYNC_LIST[@]}"; do
    for c in "${LEVEL_LIST[@]}"; do
      a=cairn-$sync-c$c b=langgraph-$sync-c$c
      printf '  cairn     %-6s %3s: %6s runs, p90 %s ms, max %s ms; server CPU %s us/run, load generator %s us/run;' \
        "$sync" "$c" "$(val "$a" runs)" "$(val "$a" p90_ms)" "$(val "$a" max_ms)" \
        "$(val "$a" server_cpu_us_per_run)" "$(val "$a" client_cpu_us_per_run)"
      printf ' per run %s commits (%s writes; commit mean %s ms), %s events; load %s -> %s\n' \
        "$(val "$a" transactions_per_run)" "$(val "$a" writes_per_run)" "$(val "$a" commit_ms_mean)" \
        "$(val "$a" events_per_run)" "$(val "$a" loadavg_before | cut -d' ' -f1)" "$(val "$a" loadavg_after | cut -d' ' -f1)"
      if ((RUN_LANGGRAPH)); then
        printf '  langgraph %-6s %3s: %6s runs, p90 %s ms, max %s ms; node CPU %s us/run; synchronous=%s, %s checkpoints/run; load %s -> %s\n' \
          "$sync" "$c" "$(val "$b" runs)" "$(val "$b" p90_ms)" "$(val "$b" max_ms)" "$(val "$b" client_cpu_us_per_run)" \
          "$(val "$b" sqlite.synchronous)" "$(val "$b" sqlite.checkpoints_per_run)" \
          "$(val "$b" loadavg_before | cut -d' ' -f1)" "$(val "$b" loadavg_after | cut -d' ' -f1)"
      fi
    done
    if [[ -s $RESULTS/server-end-$sync.kv ]]; then
      echo "  cairn --sync $sync at the end: RSS $(awk -F= '/^VmRSS=/ {printf "%.1f", $2 / 1024}' "$RESULTS/server-end-$sync.kv") MB" \
           "(peak $(awk -F= '/^VmHWM=/ {printf "%.1f", $2 / 1024}' "$RESULTS/server-end-$sync.kv") MB)," \
           "$(awk -F= '/^Threads=/ {print $2}' "$RESULTS/server-end-$sync.kv") threads;" \
           "server log $(wc -l <"$RESULTS/server-$sync.log") lines, $(grep -ciE 'error|warn' "$RESULTS/server-$sync.log" || true) with error/warn"
    fi
  done
  ((server_dead)) && echo "  A CAIRN SERVER WAS NOT RUNNING AT THE END OF ITS PHASES (see server-*.log)"
  echo
  echo "raw outputs: $RESULTS"
} >"$RESULTS/summary.txt"
cat "$RESULTS/summary.txt"
((server_dead == 0)) || fails=$((fails + 1))

if ((STRICT && fails > 0)); then exit 3; fi
exit 0
