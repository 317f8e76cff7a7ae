#!/usr/bin/env bash
# bench/nested/run.sh [BUILD_DIR] [--quick] — the nested-agents benchmark (run by `make bench`): an
# orchestrator that delegates to 8 sub-agents in one reply and then answers, in cairn and in
# LangGraph JS, on the same machine and the same fixture LLM (0 ms), in the same run.
#
# Builds nothing: BUILD_DIR (default build/bench) must hold a release src/app/cairn (see
# bench/agents/run.sh), and the LangGraph side needs bench/nested/langgraph/node_modules
# (scripts/install-deps bench).
#
# One run = the user's message -> the orchestrator's model call (the fixture answers with 8
# `delegate` calls, tasks "<message> part 1..8") -> 8 sub-agents in parallel, one model call each
# ("sub: <task>") -> the orchestrator's second model call ("done: <last tool result>"): 10 model
# calls, 9 executions.
#   cairn      `cairn serve --sync full`, agent.def.v1 "worker" (no tools, concurrency 64) and
#              "orchestrator" {agents: [worker], max_children: 8, concurrency: 32}; the load is
#              bench/agents/cairn-load.mjs --agent orchestrator (user.message.v1 in, the
#              agent.response.v1 read on one SSE stream; it checks steps == 2 and the text)
#   langgraph  langgraph/bench.mjs: a supervisor StateGraph whose delegate calls fan out with Send
#              to a sub-agent subgraph each, SqliteSaver on a temporary file, one thread per run
# Prints runs/s and p50/p99 at each level for both, the ratio (target >= 10x) and the writes per
# run and per sub-agent. Raw outputs go to BUILD_DIR/results/nested-<stamp>/.
#
# Environment (all optional):
#   NESTED_BENCH_SECONDS=10     measured seconds per (runtime, level)
#   NESTED_BENCH_WARMUP=2       warm-up seconds before each measurement
#   NESTED_BENCH_LEVELS="1 16"  runs in flight
#   NESTED_BENCH_SYNC=full      cairn's --sync
#   NESTED_BENCH_LANGGRAPH=1    0 skips the LangGraph side
#   NESTED_BENCH_TIMEOUT_MS=30000, NESTED_BENCH_TARGET=10, NESTED_BENCH_STRICT=0 (1: exit 3 on FAIL)
#   --quick (or NESTED_BENCH_QUICK=1): 3 s per measurement, 1 s of warm-up
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck source=bench/args.sh
source "$HERE/../args.sh"
parse_bench_args nested "${NESTED_BENCH_QUICK:-0}" "$@"

if ((QUICK)); then
  SECS=${NESTED_BENCH_SECONDS:-3}; WARMUP=${NESTED_BENCH_WARMUP:-1}
else
  SECS=${NESTED_BENCH_SECONDS:-10}; WARMUP=${NESTED_BENCH_WARMUP:-2}
