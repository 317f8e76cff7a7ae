#!/usr/bin/env bash
# bench/sse/run.sh BUILD_DIR [--quick] — cairn's event-streaming (SSE) fan-out benchmark.
#
# Builds nothing: BUILD_DIR must hold src/app/cairn and bench/sse/sse_fanout_bench (and
# bench/sse/nats_fanout_bench for the baseline), e.g. `make bench` or
#   ninja -C BUILD_DIR cairn sse_fanout_bench nats_fanout_bench
#
# 1. Starts `cairn serve` on loopback with a fresh data directory and runs sse_fanout_bench:
#    N SSE subscribers (subscriber i selects tag=group:<i % 10>, so each matches 10 % of the writes)
#    while breadcrumbs are written at a fixed rate; reports write rate, delivered events/s, delivery
#    latency (write acknowledged → frame received) p50/p99, lost/duplicated events, server CPU and
#    RSS, and memory per idle stream. Then stops the server.
# 2. The same-run baseline: starts nats-server on loopback and runs nats_fanout_bench with the same
#    subscribers, rate, duration and payload size (the average size of cairn's event JSON).
# 3. Prints a summary with PASS/FAIL against the targets (docs/performance.md) and the ratio
#    cairn delivered events/s ÷ NATS delivered msgs/s. Raw outputs: BUILD_DIR/results/sse-<stamp>/.
#
# The NATS baseline needs two Debian packages (scripts/install-deps should list them):
#   nats-server libnats-dev
# When nats-server is missing and this runs as root with apt-get, it installs them
# (SSE_BENCH_INSTALL=0 prevents that); without them the baseline is reported as missing.
#
# Environment (all optional):
#   SSE_BENCH_SUBSCRIBERS=1000   SSE streams (and NATS subscribers)
#   SSE_BENCH_RATE=2000          writes (publishes) per second
#   SSE_BENCH_SECONDS=30         seconds of writes
#   SSE_BENCH_GROUPS=10          tag groups: each stream matches 1/GROUPS of the writes
#   SSE_BENCH_WRITERS=64         keep-alive connections the writes go through
#   SSE_BENCH_CONTEXT_BYTES=128  size of each write's context
#   SSE_BENCH_DRAIN=60           at most this many seconds after the last write for frames still due
#                                (also how long writes may lag behind their schedule)
#   SSE_BENCH_STALL=10           ... ending earlier when no frame arrived for this long
#   SSE_BENCH_NATS=1             0 skips the NATS baseline
#   SSE_BENCH_INSTALL=1          0: never apt-get install nats-server/libnats-dev
#   SSE_BENCH_SERVER_ARGS=""     extra `cairn serve` flags
#   SSE_BENCH_DATA_PARENT=$TMPDIR where the temporary data directory goes
#   SSE_BENCH_STRICT=0           1: exit with status 3 when a target is missed
#   --quick (or SSE_BENCH_QUICK=1): a smoke run, 100 subscribers, 500 writes/s, 5 s
set -euo pipefail

