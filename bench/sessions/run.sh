#!/usr/bin/env bash
# bench/sessions/run.sh [BUILD_DIR] [--quick] — the sessions benchmark (run by `make bench`): what the
# sessions facade (docs/sessions.md) costs on top of the bare agent path, and what idle sessions
# followed over SSE cost in memory.
#
# Builds nothing: BUILD_DIR (default build/bench) must hold a release src/app/cairn, e.g.
#   cmake -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DCAIRN_BUILD_TESTS=OFF -DCAIRN_BUILD_BENCH=ON
#   cmake --build build/bench -j2 --target cairn
#
# The model is the project's scripted OpenAI-compatible fixture server
# (tests/e2e/llm-node/fixture-server.mjs --no-record), answering every request at once (0 ms) with a
# plain answer; the agent has no tools:
#   {"agent_id": "bench", "stream": false, "concurrency": 32, "max_iterations": 2}
# cairn: `cairn serve --sync full --llm-base-url <fixture> --llm-model bench --default-agent=false
# --builtin-tools=false --session-workers 32` on a fresh data directory.
#
# 1. Closed loop at each level (1, 32, 256 runs in flight; warm-up, then a measured window), with
#    load.mjs (Node built-ins only):
#      session  C sessions, each followed by its own GET /sessions/{id}/events; a run is
#               POST /sessions/{id}/messages → the execution's execution.completed on that stream
#      agent    the bare agent path: C workers with their own tag and GET /events/stream?any_tags=…;
#               a run is POST /breadcrumbs user.message.v1 {content, agent_id} → its agent.response.v1
#    Latencies from the POST: first = the run's first frame (the user message's), done = the end.
#    Target: the facade adds ≤ 30% to the agent path's p50 `done` latency at each level.
# 2. Idle: a fresh server, 10,000 sessions created, then 10,000 GET /sessions/{id}/events held open by
#    one Node process; the server's RSS before and with the streams (and per stream), 10 probe
#    messages that must reach their streams, RSS after closing them.
# Prints a table; every raw output goes to BUILD_DIR/results/sessions-<stamp>/. Each phase has a
# timeout; the servers are stopped on exit. The load generator and the fixture share the CPUs with
# the server.
#
# Environment (all optional):
#   SESSION_BENCH_SECONDS=10          measured seconds per (path, level)
#   SESSION_BENCH_WARMUP=2            warm-up seconds before each measurement
#   SESSION_BENCH_LEVELS="1 32 256"   runs in flight
#   SESSION_BENCH_IDLE=10000          idle sessions with a stream each (0 skips the phase)
#   SESSION_BENCH_WORKERS=32          --session-workers, and the agent's concurrency (max 64)
#   SESSION_BENCH_STREAM=0            1: streaming model replies (the agent's "stream": true)
#   SESSION_BENCH_SYNC=full           cairn's --sync
#   SESSION_BENCH_TIMEOUT_MS=30000    a run with no end after this long is a timeout
#   SESSION_BENCH_TARGET=30           the most the facade may add to the p50 latency, in percent
#   SESSION_BENCH_SERVER_ARGS=""      extra `cairn serve` flags
#   SESSION_BENCH_DATA_PARENT=$TMPDIR where the temporary data directories go
#   SESSION_BENCH_STRICT=0            1: exit with status 3 when a level FAILs
#   --quick (or SESSION_BENCH_QUICK=1): 3 s per measurement, 1 s of warm-up, 2,000 idle sessions
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck source=bench/args.sh
source "$HERE/../args.sh"
parse_bench_args sessions "${SESSION_BENCH_QUICK:-0}" "$@"

if ((QUICK)); then
  SECS=${SESSION_BENCH_SECONDS:-3}; WARMUP=${SESSION_BENCH_WARMUP:-1}; IDLE=${SESSION_BENCH_IDLE:-2000}
else
  SECS=${SESSION_BENCH_SECONDS:-10}; WARMUP=${SESSION_BENCH_WARMUP:-2}; IDLE=${SESSION_BENCH_IDLE:-10000}
