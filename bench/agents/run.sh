#!/usr/bin/env bash
# bench/agents/run.sh [BUILD_DIR] [--quick] — the agent benchmark (run by `make bench`): cairn against
# LangGraph JS on the same workload, the same machine and the same mock LLM, in the same run.
#
# Builds nothing: BUILD_DIR (default build/bench) must hold a release src/app/cairn, e.g.
#   cmake -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DCAIRN_BUILD_TESTS=OFF -DCAIRN_BUILD_BENCH=ON
#   cmake --build build/bench -j2 --target cairn
# and the LangGraph side needs bench/agents/langgraph/node_modules (scripts/install-deps, or
# `npm ci --legacy-peer-deps --prefix bench/agents/langgraph`).
#
# The workload: an agent with one tool (the built-in echo) against the project's scripted
# OpenAI-compatible fixture server (tests/e2e/llm-node/fixture-server.mjs --no-record): the first
# model call is answered with an echo tool call, the second (after the tool result) with a final
# answer, so one run = 2 model calls + 1 tool call. Closed loop at each level (1 and 32 runs in
# flight), warm-up then a measured window.
#   1. fixture     the fixture server's own latency (wrk, 1 connection, each request of a run) and
#                  capacity (wrk -t2 -c32, the run's second, larger request), alone on the machine
#   2. cairn       `cairn serve` (fresh data dir, --sync full as the other benches, built-in tools
#                  on, --llm-base-url the fixture) with an agent.def.v1 {tools: [echo],
#                  concurrency: 32, max_iterations: 4}; cairn-load.mjs posts user.message.v1
#                  breadcrumbs and waits for each agent.response.v1 on one SSE stream (snapshots
#                  are always written: after each model reply and each tool result)
#   3. langgraph   langgraph/bench.mjs: createReactAgent + ChatOpenAI (the same fixture) + an echo
#                  tool + SqliteSaver on a temporary file, one thread_id per run
# Prints runs/s, run latency p50/p99, per-step overhead and CPU per step for both, the ratio
# cairn/LangGraph of runs/s and PASS/FAIL against the target (>= 10x at each level). Every raw
# output goes to BUILD_DIR/results/agents-<stamp>/. Each phase is bounded by a timeout; the
# fixture and cairn are stopped on exit. The load generators share the CPUs with the servers.
#
# Environment (all optional):
#   AGENT_BENCH_SECONDS=10        measured seconds per (runtime, level)
#   AGENT_BENCH_WARMUP=2          warm-up seconds before each measurement (same concurrency)
#   AGENT_BENCH_LEVELS="1 32"     runs in flight
#   AGENT_BENCH_STREAM=0          1: streaming model calls on both sides (agent "stream": true,
#                                 ChatOpenAI streaming: true); 0: one JSON reply per model call
#   AGENT_BENCH_SYNC=full         cairn's --sync (full: fsync every commit; normal)
#   AGENT_BENCH_LANGGRAPH_SYNC=   the checkpointer's PRAGMA synchronous (full|normal); empty: as
#                                 SqliteSaver leaves it (better-sqlite3's default, NORMAL in WAL)
#   AGENT_BENCH_TIMEOUT_MS=30000  a run with no answer after this long counts as a timeout
#   AGENT_BENCH_FIXTURE_SECONDS=5 seconds of each wrk measurement of the fixture
#   AGENT_BENCH_LANGGRAPH=1       0 skips the LangGraph side
#   AGENT_BENCH_SERVER_ARGS=""    extra `cairn serve` flags
#   AGENT_BENCH_DATA_PARENT=$TMPDIR where the temporary data directory goes
#   AGENT_BENCH_TARGET=10         the target ratio cairn runs/s ÷ LangGraph runs/s
#   AGENT_BENCH_STRICT=0          1: exit with status 3 when a level FAILs
#   --quick (or AGENT_BENCH_QUICK=1): 3 s per measurement, 1 s of warm-up, 2 s per fixture step
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck source=bench/args.sh
source "$HERE/../args.sh"
parse_bench_args agents "${AGENT_BENCH_QUICK:-0}" "$@"

if ((QUICK)); then
  SECS=${AGENT_BENCH_SECONDS:-3}; WARMUP=${AGENT_BENCH_WARMUP:-1}; FIX_SECS=${AGENT_BENCH_FIXTURE_SECONDS:-2}
else
  SECS=${AGENT_BENCH_SECONDS:-10}; WARMUP=${AGENT_BENCH_WARMUP:-2}; FIX_SECS=${AGENT_BENCH_FIXTURE_SECONDS:-5}