fi
LEVELS=${NESTED_BENCH_LEVELS:-"1 16"}
SYNC=${NESTED_BENCH_SYNC:-full}
TIMEOUT_MS=${NESTED_BENCH_TIMEOUT_MS:-30000}
RUN_LANGGRAPH=${NESTED_BENCH_LANGGRAPH:-1}
DATA_PARENT=${TMPDIR:-/tmp}
TARGET=${NESTED_BENCH_TARGET:-10}
STRICT=${NESTED_BENCH_STRICT:-0}
FANOUT=8
read -ra LEVEL_LIST <<<"$LEVELS"
((${#LEVEL_LIST[@]} > 0)) || { echo "bench/nested: NESTED_BENCH_LEVELS is empty" >&2; exit 2; }
PHASE_TIMEOUT=$((WARMUP + SECS + TIMEOUT_MS / 1000 + 30))

CAIRN=$BUILD/src/app/cairn
FIXTURE=$ROOT/tests/e2e/llm-node/fixture-server.mjs
LANGGRAPH_DIR=$HERE/langgraph
need_commands " (run make deps)" node curl awk timeout
need_cairn "$CAIRN"
need_langgraph "$LANGGRAPH_DIR" NESTED_BENCH_LANGGRAPH

new_results
# shellcheck source=bench/lib.sh
source "$HERE/../lib.sh"
trap_cleanup

{
  machine_info
  data_fs_info "$DATA_PARENT"
  echo "node=$(node --version) seconds=$SECS warmup=$WARMUP levels=$LEVELS sync=$SYNC fanout=$FANOUT" \
       "timeout_ms=$TIMEOUT_MS quick=$QUICK"
} >"$RESULTS/machine.txt"
show_machine

# ---------------------------------------------------------------------------------------------
# The fixture: the orchestrator (it has tools) gets 8 delegate calls, then answers; a sub-agent
# (no tools) answers its task. "{{last_content}}" is the message the call answers.
node -e '
  const calls = Array.from({ length: Number(process.argv[1]) }, (_, i) =>
    ({ name: "delegate", arguments: { agent: "worker", task: `{{last_content}} part ${i + 1}` } }));
  console.log(JSON.stringify({ rules: [
    { name: "orchestrator, call 1: the delegate calls", match: { last_role: "user", has_tools: true },
      reply: { tool_calls: calls } },
    { name: "orchestrator, call 2: the answer", match: { last_role: "tool" },
      reply: { content: "done: {{last_tool_content}}" } },
    { name: "a sub-agent: its answer", match: { last_role: "user", has_tools: false },
      reply: { content: "sub: {{last_content}}" } } ] }));' "$FANOUT" >"$RESULTS/fixture-script.json"
start_fixture "$FIXTURE" "$RESULTS/fixture-script.json"

# ---------------------------------------------------------------------------------------------
# cairn.
DATA_DIR=$(mktemp -d "$DATA_PARENT/cairn-nestedbench.XXXXXX")
start_cairn "$CAIRN" "$DATA_DIR" --sync "$SYNC" --builtin-tools=false --run-executors=true \
  --llm-base-url "$FIXTURE_URL" --llm-model bench --default-agent=false
log "cairn pid $SERVER_PID on 127.0.0.1:$PORT (--sync $SYNC)"
define() {
  curl -fsS --max-time 10 -XPOST "http://127.0.0.1:$PORT/breadcrumbs" -H 'Content-Type: application/json' \
    -d "{\"title\":\"$1\",\"schema_name\":\"agent.def.v1\",\"context\":$2}" >"$RESULTS/agent-$1.json" ||
    die "defining agent $1 failed"
}
define worker '{"agent_id":"worker","description":"Does one part of the work.","concurrency":64,"stream":false}'
define orchestrator '{"agent_id":"orchestrator","agents":["worker"],"max_children":'$FANOUT',"concurrency":32,
  "max_iterations":4,"stream":false}'
cairn_load cairn-ready 1 1 0 20000 --agent orchestrator || true
[[ $(val cairn-ready runs) -ge 1 && $(val cairn-ready errors) == 0 ]] ||
  die "the orchestrator did not answer (see $RESULTS/cairn-ready.json, $RESULTS/server.log)"
for c in "${LEVEL_LIST[@]}"; do
  log "cairn at concurrency $c: ${WARMUP}s warm-up + ${SECS}s (load $(loadavg))"
  cairn_load "cairn-c$c" "$c" "$SECS" "$WARMUP" "$TIMEOUT_MS" --agent orchestrator ||
    log "cairn-load exited with an error at $c (see $RESULTS/cairn-c$c.stderr)"
  log "cairn c=$c: $(val "cairn-c$c" runs_per_s) runs/s, p50 $(val "cairn-c$c" p50_ms) ms, errors $(val "cairn-c$c" errors)"
done
save_server_end ""
server_alive=$SERVER_ALIVE
stop_server
rm -rf "$DATA_DIR"; DATA_DIR=""

# ---------------------------------------------------------------------------------------------
# LangGraph JS.
if ((RUN_LANGGRAPH)); then
  for c in "${LEVEL_LIST[@]}"; do
    log "LangGraph at concurrency $c: ${WARMUP}s warm-up + ${SECS}s (load $(loadavg))"
    langgraph_load "langgraph-c$c" --base-url "$FIXTURE_URL" --model bench --seconds "$SECS" --warmup-seconds "$WARMUP" \
      --timeout-ms "$TIMEOUT_MS" --fanout "$FANOUT" --concurrency "$c" ||
      log "LangGraph bench exited with status $PHASE_RC at $c (see $RESULTS/langgraph-c$c.stderr)"
    log "LangGraph c=$c: $(val "langgraph-c$c" runs_per_s) runs/s, p50 $(val "langgraph-c$c" p50_ms) ms"
  done
fi
stop_fixture

# ---------------------------------------------------------------------------------------------
# Summary.
per_sub() { awk -v v="$1" -v n="$FANOUT" 'BEGIN { if (v == "") print "n/a"; else printf "%.2f", v / n }'; }
row() { printf '%-5s | %-9s | %8s %9s %9s | %-14s\n' "$@"; }
fails=0
{
  summary_head "nested-agents" "the load generators, the fixture server and the runtime under test share the $(nproc) CPUs"
  echo "workload: one run = user message -> orchestrator model call (fixture: $FANOUT delegate calls) ->" \
       "$FANOUT sub-agents in parallel (one model call each) -> orchestrator model call (final answer);" \
       "$((FANOUT + 2)) model calls, $((FANOUT + 1)) executions; cairn --sync $SYNC"
  echo
  row "runs" "runtime" "runs/s" "p50 ms" "p99 ms" "problems"
  for c in "${LEVEL_LIST[@]}"; do
    row "$c" cairn "$(val "cairn-c$c" runs_per_s)" "$(val "cairn-c$c" p50_ms)" "$(val "cairn-c$c" p99_ms)" "$(problems "cairn-c$c")"
    ((RUN_LANGGRAPH)) && row "$c" langgraph "$(val "langgraph-c$c" runs_per_s)" "$(val "langgraph-c$c" p50_ms)" \
      "$(val "langgraph-c$c" p99_ms)" "$(problems "langgraph-c$c")"
  done
  echo
  if ((RUN_LANGGRAPH)); then
    echo "target: cairn runs/s >= ${TARGET} x LangGraph runs/s at each level, no errors on either side"
    for c in "${LEVEL_LIST[@]}"; do
      a=$(val "cairn-c$c" runs_per_s) b=$(val "langgraph-c$c" runs_per_s)
      ratio=$(ratio_of "$a" "$b")
      result=$(awk -v r="$ratio" -v t="$TARGET" 'BEGIN { print (r != "n/a" && r + 0 >= t) ? "PASS" : "FAIL" }')
      bad=$(awk '{ $1 = $1; print }' <<<"$(problems "cairn-c$c") $(problems "langgraph-c$c")")
      [[ -n $bad ]] && result="FAIL ($bad)"
      [[ $result == PASS ]] || fails=$((fails + 1))
      printf '  %3s runs in flight: cairn %s runs/s / LangGraph %s runs/s = %sx  %s\n' "$c" "${a:-?}" "${b:-?}" "$ratio" "$result"
    done
  else
    echo "LangGraph skipped (NESTED_BENCH_LANGGRAPH=0): no ratio"
  fi
  echo
  echo "writes (cairn: store writes per run from /metrics; LangGraph: checkpointer rows per run):"
  for c in "${LEVEL_LIST[@]}"; do
    w=$(val "cairn-c$c" writes_per_run)
    printf '  cairn     %3s: %s writes in %s transactions per run, %s events; %s writes per sub-agent (run writes / %s)\n' \
      "$c" "${w:-?}" "$(val "cairn-c$c" transactions_per_run)" "$(val "cairn-c$c" events_per_run)" "$(per_sub "$w")" "$FANOUT"
    if ((RUN_LANGGRAPH)); then
      printf '  langgraph %3s: %s checkpoints + %s writes rows per run\n' "$c" \
        "$(val "langgraph-c$c" sqlite.checkpoints_per_run)" "$(val "langgraph-c$c" sqlite.writes_per_run)"
    fi
  done
  ((server_alive)) || echo "  THE CAIRN SERVER WAS NOT RUNNING AT THE END (see server.log)"
  echo
  echo "raw outputs: $RESULTS"
} >"$RESULTS/summary.txt"
cat "$RESULTS/summary.txt"
((server_alive)) || fails=$((fails + 1))
if ((STRICT && fails > 0)); then exit 3; fi
exit 0