fi
LEVELS=${SESSION_BENCH_LEVELS:-"1 32 256"}
WORKERS=${SESSION_BENCH_WORKERS:-32}
STREAM=${SESSION_BENCH_STREAM:-0}
SYNC=${SESSION_BENCH_SYNC:-full}
TIMEOUT_MS=${SESSION_BENCH_TIMEOUT_MS:-30000}
TARGET=${SESSION_BENCH_TARGET:-30}
DATA_PARENT=${SESSION_BENCH_DATA_PARENT:-${TMPDIR:-/tmp}}
STRICT=${SESSION_BENCH_STRICT:-0}
read -ra LEVEL_LIST <<<"$LEVELS"
((${#LEVEL_LIST[@]} > 0)) || { echo "bench/sessions: SESSION_BENCH_LEVELS is empty" >&2; exit 2; }
[[ $STREAM == 0 || $STREAM == 1 ]] || { echo "bench/sessions: SESSION_BENCH_STREAM is 0 or 1" >&2; exit 2; }
((WORKERS >= 1 && WORKERS <= 64)) || { echo "bench/sessions: SESSION_BENCH_WORKERS is 1..64" >&2; exit 2; }

CAIRN=$BUILD/src/app/cairn
FIXTURE=$ROOT/tests/e2e/llm-node/fixture-server.mjs
LOAD=$HERE/load.mjs
need_commands " (run make deps)" node curl awk timeout
need_cairn "$CAIRN"
[[ -f $FIXTURE ]] || { echo "bench/sessions: $FIXTURE not found" >&2; exit 2; }
if ((IDLE > 0)); then
  # One fd per stream in the server and in the client, plus slack.
  need=$((IDLE + 1024))
  [[ $(ulimit -Hn) == unlimited || $(ulimit -Hn) -ge $need ]] ||
    { echo "bench/sessions: the open-file limit ($(ulimit -Hn)) is below $need; lower SESSION_BENCH_IDLE" >&2; exit 2; }
  ulimit -n "$(ulimit -Hn)"
fi

new_results
# shellcheck source=bench/lib.sh
source "$HERE/../lib.sh"

trap_cleanup

{
  machine_info
  data_fs_info "$DATA_PARENT"
  echo "node=$(node --version) nofile=$(ulimit -n)"
  echo "seconds=$SECS warmup=$WARMUP levels=$LEVELS idle=$IDLE workers=$WORKERS stream=$STREAM sync=$SYNC" \
       "timeout_ms=$TIMEOUT_MS target_pct=$TARGET quick=$QUICK server_args=${SESSION_BENCH_SERVER_ARGS:-}"
} >"$RESULTS/machine.txt"
show_machine

# ---------------------------------------------------------------------------------------------
# The fixture: every request gets a plain answer at once.
cat >"$RESULTS/fixture-script.json" <<'EOF'
{"rules": [{"name": "a plain answer, no delay", "match": {}, "reply": {"content": "The answer to: {{last_content}}"}}]}
EOF
start_fixture "$FIXTURE" "$RESULTS/fixture-script.json"

# start_bench_server NAME: cairn on a fresh data directory, with the bench agent defined.
start_bench_server() {
  local name=$1
  DATA_DIR=$(mktemp -d "$DATA_PARENT/cairn-sessionbench.XXXXXX")
  # shellcheck disable=SC2086  # SESSION_BENCH_SERVER_ARGS is a list of flags
  start_cairn "$CAIRN" "$DATA_DIR" --sync "$SYNC" --builtin-tools=false --run-executors=true \
    --llm-base-url "$FIXTURE_URL" --llm-model bench --default-agent=false --session-workers "$WORKERS" \
    ${SESSION_BENCH_SERVER_ARGS:-}
  cp "$RESULTS/server.log" "$RESULTS/server-$name.start.log" 2>/dev/null || true
  local stream_json
  stream_json=$( ((STREAM)) && echo true || echo false)
  curl -fsS --max-time 10 -XPOST "http://127.0.0.1:$PORT/breadcrumbs" -H 'Content-Type: application/json' \
    -d '{"title":"bench agent","schema_name":"agent.def.v1","context":{"agent_id":"bench",
         "description":"The sessions benchmark: a plain answer, no tools.","concurrency":'"$WORKERS"',
         "max_iterations":2,"stream":'"$stream_json"'}}' >"$RESULTS/agent-def-$name.json" ||
    die "defining the agent failed"
  log "cairn ($name) pid $SERVER_PID on 127.0.0.1:$PORT (--sync $SYNC, --session-workers $WORKERS)"
}
stop_bench_server() {
  local name=$1
  curl -fsS --max-time 30 "http://127.0.0.1:$PORT/metrics" >"$RESULTS/metrics-$name.txt" 2>/dev/null || true
  SERVER_ALIVE=1
  kill -0 "$SERVER_PID" 2>/dev/null || SERVER_ALIVE=0
  stop_server
  cp "$RESULTS/server.log" "$RESULTS/server-$name.log" 2>/dev/null || true
  rm -rf "$DATA_DIR"; DATA_DIR=""
}

# load NAME MODE C SECONDS WARMUP: one load.mjs phase into RESULTS/NAME.{json,stderr,kv}.
load() {
  local name=$1 mode=$2 c=$3 secs=$4 warm=$5 rc=0
  timeout --kill-after=10 $((warm + secs + TIMEOUT_MS / 1000 + 60)) node "$LOAD" --mode "$mode" --port "$PORT" \
    --agent bench --concurrency "$c" --seconds "$secs" --warmup-seconds "$warm" --timeout-ms "$TIMEOUT_MS" \
    --server-pid "$SERVER_PID" --clk-tck "$(getconf CLK_TCK)" \
    >"$RESULTS/$name.json" 2> >(tee -a "$RESULTS/$name.stderr" >&2) || rc=$?
  { [[ -s $RESULTS/$name.json ]] && json_kv "$RESULTS/$name.json"; echo "exit=$rc"; echo "loadavg_after=$(loadavg)"; } \
    >"$RESULTS/$name.kv"
  return "$rc"
}

# ---------------------------------------------------------------------------------------------
# 1. Latency and throughput, session path against the bare agent path.
start_bench_server loop
# The agent's executor starts asynchronously: one run of each path must succeed first.
load ready-agent agent 1 1 0 || true
[[ $(val ready-agent runs) -ge 1 && $(val ready-agent errors) == 0 ]] ||
  die "the agent did not answer (see $RESULTS/ready-agent.*, $RESULTS/server.log)"
load ready-session session 1 1 0 || true
[[ $(val ready-session runs) -ge 1 && $(val ready-session errors) == 0 ]] ||
  die "the session path did not complete a run (see $RESULTS/ready-session.*, $RESULTS/server.log)"
log "ready: agent p50 $(val ready-agent done_p50_ms) ms, session p50 $(val ready-session done_p50_ms) ms"

for c in "${LEVEL_LIST[@]}"; do
  for mode in session agent; do
    log "$mode path at $c in flight: ${WARMUP}s warm-up + ${SECS}s (load $(loadavg))"
    load "$mode-c$c" "$mode" "$c" "$SECS" "$WARMUP" || log "load.mjs exited with an error ($mode, $c; see $RESULTS/$mode-c$c.stderr)"
    log "$mode c=$c: $(val "$mode-c$c" runs_per_s) runs/s, first p50 $(val "$mode-c$c" first_p50_ms) ms," \
        "done p50 $(val "$mode-c$c" done_p50_ms) ms p99 $(val "$mode-c$c" done_p99_ms) ms, errors $(val "$mode-c$c" errors)"
  done
done
stop_bench_server loop
loop_alive=$SERVER_ALIVE

# ---------------------------------------------------------------------------------------------
# 2. Idle sessions followed over SSE.
idle_alive=1
if ((IDLE > 0)); then
  start_bench_server idle
  log "idle: $IDLE sessions, one stream each"
  rc=0
  timeout --kill-after=10 $((IDLE / 50 + TIMEOUT_MS / 1000 + 120)) node "$LOAD" --mode idle --port "$PORT" --agent bench \
    --sessions "$IDLE" --open-concurrency 256 --timeout-ms "$TIMEOUT_MS" --server-pid "$SERVER_PID" \
    >"$RESULTS/idle.json" 2> >(tee -a "$RESULTS/idle.stderr" >&2) || rc=$?
  { [[ -s $RESULTS/idle.json ]] && json_kv "$RESULTS/idle.json"; echo "exit=$rc"; } >"$RESULTS/idle.kv"
  ((rc == 0)) || log "the idle phase exited with status $rc (see $RESULTS/idle.stderr)"
  stop_bench_server idle
  idle_alive=$SERVER_ALIVE
fi
stop_fixture

# ---------------------------------------------------------------------------------------------
# Summary.
mb() { awk -v k="$1" 'BEGIN { if (k == "") print "n/a"; else printf "%.1f", k / 1024 }'; }
added() {  # added PERCENT of session over agent for KEY at level C
  awk -v s="$(val "session-c$1" "$2")" -v a="$(val "agent-c$1" "$2")" \
    'BEGIN { if (s == "" || a == "" || a + 0 == 0) print "n/a"; else printf "%+.0f%%", (s / a - 1) * 100 }'
}
row() { printf '%-6s | %-7s | %8s %8s | %8s %8s | %8s | %s\n' "$@"; }
fails=0
{
  summary_head "sessions" "the load generator and the fixture LLM share the $(nproc) CPUs with the server"
  echo "cairn --sync $SYNC --session-workers $WORKERS; agent: no tools, stream=$STREAM, concurrency $WORKERS; fixture LLM: plain answer, 0 ms"
  echo "closed loop, C runs in flight; ${WARMUP}s warm-up + ${SECS}s per row; latency from the POST:"
  echo "  first = the run's first frame on its stream, done = execution.completed (session) / agent.response.v1 (agent)"
  echo "target: the session path adds <= ${TARGET}% to the agent path's p50 done latency"
  echo
  row "in flt" "path" "first50" "first99" "done50" "done99" "runs/s" "notes"
  for c in "${LEVEL_LIST[@]}"; do
    for mode in session agent; do
      n="$mode-c$c"
      notes=""
      [[ $(val "$n" errors) == 0 ]] || notes+="errors=$(val "$n" errors) $(grep -o '"error_samples":{[^}]*}' "$RESULTS/$n.json" 2>/dev/null | head -c 200) "
      [[ $(val "$n" exit) == 0 ]] || notes+="exit=$(val "$n" exit) "
      notes+="server CPU $(val "$n" server_cpu_us_per_run) us/run"
      row "$c" "$mode" "$(val "$n" first_p50_ms)" "$(val "$n" first_p99_ms)" "$(val "$n" done_p50_ms)" \
          "$(val "$n" done_p99_ms)" "$(val "$n" runs_per_s)" "$notes"
    done
    pct=$(awk -v s="$(val "session-c$c" done_p50_ms)" -v a="$(val "agent-c$c" done_p50_ms)" \
      'BEGIN { if (s == "" || a == "" || a + 0 == 0) print ""; else printf "%.1f", (s / a - 1) * 100 }')
    result=$(awk -v p="$pct" -v t="$TARGET" 'BEGIN { print (p != "" && p + 0 <= t + 0) ? "PASS" : "FAIL" }')
    [[ $(val "session-c$c" errors) == 0 && $(val "agent-c$c" errors) == 0 ]] || result="FAIL (errors)"
    [[ $result == PASS ]] || fails=$((fails + 1))
    echo "       facade cost at $c: done p50 $(added "$c" done_p50_ms), p99 $(added "$c" done_p99_ms)," \
         "first p50 $(added "$c" first_p50_ms); runs/s $(added "$c" runs_per_s); $result"
    echo "       growth over the window (p50 of the first -> last tenth of the runs; ~runs per session or worker):" \
         "session $(val "session-c$c" done_p50_first_tenth_ms) -> $(val "session-c$c" done_p50_last_tenth_ms) ms" \
         "(~$(val "session-c$c" runs_per_worker)), agent $(val "agent-c$c" done_p50_first_tenth_ms) ->" \
         "$(val "agent-c$c" done_p50_last_tenth_ms) ms (~$(val "agent-c$c" runs_per_worker))"
  done
  echo
  if ((IDLE > 0)); then
    echo "idle: $(val idle sessions) sessions (created at $(val idle sessions_per_s)/s), $(val idle streams_open) streams open" \
         "in $(val idle open_s) s ($(val idle streams_failed) failed); $(val idle probes_ok)/$(val idle probes) probe messages" \
         "reached their stream in $(val idle probe_ms) ms"
    echo "  server RSS: $(mb "$(val idle rss_before_kb)") MB without streams, $(mb "$(val idle rss_streams_kb)") MB with them" \
         "($(val idle rss_per_stream_kb) KB per stream), $(mb "$(val idle rss_closed_kb)") MB after closing them;" \
         "peak $(mb "$(val idle hwm_kb)") MB; $(val idle threads_streams) threads; fds $(val idle fds_before) -> $(val idle fds_streams) -> $(val idle fds_closed)"
    [[ $(val idle exit) == 0 ]] || { echo "  THE IDLE PHASE FAILED (exit $(val idle exit)); see idle.stderr"; fails=$((fails + 1)); }
  fi
  for name in loop idle; do
    [[ -f $RESULTS/server-$name.log ]] || continue
    echo "  server log ($name): $(wc -l <"$RESULTS/server-$name.log") lines, $(grep -ciE 'error|warn' "$RESULTS/server-$name.log" || true) with error/warn"
  done
  ((loop_alive)) || echo "  THE SERVER OF THE CLOSED-LOOP PHASE WAS NOT RUNNING AT THE END (see server-loop.log)"
  ((idle_alive)) || echo "  THE SERVER OF THE IDLE PHASE WAS NOT RUNNING AT THE END (see server-idle.log)"
  echo
  echo "raw outputs: $RESULTS"
} >"$RESULTS/summary.txt"  # not a pipe into tee: `fails` must survive the block
cat "$RESULTS/summary.txt"
((loop_alive && idle_alive)) || fails=$((fails + 1))

if ((STRICT && fails > 0)); then exit 3; fi
exit 0