usage() { echo "usage: bench/sse/run.sh BUILD_DIR [--quick]" >&2; exit 2; }
[[ $# -ge 1 && $# -le 2 ]] || usage
BUILD=$(cd "$1" && pwd) || usage
QUICK=${SSE_BENCH_QUICK:-0}
[[ ${2:-} == --quick ]] && QUICK=1
[[ -n ${2:-} && ${2:-} != --quick ]] && usage

CAIRN=$BUILD/src/app/cairn
SSE_BENCH=$BUILD/bench/sse/sse_fanout_bench
NATS_BENCH=$BUILD/bench/sse/nats_fanout_bench

if ((QUICK)); then
  SUBS=${SSE_BENCH_SUBSCRIBERS:-100}; RATE=${SSE_BENCH_RATE:-500}; SECONDS_=${SSE_BENCH_SECONDS:-5}
else
  SUBS=${SSE_BENCH_SUBSCRIBERS:-1000}; RATE=${SSE_BENCH_RATE:-2000}; SECONDS_=${SSE_BENCH_SECONDS:-30}
fi
GROUPS_=${SSE_BENCH_GROUPS:-10}
WRITERS=${SSE_BENCH_WRITERS:-64}
CONTEXT_BYTES=${SSE_BENCH_CONTEXT_BYTES:-128}
DRAIN=${SSE_BENCH_DRAIN:-60}
STALL=${SSE_BENCH_STALL:-10}
WITH_NATS=${SSE_BENCH_NATS:-1}
INSTALL=${SSE_BENCH_INSTALL:-1}
DATA_PARENT=${SSE_BENCH_DATA_PARENT:-${TMPDIR:-/tmp}}
STRICT=${SSE_BENCH_STRICT:-0}
# Every step is bounded: the writes, the longest drain, and slack for start-up and teardown.
STEP_TIMEOUT=$((SECONDS_ * 4 + DRAIN + 180))

for tool in awk timeout curl; do
  command -v "$tool" >/dev/null || { echo "bench/sse: '$tool' is not installed" >&2; exit 2; }
done
[[ -x $CAIRN ]] || { echo "bench/sse: $CAIRN not found; build the 'cairn' target first" >&2; exit 2; }
[[ -x $SSE_BENCH ]] || { echo "bench/sse: $SSE_BENCH not found; configure with -DCAIRN_BUILD_BENCH=ON" >&2; exit 2; }

STAMP=$(date -u +%Y%m%dT%H%M%SZ)
RESULTS=$BUILD/results/sse-$STAMP
mkdir -p "$RESULTS"
LOG=$RESULTS/run.log
BENCH_NAME=sse
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
val() { grep -m1 "^$2=" "$RESULTS/$1.txt" 2>/dev/null | cut -d= -f2- || true; }

# shellcheck source=scripts/lib/nats.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/nats.sh"
SERVER_PID="" PORT="" DATA_DIR="" NATS_DIR=""
# shellcheck disable=SC2317  # invoked by the EXIT trap
cleanup() {
  local rc=$?
  stop_pid "$SERVER_PID" cairn; SERVER_PID=""
  stop_pid "$NATS_PID" nats-server; NATS_PID=""
  [[ -n $DATA_DIR && -d $DATA_DIR ]] && rm -rf "$DATA_DIR"
  [[ -n $NATS_DIR && -d $NATS_DIR ]] && rm -rf "$NATS_DIR"
  exit "$rc"
}
trap cleanup EXIT
trap 'log "interrupted"; exit 130' INT TERM

{
  machine_info
  echo "subscribers=$SUBS rate=$RATE seconds=$SECONDS_ groups=$GROUPS_ writers=$WRITERS context_bytes=$CONTEXT_BYTES quick=$QUICK"
} >"$RESULTS/machine.txt"
log "results in $RESULTS"
sed 's/^/  /' "$RESULTS/machine.txt" >&2

# ---------------------------------------------------------------------------------------------
# 1. cairn.
DATA_DIR=$(mktemp -d "$DATA_PARENT/cairn-ssebench.XXXXXX")
# shellcheck disable=SC2086  # SSE_BENCH_SERVER_ARGS is a list of flags
start_cairn "$CAIRN" "$DATA_DIR" ${SSE_BENCH_SERVER_ARGS:-}
log "cairn pid $SERVER_PID on 127.0.0.1:$PORT; $SUBS streams, $RATE writes/s for ${SECONDS_}s"
echo "# loadavg before: $(loadavg)" >"$RESULTS/cairn.txt"
if ! timeout --kill-after=10 "$STEP_TIMEOUT" "$SSE_BENCH" --port "$PORT" --server-pid "$SERVER_PID" \
    --subscribers "$SUBS" --groups "$GROUPS_" --rate "$RATE" --seconds "$SECONDS_" --writers "$WRITERS" \
    --context-bytes "$CONTEXT_BYTES" --drain-seconds "$DRAIN" --stall-seconds "$STALL" \
    >>"$RESULTS/cairn.txt" 2> >(tee -a "$RESULTS/cairn.stderr" >&2); then
  log "sse_fanout_bench failed; see $RESULTS/cairn.txt"
fi
echo "loadavg_after=$(loadavg)" >>"$RESULTS/cairn.txt"
curl -fsS --max-time 30 "http://127.0.0.1:$PORT/metrics" >"$RESULTS/metrics.txt" 2>/dev/null || true
stop_pid "$SERVER_PID" cairn; SERVER_PID=""
rm -rf "$DATA_DIR"; DATA_DIR=""
[[ -n $(val cairn delivered_per_sec) ]] || die "no results from sse_fanout_bench (see $RESULTS/cairn.txt)"

# ---------------------------------------------------------------------------------------------
# 2. NATS.
NATS_NOTE=""
if [[ $WITH_NATS == 1 ]]; then
  if ! command -v nats-server >/dev/null && [[ $INSTALL == 1 && $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    log "installing nats-server and libnats-dev"
    DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -qq nats-server libnats-dev >>"$LOG" 2>&1 ||
      log "apt-get install failed (see $LOG)"
  fi
  if ! command -v nats-server >/dev/null; then
    NATS_NOTE="nats-server is not installed (apt-get install nats-server libnats-dev)"
  elif [[ ! -x $NATS_BENCH ]]; then
    NATS_NOTE="$NATS_BENCH was not built (libnats-dev missing when BUILD_DIR was configured?)"
  fi
else
  NATS_NOTE="skipped (SSE_BENCH_NATS=0)"
fi
if [[ -z $NATS_NOTE ]]; then
  NATS_DIR=$(mktemp -d "$DATA_PARENT/cairn-ssebench-nats.XXXXXX")
  NATS_PORT=""
  nats_start "$NATS_DIR" 0 2>>"$LOG" || NATS_PORT=""
  cp "$NATS_DIR/nats.log" "$RESULTS/nats-server.log" 2>/dev/null || true
  if [[ -z $NATS_PORT ]]; then
    NATS_NOTE="nats-server did not start (see $RESULTS/nats-server.log)"
  else
    PAYLOAD=$(val cairn frame_data_bytes_avg)
    [[ ${PAYLOAD:-0} -gt 16 ]] || PAYLOAD=512
    log "nats-server $(nats-server --version 2>&1 | head -n 1) pid $NATS_PID on 127.0.0.1:$NATS_PORT; payload $PAYLOAD B"
    echo "# loadavg before: $(loadavg)" >"$RESULTS/nats.txt"
    echo "nats_server_version=$(nats-server --version 2>&1 | head -n 1)" >>"$RESULTS/nats.txt"
    if ! timeout --kill-after=10 "$STEP_TIMEOUT" "$NATS_BENCH" --url "nats://127.0.0.1:$NATS_PORT" \
        --server-pid "$NATS_PID" --subscribers "$SUBS" --groups "$GROUPS_" --rate "$RATE" --seconds "$SECONDS_" \
        --payload-bytes "$PAYLOAD" --drain-seconds "$DRAIN" >>"$RESULTS/nats.txt" 2> >(tee -a "$RESULTS/nats.stderr" >&2); then
      log "nats_fanout_bench failed; see $RESULTS/nats.txt"
    fi
    echo "loadavg_after=$(loadavg)" >>"$RESULTS/nats.txt"
    [[ -n $(val nats delivered_per_sec) ]] || NATS_NOTE="nats_fanout_bench gave no result (see $RESULTS/nats.txt)"
  fi
  nats_stop
  rm -rf "$NATS_DIR"; NATS_DIR=""
fi
[[ -n $NATS_NOTE ]] && log "NATS baseline: $NATS_NOTE"

# ---------------------------------------------------------------------------------------------
# 3. Summary.
ms() { awk -v u="$1" 'BEGIN { if (u == "") print "n/a"; else printf "%.1f ms", u / 1000 }'; }
kib() { awk -v b="$1" 'BEGIN { if (b == "") print "n/a"; else printf "%.1f KiB", b / 1024 }'; }
mb() { awk -v k="$1" 'BEGIN { if (k == "") print "n/a"; else printf "%.1f MB", k / 1024 }'; }

p99=$(val cairn latency_ack_p99_us)
lost=$(val cairn lost); missing=$(val cairn missing); dup=$(val cairn duplicated); ooo=$(val cairn out_of_order); mism=$(val cairn mismatched)
idle=$(val cairn idle_stream_bytes)
wrate=$(val cairn write_rate)
cairn_dps=$(val cairn delivered_per_sec)
nats_dps=$(val nats delivered_per_sec)
ratio=$(awk -v a="$cairn_dps" -v b="$nats_dps" 'BEGIN { if (b + 0 > 0) printf "%.2f", a / b; else print "n/a" }')
r_lat=$(awk -v p="$p99" 'BEGIN { print (p != "" && p + 0 <= 50000) ? "PASS" : "FAIL" }')
r_loss=$( [[ ${lost:-x} == 0 && ${dup:-x} == 0 && ${ooo:-x} == 0 && ${mism:-x} == 0 ]] && echo PASS || echo FAIL)
r_idle=$(awk -v b="$idle" 'BEGIN { print (b != "" && b + 0 <= 4096) ? "PASS" : "FAIL" }')
r_rate=$(awk -v w="$wrate" -v r="$RATE" 'BEGIN { print (w + 0 >= 0.95 * r) ? "PASS" : "FAIL" }')
fails=0
for r in "$r_lat" "$r_loss" "$r_idle" "$r_rate"; do [[ $r == PASS ]] || fails=$((fails + 1)); done

row() { printf '%-40s %-26s %-26s %s\n' "$@"; }
{
  echo "cairn SSE fan-out benchmark $STAMP"
  echo "machine: $(grep -E '^(nproc|cpu_model|kernel|mem_total_mb)=' "$RESULTS/machine.txt" | paste -sd '|' | sed 's/|/, /g')"
  echo "load average: start $(grep '^loadavg_start=' "$RESULTS/machine.txt" | cut -d= -f2), end $(loadavg)" \
       "(the benchmark client runs on the same CPUs as the server; above ~$(nproc) other work shared them too)"
  echo "$SUBS SSE streams (tag=group:<i % $GROUPS_>, each matches 1/$GROUPS_ of the writes), $RATE writes/s offered" \
       "for ${SECONDS_}s through $WRITERS keep-alive connections, ${CONTEXT_BYTES} B contexts"
  echo
  row "measure" "cairn" "target" "result"
  row "write rate (201s/s)" "$wrate/s (offered $RATE/s)" ">= 95 % of offered" "$r_rate"
  row "delivery latency p50 (ack -> frame)" "$(ms "$(val cairn latency_ack_p50_us)")" "report" "-"
  row "delivery latency p99 (ack -> frame)" "$(ms "$p99")" "<= 50 ms" "$r_lat"
  row "lost / duplicated / out of order" "${lost:-?} / ${dup:-?} / ${ooo:-?} (mismatched ${mism:-?})" "0 / 0 / 0" "$r_loss"
  if [[ $lost == unknown ]]; then
    echo "  ($missing expected frames had not arrived when the drain deadline (${DRAIN}s after the last write) ended the"
    echo "   wait while frames were still arriving: late, not proven lost; raise SSE_BENCH_DRAIN to settle it)"
  fi
  row "memory per idle stream" "$(kib "$idle")" "<= 4 KiB" "$r_idle"
  row "delivered events/s" "${cairn_dps}/s" "report" "-"
  row "  / NATS delivered msgs/s (same run)" "${nats_dps:-n/a}/s -> ratio $ratio" "report" "-"
  echo
  echo "cairn details:"
  echo "  delivered $(val cairn delivered_events) of $(val cairn expected_events) expected frames in $(val cairn delivery_span_s) s" \
       "(ended: $(val cairn end_reason)); frames of $(val cairn frame_data_bytes_avg) B of JSON on average"
  echo "  latency ack → frame p50/p90/p99/p99.9/max: $(for k in p50 p90 p99 p999 max; do printf '%s ' "$(ms "$(val cairn latency_ack_${k}_us)")"; done)"
  echo "  latency send → frame p50/p99/max: $(for k in p50 p99 max; do printf '%s ' "$(ms "$(val cairn latency_send_${k}_us)")"; done)" \
       "($(val cairn frames_before_ack) frames arrived before their 201 and count as 0 above)"
  echo "  writes: $(val cairn writes_acked) acknowledged, $(val cairn writes_failed) failed, $(val cairn writes_unknown) unknown;" \
       "201 latency p50 $(ms "$(val cairn write_ack_p50_us)") p99 $(ms "$(val cairn write_ack_p99_us)");" \
       "send lag behind schedule p99 $(ms "$(val cairn write_send_lag_p99_us)")"
  echo "  streams: $(val cairn streams_opened) opened in $(val cairn streams_open_seconds) s; drops $(val cairn stream_drops)," \
       "reconnects $(val cairn reconnects), subscribers missing frames at the end $(val cairn subscribers_with_missing)"
  echo "  server CPU $(val cairn server_cpu_s) s over $(val cairn measured_wall_s) s = $(val cairn server_cpu_pct) % of one core;" \
       "client CPU $(val cairn client_cpu_pct) %"
  echo "  server RSS: before streams $(mb "$(val cairn server_rss_before_streams_kb)"), $SUBS idle streams" \
       "$(mb "$(val cairn server_rss_idle_streams_kb)"), peak during the run $(mb "$(val cairn server_rss_peak_kb)")," \
       "after $(mb "$(val cairn server_rss_after_kb)")"
  if [[ -n $nats_dps ]]; then
    echo "NATS details ($(val nats nats_server_version), libnats $(val nats libnats_version), one connection per subscriber):"
    echo "  delivered $(val nats delivered_msgs) of $(val nats expected_msgs) in $(val nats delivery_span_s) s;" \
         "published $(val nats published) at $(val nats publish_rate)/s; payload $(val nats payload_bytes) B"
    echo "  latency publish → receipt p50/p99/max: $(for k in p50 p99 max; do printf '%s ' "$(ms "$(val nats latency_${k}_us)")"; done)"
    echo "  lost $(val nats lost), duplicated $(val nats duplicated), out of order $(val nats out_of_order)"
    echo "  server CPU $(val nats server_cpu_pct) % of one core; RSS per idle subscriber $(kib "$(val nats idle_subscriber_bytes)")," \
         "after the run $(mb "$(val nats server_rss_after_kb)"); client CPU $(val nats client_cpu_pct) %"
  else
    echo "NATS baseline: ${NATS_NOTE:-no result}"
  fi
  echo
  echo "raw outputs: $RESULTS"
} | tee "$RESULTS/summary.txt"

if ((STRICT && fails > 0)); then exit 3; fi
exit 0