fi
LEVELS=${AGENT_BENCH_LEVELS:-"1 32"}
STREAM=${AGENT_BENCH_STREAM:-0}
SYNC=${AGENT_BENCH_SYNC:-full}
LG_SYNC=${AGENT_BENCH_LANGGRAPH_SYNC:-}
TIMEOUT_MS=${AGENT_BENCH_TIMEOUT_MS:-30000}
RUN_LANGGRAPH=${AGENT_BENCH_LANGGRAPH:-1}
DATA_PARENT=${AGENT_BENCH_DATA_PARENT:-${TMPDIR:-/tmp}}
TARGET=${AGENT_BENCH_TARGET:-10}
STRICT=${AGENT_BENCH_STRICT:-0}
read -ra LEVEL_LIST <<<"$LEVELS"
((${#LEVEL_LIST[@]} > 0)) || { echo "bench/agents: AGENT_BENCH_LEVELS is empty" >&2; exit 2; }
[[ $STREAM == 0 || $STREAM == 1 ]] || { echo "bench/agents: AGENT_BENCH_STREAM is 0 or 1" >&2; exit 2; }
# Bounded: each load phase ends after warm-up + window + one run's timeout, plus slack.
PHASE_TIMEOUT=$((WARMUP + SECS + TIMEOUT_MS / 1000 + 30))

CAIRN=$BUILD/src/app/cairn
FIXTURE=$ROOT/tests/e2e/llm-node/fixture-server.mjs
LANGGRAPH_DIR=$HERE/langgraph
WRK=${WRK:-wrk}
need_commands " (run make deps)" node "$WRK" curl awk timeout
need_cairn "$CAIRN"
[[ -f $FIXTURE ]] || { echo "bench/agents: $FIXTURE not found" >&2; exit 2; }
need_langgraph "$LANGGRAPH_DIR" AGENT_BENCH_LANGGRAPH

new_results
# shellcheck source=bench/lib.sh
source "$HERE/../lib.sh"
trap_cleanup

{
  machine_info
  data_fs_info "$DATA_PARENT"
  echo "node=$(node --version) wrk=$("$WRK" -v 2>&1 | head -n 1 | awk '{print $2}')"
  echo "seconds=$SECS warmup=$WARMUP levels=$LEVELS stream=$STREAM sync=$SYNC langgraph_sync=${LG_SYNC:-default}" \
       "timeout_ms=$TIMEOUT_MS fixture_seconds=$FIX_SECS quick=$QUICK server_args=${AGENT_BENCH_SERVER_ARGS:-}"
} >"$RESULTS/machine.txt"
show_machine

# ---------------------------------------------------------------------------------------------
# The fixture server: the user message gets an echo tool call, the tool result a final answer.
cat >"$RESULTS/fixture-script.json" <<'EOF'
{"rules": [
  {"name": "model call 1: call the tool",
   "match": {"last_role": "user"}, "reply": {"tool_calls": [{"name": "echo", "arguments": {"text": "{{last_content}}"}}]}},
  {"name": "model call 2: the final answer",
   "match": {"last_role": "tool"}, "reply": {"content": "The tool said: {{last_tool_content}}"}}
]}
EOF
# The two requests of a cairn run, as cairn sends them (for the fixture's own figures).
cat >"$RESULTS/fixture-request-1.json" <<'EOF'
{"model":"bench","messages":[{"role":"user","content":"hello bench 1"}],"tools":[{"type":"function","function":{"name":"echo","description":"Returns its input unchanged.","parameters":{"type":"object"}}}],"stream":false}
EOF
cat >"$RESULTS/fixture-request-2.json" <<'EOF'
{"model":"bench","messages":[{"role":"user","content":"hello bench 1"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"echo","arguments":"{\"text\":\"hello bench 1\"}"}}]},{"role":"tool","content":"{\"text\":\"hello bench 1\"}","tool_call_id":"call_1"}],"tools":[{"type":"function","function":{"name":"echo","description":"Returns its input unchanged.","parameters":{"type":"object"}}}],"stream":false}
EOF
if ((STREAM)); then  # the same requests, streamed
  for f in "$RESULTS"/fixture-request-[12].json; do sed -i 's/"stream":false/"stream":true/' "$f"; done
fi

start_fixture "$FIXTURE" "$RESULTS/fixture-script.json"

