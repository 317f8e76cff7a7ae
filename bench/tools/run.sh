#!/usr/bin/env bash
# bench/tools/run.sh BUILD_DIR [--quick] — the tool round-trip benchmark (run by `make bench`).
#
# Builds nothing: BUILD_DIR must hold src/app/cairn and bench/tools/tool_roundtrip_bench, e.g.
#   cmake --build BUILD_DIR --target cairn tool_roundtrip_bench
#
# Starts `cairn serve` on loopback with a fresh data directory and runs tool_roundtrip_bench
# against it: at each level (number of concurrent callers, one keep-alive connection and one
# request in flight each) it measures, back to back,
#   floor      POST /breadcrumbs (schema bench.floor.v1) → that create's event on GET /events/stream
#   roundtrip  POST /breadcrumbs (tool.request.v1 for the built-in echo tool) → the tool.response.v1
#              event carrying its request_id on GET /events/stream
# and reports requests/s, latency p50/p99/max, and whether every request got exactly one event.
# Target (per level): roundtrip requests/s ≥ 0.4 × floor requests/s, no missing or duplicated
# event, no failed request; p99 is reported. Stops the server (SIGTERM), prints the summary and
# writes every raw output to BUILD_DIR/results/tools-<stamp>/.
#
# The load generator runs on the same CPUs as the server (absolute figures depend on that; the
# ratio, measured in the same run, much less).
#
# Environment (all optional):
#   TOOL_BENCH_SECONDS=10         measured seconds per (mode, level), after 1 s of warm-up
#   TOOL_BENCH_LEVELS="1 16 64"   numbers of concurrent callers
#   TOOL_BENCH_TIMEOUT_MS=10000   a caller stops waiting for its event after this long (counted)
#   TOOL_BENCH_SERVER_ARGS=""     extra `cairn serve` flags
#   TOOL_BENCH_DATA_PARENT=$TMPDIR where the temporary data directory goes
#   TOOL_BENCH_STRICT=0           1: exit with status 3 when a level FAILs
#   --quick (or TOOL_BENCH_QUICK=1): 2 s per measurement, levels "1 16"
set -euo pipefail

