# bench/lib.sh — shell helpers shared by the bench/*/run.sh scripts. Source it after
# setting BENCH_NAME (for log lines), RESULTS (the run's output directory) and LOG (its log file),
# e.g. with parse_bench_args and new_results (bench/args.sh).
# shellcheck shell=bash

BENCH_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

log() { printf '[bench/%s %s] %s\n' "$BENCH_NAME" "$(date +%T)" "$*" | tee -a "$LOG" >&2; }
die() { log "error: $*"; exit 1; }
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# stop_pid PID NAME: SIGTERM, up to 10 s to exit, then SIGKILL; reaps it. No-op for an empty PID.
stop_pid() {
  local pid=$1
  [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    log "$2 ($pid) did not stop within 10 s; killing it"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}

# machine_info: the machine's key=value lines (CPU, kernel, memory, load) for machine.txt.
machine_info() {
  echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "nproc=$(nproc)"
  echo "cpu_model=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)"
  echo "kernel=$(uname -sr)"
  echo "mem_total_mb=$(awk '/^MemTotal:/ {print int($2/1024)}' /proc/meminfo)"
  echo "loadavg_start=$(loadavg)"
}
# data_fs_info DIR: the machine.txt line of the file system DIR is on (where the data directories go).
data_fs_info() { echo "data_fs=$(df -PT "$1" | awk 'NR==2 {print $2 " on " $1}')"; }

# show_machine: says where the results go and what machine.txt holds (on stderr and in the log).
show_machine() {
  log "results in $RESULTS"
  sed 's/^/  /' "$RESULTS/machine.txt" >&2
}

# The servers a run.sh starts (start_cairn, start_fixture) and its data directory, stopped and
# removed on exit once trap_cleanup has run.
SERVER_PID="" PORT="" DATA_DIR="" FIXTURE_PID="" FIXTURE_PORT=""
stop_server() { stop_pid "$SERVER_PID" cairn; SERVER_PID=""; }
stop_fixture() { stop_pid "$FIXTURE_PID" fixture-server; FIXTURE_PID=""; }
# shellcheck disable=SC2317  # invoked by the EXIT trap
cleanup() {
  local rc=$?
  stop_server
  stop_fixture
  [[ -n $DATA_DIR && -d $DATA_DIR ]] && rm -rf "$DATA_DIR"
  exit "$rc"
}
trap_cleanup() {
  trap cleanup EXIT
  trap 'log "interrupted"; exit 130' INT TERM
}

# cpu_ms PID: CPU time (user + system) of a process so far, in ms; empty when it is gone.
cpu_ms() { awk -v tck="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print int(($12 + $13) * 1000 / tck) }' "/proc/$1/stat" 2>/dev/null || true; }

# start_cairn CAIRN DATA_DIR [SERVE_FLAGS...]: starts `cairn serve` on 127.0.0.1:0 with its data in
# DATA_DIR/data and its log in $RESULTS/server.log, waits (30 s at most) for the port file, checks
# GET /health; sets SERVER_PID and PORT.
start_cairn() {
  local cairn=$1 dir=$2
  shift 2
  local port_file=$dir/port
  "$cairn" serve --listen 127.0.0.1:0 --data-dir "$dir/data" --port-file "$port_file" --log-level warn "$@" \
    >"$RESULTS/server.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 1 300); do  # the file appears atomically
    [[ -s $port_file ]] && break
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$RESULTS/server.log" >&2; die "the server exited at start-up"; }
    sleep 0.1
  done
  [[ -s $port_file ]] || die "no port file after 30 s"
  PORT=$(grep -oE '[0-9]+' "$port_file" | tail -n 1)
  [[ $PORT =~ ^[0-9]+$ ]] || die "cannot read a port from the port file"
  curl -fsS --max-time 5 "http://127.0.0.1:$PORT/health" >"$RESULTS/health.json" || die "GET /health failed"
}

# start_fixture FIXTURE_JS SCRIPT: the project's scripted LLM server (tests/e2e/llm-node) on a free
# loopback port, not recording requests; sets FIXTURE_PID, FIXTURE_PORT and FIXTURE_URL (…/v1).
# Its output goes to $RESULTS/fixture.log.
start_fixture() {
  local port_file=$RESULTS/fixture.port
  node "$1" --script "$2" --port 0 --port-file "$port_file" --no-record >"$RESULTS/fixture.log" 2>&1 &
  FIXTURE_PID=$!
  for _ in $(seq 1 100); do
    [[ -s $port_file ]] && break
    kill -0 "$FIXTURE_PID" 2>/dev/null || { cat "$RESULTS/fixture.log" >&2; die "the fixture server exited at start-up"; }
    sleep 0.1
  done
  [[ -s $port_file ]] || die "no fixture port file after 10 s"
  FIXTURE_PORT=$(grep -oE '[0-9]+' "$port_file" | head -n 1)
  FIXTURE_URL=http://127.0.0.1:$FIXTURE_PORT/v1
  curl -fsS --max-time 5 "http://127.0.0.1:$FIXTURE_PORT/_health" >/dev/null || die "the fixture server does not answer"
  log "fixture server pid $FIXTURE_PID on $FIXTURE_URL"
}

# ---- the load generators' results ---------------------------------------------------------------
# json_kv FILE: the scalar fields of the JSON object on FILE's last line as key=value lines (nested
# objects flattened with dots).
json_kv() {
  node -e '
    const lines = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n");
    const walk = (o, p) => { for (const [k, v] of Object.entries(o)) {
      if (v !== null && typeof v === "object") walk(v, p + k + "."); else console.log(p + k + "=" + v); } };
    walk(JSON.parse(lines[lines.length - 1]), "");' "$1"
}
# val NAME KEY: a value of RESULTS/NAME.kv ("" if absent).
val() { grep -m1 "^$2=" "$RESULTS/$1.kv" 2>/dev/null | cut -d= -f2- || true; }
# metric FILE NAME: a sample of a /metrics snapshot (0 when absent).
metric() { awk -v m="$2" '$1 == m { v = $2 } END { print v + 0 }' "$1" 2>/dev/null || echo 0; }

# load_phase NAME TIMEOUT_S COMMAND...: runs a load generator that prints one JSON line into
# RESULTS/NAME.json (its stderr into NAME.stderr and ours), bounded by TIMEOUT_S; its load average
# before and after, the fixture server's CPU time over it (when one runs) and its exit status go
# to NAME.phase. Sets PHASE_RC to the status and returns it.
load_phase() {
  local name=$1 secs=$2 f0="" f1=""
  shift 2
  PHASE_RC=0
  echo "loadavg_before=$(loadavg)" >"$RESULTS/$name.phase"
  [[ -z $FIXTURE_PID ]] || f0=$(cpu_ms "$FIXTURE_PID")
  timeout --kill-after=10 "$secs" "$@" >"$RESULTS/$name.json" 2> >(tee -a "$RESULTS/$name.stderr" >&2) || PHASE_RC=$?
  [[ -z $FIXTURE_PID ]] || f1=$(cpu_ms "$FIXTURE_PID")
  {
    [[ -z $FIXTURE_PID ]] || echo "fixture_cpu_ms=$((${f1:-0} - ${f0:-0}))"
    echo "loadavg_after=$(loadavg)"
    echo "exit=$PHASE_RC"
  } >>"$RESULTS/$name.phase"
  return "$PHASE_RC"
}

# cairn_load NAME CONCURRENCY SECONDS WARMUP TIMEOUT_MS WHAT...: one bench/agents/cairn-load.mjs
# phase (WHAT: --agent ID or --workflow NAME) against the cairn on PORT into RESULTS/NAME.*, with
# the server's transactions and events per run from /metrics before and after.
cairn_load() {
  local name=$1 c=$2 secs=$3 warm=$4 tmo=$5 rc=0 m0=$RESULTS/$1.metrics-before m1=$RESULTS/$1.metrics-after
  shift 5
  curl -fsS --max-time 10 "http://127.0.0.1:$PORT/metrics" >"$m0" 2>/dev/null || true
  load_phase "$name" $((warm + secs + tmo / 1000 + 30)) node "$BENCH_LIB_DIR/agents/cairn-load.mjs" --port "$PORT" "$@" \
    --concurrency "$c" --seconds "$secs" --warmup-seconds "$warm" --timeout-ms "$tmo" --server-pid "$SERVER_PID" \
    --clk-tck "$(getconf CLK_TCK)" || rc=$?
  curl -fsS --max-time 10 "http://127.0.0.1:$PORT/metrics" >"$m1" 2>/dev/null || true
  if [[ -s $RESULTS/$name.json ]]; then
    json_kv "$RESULTS/$name.json" >"$RESULTS/$name.kv"
    # Every run of the phase (warm-up included) is in the metrics' difference.
    local all=$(($(val "$name" warmup_runs) + $(val "$name" runs) + $(val "$name" errors)))
    awk -v n="$all" -v t0="$(metric "$m0" cairn_store_commit_seconds_count)" -v t1="$(metric "$m1" cairn_store_commit_seconds_count)" \
        -v s0="$(metric "$m0" cairn_store_commit_seconds_sum)" -v s1="$(metric "$m1" cairn_store_commit_seconds_sum)" \
        -v w0="$(metric "$m0" cairn_store_commit_batch_writes_sum)" -v w1="$(metric "$m1" cairn_store_commit_batch_writes_sum)" \
        -v e0="$(metric "$m0" cairn_bus_last_seq)" -v e1="$(metric "$m1" cairn_bus_last_seq)" 'BEGIN {
      if (n <= 0 || t1 <= t0) exit
      printf "phase_runs=%d\ntransactions_per_run=%.2f\nwrites_per_run=%.2f\nevents_per_run=%.2f\ncommit_ms_mean=%.3f\n",
        n, (t1 - t0) / n, (w1 - w0) / n, (e1 - e0) / n, 1000 * (s1 - s0) / (t1 - t0) }' >>"$RESULTS/$name.kv"
    cat "$RESULTS/$name.phase" >>"$RESULTS/$name.kv"
  else
    cp "$RESULTS/$name.phase" "$RESULTS/$name.kv"
  fi
  return "$rc"
}

# langgraph_load NAME ARGS...: one LANGGRAPH_DIR/bench.mjs phase (its checkpoint file in a fresh
# temporary directory under DATA_PARENT, removed by bench.mjs; bounded by PHASE_TIMEOUT) into
# RESULTS/NAME.*. Returns 1 when it printed no result (its exit status in PHASE_RC).
langgraph_load() {
  local name=$1
  shift
  load_phase "$name" "$PHASE_TIMEOUT" env TMPDIR="$DATA_PARENT" node "$LANGGRAPH_DIR/bench.mjs" "$@" || true
  if [[ -s $RESULTS/$name.json ]]; then
    { json_kv "$RESULTS/$name.json"; cat "$RESULTS/$name.phase"; } >"$RESULTS/$name.kv"
  else
    cp "$RESULTS/$name.phase" "$RESULTS/$name.kv"
    return 1
  fi
}

# save_server_end SUFFIX: cairn's /metrics into RESULTS/metrics$SUFFIX.txt and its RSS, peak RSS
# and threads into server-end$SUFFIX.kv; SERVER_ALIVE: 1 while it still runs, else 0.
# shellcheck disable=SC2034  # SERVER_ALIVE is the caller's
save_server_end() {
  curl -fsS --max-time 30 "http://127.0.0.1:$PORT/metrics" >"$RESULTS/metrics$1.txt" 2>/dev/null || true
  SERVER_ALIVE=1
  kill -0 "$SERVER_PID" 2>/dev/null || SERVER_ALIVE=0
  if [[ -r /proc/$SERVER_PID/status ]]; then
    awk '/^(VmRSS|VmHWM|Threads):/ {print $1 $2}' "/proc/$SERVER_PID/status" | tr ':' '=' >"$RESULTS/server-end$1.kv"
  fi
}

# ---- the summaries ------------------------------------------------------------------------------
# summary_head TITLE SHARING: the summary's first lines: "cairn TITLE benchmark STAMP", the machine,
# and the load average at the start and now, followed by "(SHARING)".
summary_head() {
  echo "cairn $1 benchmark $STAMP"
  echo "machine: $(grep -E '^(nproc|cpu_model|kernel|mem_total_mb)=' "$RESULTS/machine.txt" | paste -sd '|' | sed 's/|/, /g')"
  echo "load average: start $(grep '^loadavg_start=' "$RESULTS/machine.txt" | cut -d= -f2), end $(loadavg) ($2)"
}
# problems NAME: what went wrong in RESULTS/NAME.kv (errors, timeouts, the stream's troubles, the
# exit status), "no-result" without a result, "" when nothing did.
problems() {
  local name=$1 out="" v
  [[ -z $(val "$name" runs) ]] && { echo "no-result"; return; }
  for k in errors timeouts stream.late stream.dropped; do
    v=$(val "$name" "$k")
    [[ -n $v && $v != 0 ]] && out+="$k=$v "
  done
  [[ $(val "$name" stream.closed_early) == true ]] && out+="stream-closed "
  [[ $(val "$name" exit) != 0 ]] && out+="exit=$(val "$name" exit) "
  echo "${out% }"
}
# cpu_step NAME KEY: CPU per step in us of a 3-step run (KEY: the runtime's CPU per run).
cpu_step() { awk -v v="$(val "$1" "$2")" 'BEGIN { if (v == "") print "n/a"; else printf "%.0f", v / 3 }'; }
# ratio_of A B: A / B to 2 decimals, n/a when either is missing or B is 0.
ratio_of() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b + 0 == 0) print "n/a"; else printf "%.2f", a / b }'; }