# fixture_wrk NAME THREADS CONNS BODY: wrk against the fixture, alone on the machine.
fixture_wrk() {
  local name=$1 threads=$2 conns=$3 body=$4 cpu0 cpu1
  {
    echo "# wrk -t$threads -c$conns -d${FIX_SECS}s --latency -s fixture.lua $FIXTURE_URL/chat/completions -- $(basename "$body")"
    echo "# loadavg before: $(loadavg)"
  } >"$RESULTS/$name.txt"
  cpu0=$(cpu_ms "$FIXTURE_PID")
  timeout --kill-after=10 $((FIX_SECS + 30)) "$WRK" -t"$threads" -c"$conns" -d"${FIX_SECS}s" --latency --timeout 10s \
    -s "$HERE/fixture.lua" "$FIXTURE_URL/chat/completions" -- "$body" >>"$RESULTS/$name.txt" 2>&1 ||
    log "wrk for $name failed; see $RESULTS/$name.txt"
  cpu1=$(cpu_ms "$FIXTURE_PID")
  echo "fixture_cpu_ms=$((${cpu1:-0} - ${cpu0:-0}))" >>"$RESULTS/$name.txt"
  grep -E '^(bench_[a-z0-9_]+|fixture_cpu_ms)=' "$RESULTS/$name.txt" >"$RESULTS/$name.kv" || true
  [[ -n $(val "$name" bench_ok_per_sec) ]] || die "no results from wrk for $name (see $RESULTS/$name.txt)"
  [[ $(val "$name" bench_non2xx) == 0 ]] || die "the fixture answered non-2xx in $name (see $RESULTS/$name.txt)"
  log "$name: $(val "$name" bench_ok_per_sec) req/s, p50 $(val "$name" bench_lat_p50_us) us, p99 $(val "$name" bench_lat_p99_us) us"
}
fixture_wrk fixture-latency-1 1 1 "$RESULTS/fixture-request-1.json"
fixture_wrk fixture-latency-2 1 1 "$RESULTS/fixture-request-2.json"
fixture_wrk fixture-capacity 2 32 "$RESULTS/fixture-request-2.json"

# ---------------------------------------------------------------------------------------------
# cairn.
DATA_DIR=$(mktemp -d "$DATA_PARENT/cairn-agentbench.XXXXXX")
# shellcheck disable=SC2086  # AGENT_BENCH_SERVER_ARGS is a list of flags
start_cairn "$CAIRN" "$DATA_DIR" --sync "$SYNC" --builtin-tools=true --run-executors=true \
  --llm-base-url "$FIXTURE_URL" --llm-model bench --default-agent=false ${AGENT_BENCH_SERVER_ARGS:-}
echo "cairn_health=$(cat "$RESULTS/health.json")" >>"$RESULTS/machine.txt"
log "cairn pid $SERVER_PID on 127.0.0.1:$PORT (--sync $SYNC)"

stream_json=$( ((STREAM)) && echo true || echo false)
agent_def='{"title":"bench agent","schema_name":"agent.def.v1","context":{"agent_id":"bench",
  "description":"The agent benchmark: one tool, echo.","tools":["echo"],"concurrency":32,"max_iterations":4,
  "stream":'$stream_json'}}'
curl -fsS --max-time 10 -XPOST "http://127.0.0.1:$PORT/breadcrumbs" -H 'Content-Type: application/json' \
  -d "$agent_def" >"$RESULTS/agent-def.json" || die "defining the agent failed"

# The agent's executor starts asynchronously: one run must be answered before the measurements.
cairn_load cairn-ready 1 1 0 20000 --agent bench || true
[[ $(val cairn-ready runs) -ge 1 && $(val cairn-ready errors) == 0 ]] ||
  die "the agent did not answer (see $RESULTS/cairn-ready.json, $RESULTS/server.log)"
log "agent ready: $(val cairn-ready runs) runs in 1 s, p50 $(val cairn-ready p50_ms) ms"

for c in "${LEVEL_LIST[@]}"; do
  log "cairn at concurrency $c: ${WARMUP}s warm-up + ${SECS}s (load $(loadavg))"
  cairn_load "cairn-c$c" "$c" "$SECS" "$WARMUP" "$TIMEOUT_MS" --agent bench || log "cairn-load exited with an error at $c (see $RESULTS/cairn-c$c.stderr)"
  log "cairn c=$c: $(val "cairn-c$c" runs_per_s) runs/s, p50 $(val "cairn-c$c" p50_ms) ms, p99 $(val "cairn-c$c" p99_ms) ms," \
      "errors $(val "cairn-c$c" errors), server CPU $(val "cairn-c$c" server_cpu_us_per_run) us/run"
done
save_server_end ""
server_alive=$SERVER_ALIVE
stop_server
rm -rf "$DATA_DIR"; DATA_DIR=""