usage() { echo "usage: bench/tools/run.sh BUILD_DIR [--quick]" >&2; exit 2; }
[[ $# -ge 1 && $# -le 2 ]] || usage
BUILD=$(cd "$1" && pwd) || usage
QUICK=${TOOL_BENCH_QUICK:-0}
[[ -n ${2:-} && ${2:-} != --quick ]] && usage
[[ ${2:-} == --quick ]] && QUICK=1
BENCH_NAME=tools
# shellcheck source=bench/args.sh
source "$(dirname "${BASH_SOURCE[0]}")/../args.sh"  # need_commands, need_cairn, new_results

CAIRN=$BUILD/src/app/cairn
BENCH=$BUILD/bench/tools/tool_roundtrip_bench
if ((QUICK)); then
  SECS=${TOOL_BENCH_SECONDS:-2}; LEVELS=${TOOL_BENCH_LEVELS:-"1 16"}
else
  SECS=${TOOL_BENCH_SECONDS:-10}; LEVELS=${TOOL_BENCH_LEVELS:-"1 16 64"}
fi
TIMEOUT_MS=${TOOL_BENCH_TIMEOUT_MS:-10000}
DATA_PARENT=${TOOL_BENCH_DATA_PARENT:-${TMPDIR:-/tmp}}
STRICT=${TOOL_BENCH_STRICT:-0}
read -ra LEVEL_LIST <<<"$LEVELS"
((${#LEVEL_LIST[@]} > 0)) || { echo "bench/tools: TOOL_BENCH_LEVELS is empty" >&2; exit 2; }
# Bounded: per measurement warm-up + seconds + one caller timeout, plus start-up and slack.
STEP_TIMEOUT=$((${#LEVEL_LIST[@]} * 2 * (SECS + 1 + TIMEOUT_MS / 1000 + 5) + 120))

need_commands "" awk timeout curl
need_cairn "$CAIRN"
[[ -x $BENCH ]] || { echo "bench/tools: $BENCH not found; configure with -DCAIRN_BUILD_BENCH=ON" >&2; exit 2; }

new_results
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

trap_cleanup

{
  machine_info
  data_fs_info "$DATA_PARENT"
  echo "seconds=$SECS levels=$LEVELS timeout_ms=$TIMEOUT_MS quick=$QUICK server_args=${TOOL_BENCH_SERVER_ARGS:-}"
} >"$RESULTS/machine.txt"
show_machine

# ---------------------------------------------------------------------------------------------
DATA_DIR=$(mktemp -d "$DATA_PARENT/cairn-toolbench.XXXXXX")
# shellcheck disable=SC2086  # TOOL_BENCH_SERVER_ARGS is a list of flags
start_cairn "$CAIRN" "$DATA_DIR" ${TOOL_BENCH_SERVER_ARGS:-}
echo "cairn_health=$(cat "$RESULTS/health.json")" >>"$RESULTS/machine.txt"
log "cairn pid $SERVER_PID on 127.0.0.1:$PORT; levels $LEVELS, ${SECS}s per measurement"

echo "# loadavg before: $(loadavg)" >"$RESULTS/bench.txt"
bench_rc=0
timeout --kill-after=10 "$STEP_TIMEOUT" "$BENCH" --port "$PORT" --server-pid "$SERVER_PID" \
  --levels "${LEVELS// /,}" --seconds "$SECS" --timeout-ms "$TIMEOUT_MS" \
  >>"$RESULTS/bench.txt" 2> >(tee -a "$RESULTS/bench.stderr" >&2) || bench_rc=$?
echo "loadavg_after=$(loadavg)" >>"$RESULTS/bench.txt"
((bench_rc == 0)) || log "tool_roundtrip_bench exited with status $bench_rc; see $RESULTS/bench.txt"
curl -fsS --max-time 30 "http://127.0.0.1:$PORT/metrics" >"$RESULTS/metrics.txt" 2>/dev/null || true
server_alive=1
kill -0 "$SERVER_PID" 2>/dev/null || server_alive=0
stop_server
rm -rf "$DATA_DIR"; DATA_DIR=""
grep -q '^RESULT ' "$RESULTS/bench.txt" || die "no results from tool_roundtrip_bench (see $RESULTS/bench.txt)"

# ---------------------------------------------------------------------------------------------
# Summary. get MODE LEVEL KEY reads a key=value of a RESULT line; line KIND KEY of another line.
get() {
  awk -v m="$1" -v l="$2" -v k="$3" '$1 == "RESULT" && $2 == "mode=" m && $3 == "level=" l {
    for (i = 4; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) { print kv[2]; exit } } }' "$RESULTS/bench.txt"
}
line() {
  awk -v t="$1" -v k="$2" '$1 == t { for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) { print kv[2]; exit } } }' \
    "$RESULTS/bench.txt"
}
ratio_of() { awk -v l="$1" '$1 == "RATIO" && $2 == "level=" l { sub(/^ratio=/, "", $5); print $5; exit }' "$RESULTS/bench.txt"; }
# Problems of one measurement: every request must have got exactly one event, and none may fail.
problems() {
  local m=$1 l=$2 out="" k v
  for k in missing duplicates http_errors timeouts unexpected tool_errors; do
    v=$(get "$m" "$l" "$k")
    [[ -z $v ]] && { out+="no-result "; break; }
    [[ $v != 0 ]] && out+="$k=$v "
  done
  echo "${out% }"
}

row() { printf '%-6s | %9s %8s %8s | %9s %8s %8s | %6s | %s\n' "$@"; }
fails=0
{
  summary_head "tool round-trip" "the load generator shares the $(nproc) CPUs with the server; above ~$(nproc) other work shared them too"
  echo "closed loop: N callers, one keep-alive connection and one request in flight each; ${SECS}s measured after" \
       "1 s of warm-up per row; latency = POST sent -> SSE frame read"
  echo "floor: create bench.floor.v1 -> its own event; roundtrip: create tool.request.v1 (echo) -> the tool.response.v1 event"
  echo "target: roundtrip req/s >= 0.4 x floor req/s at each level, every request answered by exactly one event"
  echo
  row "callers" "floor/s" "p50 ms" "p99 ms" "tool/s" "p50 ms" "p99 ms" "ratio" "result"
  for l in "${LEVEL_LIST[@]}"; do
    ratio=$(ratio_of "$l")
    bad="$(problems floor "$l") $(problems roundtrip "$l")"
    bad=$(awk '{ $1 = $1; print }' <<<"$bad")
    result=$(awk -v r="$ratio" 'BEGIN { print (r != "" && r + 0 >= 0.4) ? "PASS" : "FAIL" }')
    [[ -n $bad ]] && result="FAIL ($bad)"
    [[ $result == PASS ]] || fails=$((fails + 1))
    row "$l" "$(get floor "$l" rps)" "$(get floor "$l" p50_ms)" "$(get floor "$l" p99_ms)" \
        "$(get roundtrip "$l" rps)" "$(get roundtrip "$l" p50_ms)" "$(get roundtrip "$l" p99_ms)" "${ratio:-n/a}" "$result"
  done
  echo
  echo "details (per measurement):"
  for l in "${LEVEL_LIST[@]}"; do
    for m in floor roundtrip; do
      printf '  %-9s %3s callers: %7s requests, max %s ms, p90 %s ms; 201 p50/p99 %s/%s ms; server CPU %s s (%s us/req); client CPU %s s; events before their 201: %s; late %s\n' \
        "$m" "$l" "$(get "$m" "$l" completed)" "$(get "$m" "$l" max_ms)" "$(get "$m" "$l" p90_ms)" \
        "$(get "$m" "$l" ack_p50_ms)" "$(get "$m" "$l" ack_p99_ms)" "$(get "$m" "$l" server_cpu_s)" \
        "$(get "$m" "$l" server_cpu_us_per_req)" "$(get "$m" "$l" client_cpu_s)" "$(get "$m" "$l" event_before_ack)" \
        "$(get "$m" "$l" late)"
    done
  done
  echo "  echo tool ready after $(grep -m1 '^echo_ready_s=' "$RESULTS/bench.txt" | cut -d= -f2) s;" \
       "SSE frames: floor $(line STREAMS floor_frames), tool $(line STREAMS tool_frames), stream dropped $(line STREAMS dropped)," \
       "foreign ids $(line STREAMS foreign)"
  echo "  server at the end: CPU $(line SERVER cpu_s) s in total, RSS $(awk -v k="$(line SERVER rss_kb)" 'BEGIN { printf "%.1f", k / 1024 }') MB" \
       "(peak $(awk -v k="$(line SERVER hwm_kb)" 'BEGIN { printf "%.1f", k / 1024 }') MB), $(line SERVER threads) threads"
  server_errors=$(grep -ciE 'error|warn' "$RESULTS/server.log" || true)
  echo "  server log: $(wc -l <"$RESULTS/server.log") lines, $server_errors with error/warn (see server.log)"
  ((server_alive)) || echo "  THE SERVER WAS NOT RUNNING AT THE END (see server.log)"
  ((bench_rc == 0)) || echo "  tool_roundtrip_bench exited with status $bench_rc"
  echo
  echo "raw outputs: $RESULTS"
} >"$RESULTS/summary.txt"  # not a pipe into tee: `fails` must survive the block
cat "$RESULTS/summary.txt"
((bench_rc == 0 && server_alive)) || fails=$((fails + 1))

if ((STRICT && fails > 0)); then exit 3; fi
exit 0