# ---------------------------------------------------------------------------------------------
# LangGraph JS.
if ((RUN_LANGGRAPH)); then
  lg_args=(--base-url "$FIXTURE_URL" --model bench --seconds "$SECS" --warmup-seconds "$WARMUP" --timeout-ms "$TIMEOUT_MS")
  ((STREAM)) && lg_args+=(--stream)
  [[ -n $LG_SYNC ]] && lg_args+=(--synchronous "$LG_SYNC")
  for c in "${LEVEL_LIST[@]}"; do
    name=langgraph-c$c
    log "LangGraph at concurrency $c: ${WARMUP}s warm-up + ${SECS}s (load $(loadavg))"
    langgraph_load "$name" "${lg_args[@]}" --concurrency "$c" ||
      log "LangGraph bench exited with status $PHASE_RC at $c (see $RESULTS/$name.stderr)"
    log "LangGraph c=$c: $(val "$name" runs_per_s) runs/s, p50 $(val "$name" p50_ms) ms, errors $(val "$name" errors)"
  done
fi
fixture_alive=1
kill -0 "$FIXTURE_PID" 2>/dev/null || fixture_alive=0
stop_fixture

# ---------------------------------------------------------------------------------------------
# Summary.
fix1=$(val fixture-latency-1 bench_lat_p50_us)
fix2=$(val fixture-latency-2 bench_lat_p50_us)
fix_run_ms=$(awk -v a="$fix1" -v b="$fix2" 'BEGIN { printf "%.3f", (a + b) / 1000 }')
fix_cap=$(val fixture-capacity bench_ok_per_sec)
# step_ms NAME: (p50 run latency - the fixture's own time for the run's 2 requests) / 3 steps.
step_ms() {
  awk -v p="$(val "$1" p50_ms)" -v f="$fix_run_ms" 'BEGIN { if (p == "") print "n/a"; else printf "%.3f", (p - f) / 3 }'
}
row() { printf '%-5s | %-9s | %8s %9s %9s | %9s %9s | %-12s\n' "$@"; }
fails=0
{
  summary_head "agent" "the load generators, the fixture server and the runtime under test share the $(nproc) CPUs"
  echo "workload: one run = user message -> model call (fixture: echo tool call) -> echo tool -> model call" \
       "(fixture: final answer); 2 model calls + 1 tool call = 3 steps"
  echo "closed loop, N runs in flight, ${WARMUP}s warm-up then ${SECS}s measured per row; latency = run started ->" \
       "its answer (cairn: POST user.message.v1 sent -> agent.response.v1 frame read; LangGraph: invoke() -> resolved)"
  echo "streaming model calls: $( ((STREAM)) && echo on || echo off) on both sides;" \
       "cairn --sync $SYNC (snapshots after each model reply and tool result);" \
       "LangGraph SqliteSaver synchronous=$(val "langgraph-c${LEVEL_LIST[0]}" sqlite.synchronous) (2 FULL, 1 NORMAL)" \
       "journal_mode=$(val "langgraph-c${LEVEL_LIST[0]}" sqlite.journal_mode)"
  echo
  echo "fixture LLM server alone (wrk, keep-alive): request 1 p50 ${fix1} us, request 2 p50 ${fix2} us" \
       "(1 connection); capacity $(printf '%.0f' "${fix_cap:-0}") req/s at 32 connections" \
       "(p99 $(val fixture-capacity bench_lat_p99_us) us) = $(awk -v c="${fix_cap:-0}" 'BEGIN { printf "%.0f", c / 2 }') runs/s"
  echo "per-step overhead = (p50 run latency - ${fix_run_ms} ms, the fixture's own p50 time for the run's 2 requests) / 3 steps;" \
       "CPU/step = the runtime's CPU time per run / 3 (cairn: the server process; LangGraph: its node process," \
       "which is also its load generator)"
  echo
  row "runs" "runtime" "runs/s" "p50 ms" "p99 ms" "step ms" "CPU/step" "problems"
  for c in "${LEVEL_LIST[@]}"; do
    row "$c" cairn "$(val "cairn-c$c" runs_per_s)" "$(val "cairn-c$c" p50_ms)" "$(val "cairn-c$c" p99_ms)" \
        "$(step_ms "cairn-c$c")" "$(cpu_step "cairn-c$c" server_cpu_us_per_run) us" "$(problems "cairn-c$c")"
    if ((RUN_LANGGRAPH)); then
      row "$c" langgraph "$(val "langgraph-c$c" runs_per_s)" "$(val "langgraph-c$c" p50_ms)" "$(val "langgraph-c$c" p99_ms)" \
          "$(step_ms "langgraph-c$c")" "$(cpu_step "langgraph-c$c" client_cpu_us_per_run) us" "$(problems "langgraph-c$c")"
    fi
  done
  echo
  if ((RUN_LANGGRAPH)); then
    echo "target: cairn runs/s >= ${TARGET} x LangGraph runs/s at each level, no errors on either side"
    for c in "${LEVEL_LIST[@]}"; do
      a=$(val "cairn-c$c" runs_per_s) b=$(val "langgraph-c$c" runs_per_s)
      ratio=$(ratio_of "$a" "$b")
      result=$(awk -v r="$ratio" -v t="$TARGET" 'BEGIN { print (r != "n/a" && r + 0 >= t) ? "PASS" : "FAIL" }')
      bad="$(problems "cairn-c$c") $(problems "langgraph-c$c")"
      bad=$(awk '{ $1 = $1; print }' <<<"$bad")
      [[ -n $bad ]] && result="FAIL ($bad)"
      [[ $result == PASS ]] || fails=$((fails + 1))
      printf '  %3s runs in flight: cairn %s runs/s / LangGraph %s runs/s = %sx  %s\n' "$c" "${a:-?}" "${b:-?}" "$ratio" "$result"
    done
  else
    echo "LangGraph skipped (AGENT_BENCH_LANGGRAPH=0): no ratio"
  fi
  echo
  echo "details:"
  for c in "${LEVEL_LIST[@]}"; do
    printf '  cairn     %3s: %6s runs, p90 %s ms, max %s ms; server CPU %s us/run, load generator %s us/run;' \
      "$c" "$(val "cairn-c$c" runs)" "$(val "cairn-c$c" p90_ms)" "$(val "cairn-c$c" max_ms)" \
      "$(val "cairn-c$c" server_cpu_us_per_run)" "$(val "cairn-c$c" client_cpu_us_per_run)"
    printf ' fixture CPU %s ms; load %s -> %s\n' "$(val "cairn-c$c" fixture_cpu_ms)" \
      "$(val "cairn-c$c" loadavg_before | cut -d' ' -f1)" "$(val "cairn-c$c" loadavg_after | cut -d' ' -f1)"
    printf '                 per run: %s transactions (%s writes, commit mean %s ms), %s events\n' \
      "$(val "cairn-c$c" transactions_per_run)" "$(val "cairn-c$c" writes_per_run)" "$(val "cairn-c$c" commit_ms_mean)" \
      "$(val "cairn-c$c" events_per_run)"
    if ((RUN_LANGGRAPH)); then
      printf '  langgraph %3s: %6s runs, p90 %s ms, max %s ms; node CPU %s us/run;' \
        "$c" "$(val "langgraph-c$c" runs)" "$(val "langgraph-c$c" p90_ms)" "$(val "langgraph-c$c" max_ms)" \
        "$(val "langgraph-c$c" client_cpu_us_per_run)"
      printf ' fixture CPU %s ms; checkpoints %s, writes %s; load %s -> %s\n' "$(val "langgraph-c$c" fixture_cpu_ms)" \
        "$(val "langgraph-c$c" sqlite.checkpoints)" "$(val "langgraph-c$c" sqlite.writes)" \
        "$(val "langgraph-c$c" loadavg_before | cut -d' ' -f1)" "$(val "langgraph-c$c" loadavg_after | cut -d' ' -f1)"
    fi
  done
  if [[ -s $RESULTS/server-end.kv ]]; then
    echo "  cairn at the end: RSS $(awk -F= '/^VmRSS=/ {printf "%.1f", $2 / 1024}' "$RESULTS/server-end.kv") MB" \
         "(peak $(awk -F= '/^VmHWM=/ {printf "%.1f", $2 / 1024}' "$RESULTS/server-end.kv") MB)," \
         "$(awk -F= '/^Threads=/ {print $2}' "$RESULTS/server-end.kv") threads"
  fi
  server_errors=$(grep -ciE 'error|warn' "$RESULTS/server.log" || true)
  echo "  cairn server log: $(wc -l <"$RESULTS/server.log") lines, $server_errors with error/warn (see server.log)"
  ((server_alive)) || echo "  THE CAIRN SERVER WAS NOT RUNNING AT THE END (see server.log)"
  ((fixture_alive)) || echo "  THE FIXTURE SERVER WAS NOT RUNNING AT THE END (see fixture.log)"
  echo
  echo "raw outputs: $RESULTS"
} >"$RESULTS/summary.txt"  # not a pipe into tee: `fails` must survive the block
cat "$RESULTS/summary.txt"
((server_alive && fixture_alive)) || fails=$((fails + 1))

if ((STRICT && fails > 0)); then exit 3; fi
exit 0
