#!/usr/bin/env bash
# bench/executors/run.sh [BUILD_DIR] [--quick] — thousands of executors and webhooks (run by `make bench`).
#
# Builds nothing: BUILD_DIR must hold src/app/cairn and bench/tools/tool_roundtrip_bench.
#
# Two servers, one after the other, on loopback with fresh data directories and auth on:
#   few    the built-in tools only;
#   many   the same, plus 10 tenants with EXEC_BENCH_TOOLS tool definitions (default 1,000) and
#          EXEC_BENCH_WEBHOOKS webhooks (default 500) spread over them. The webhooks' selector
#          matches nothing the benchmark writes (nothing is delivered: they only follow the stream).
# For each it reports the threads of the server right after start-up and the definitions, and
# again 11 s later (idle: the pools' threads started for the burst have ended), and the tool round
# trip of the built-in echo tool in the default tenant (tool_roundtrip_bench: create
# tool.request.v1 -> its tool.response.v1 event on SSE).
# Targets (issue 19): the definitions add no threads; an idle server runs at most 2 x cores + a fixed
# handful; the round trip with many definitions within 10 % of the one with few (ratio >= 0.9).
#
# Environment (all optional):
#   EXEC_BENCH_TOOLS=1000  EXEC_BENCH_WEBHOOKS=500  EXEC_BENCH_TENANTS=10
#   EXEC_BENCH_SECONDS=10  EXEC_BENCH_LEVELS="1 16"  EXEC_BENCH_SERVER_ARGS=""
#   --quick (or EXEC_BENCH_QUICK=1): 3 s per measurement
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=bench/args.sh
source "$ROOT/bench/args.sh"
parse_bench_args executors "${EXEC_BENCH_QUICK:-0}" "$@"

CAIRN=$BUILD/src/app/cairn
BENCH=$BUILD/bench/tools/tool_roundtrip_bench
if ((QUICK)); then SECS=${EXEC_BENCH_SECONDS:-3}; else SECS=${EXEC_BENCH_SECONDS:-10}; fi
LEVELS=${EXEC_BENCH_LEVELS:-"1 16"}
TOOLS=${EXEC_BENCH_TOOLS:-1000}
WEBHOOKS=${EXEC_BENCH_WEBHOOKS:-500}
TENANTS=${EXEC_BENCH_TENANTS:-10}
read -ra LEVEL_LIST <<<"$LEVELS"
STEP_TIMEOUT=$((${#LEVEL_LIST[@]} * 2 * (SECS + 20) + 120))
ADMIN_KEY="cairn-bench-admin-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')"

need_commands "" awk timeout curl xargs
need_cairn "$CAIRN"
[[ -x $BENCH ]] || { echo "bench/executors: $BENCH not found; configure with -DCAIRN_BUILD_BENCH=ON" >&2; exit 2; }
new_results
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
trap_cleanup
{
  machine_info
  echo "seconds=$SECS levels=$LEVELS tools=$TOOLS webhooks=$WEBHOOKS tenants=$TENANTS server_args=${EXEC_BENCH_SERVER_ARGS:-}"
} >"$RESULTS/machine.txt"
show_machine

threads_of() { ls "/proc/$1/task" | wc -l; }
api() {  # api METHOD PATH KEY [BODY]: the response body; fails on a non-2xx status
  curl -fsS --max-time 30 -X "$1" "http://127.0.0.1:$PORT$2" -H "Authorization: Bearer $3" \
    -H 'Content-Type: application/json' ${4:+--data-binary "$4"}
}
consumers() { curl -fsS --max-time 10 -H "Authorization: Bearer $ADMIN_KEY" "http://127.0.0.1:$PORT/metrics" |
  awk '$1 == "cairn_executor_consumers" { print int($2) }'; }

# Tenants t1..tN, an admin key each, and the tools and webhooks spread over them.
define_many() {
  local t key per_tenant_tools=$(((TOOLS + TENANTS - 1) / TENANTS)) per_tenant_hooks=$(((WEBHOOKS + TENANTS - 1) / TENANTS))
  local made_tools=0 made_hooks=0
  for t in $(seq 1 "$TENANTS"); do
    api POST /tenants "$ADMIN_KEY" "{\"id\":\"t$t\",\"name\":\"bench tenant $t\"}" >/dev/null
    key=$(api POST "/tenants/t$t/keys" "$ADMIN_KEY" '{"principal":"bench-admin","roles":["admin"]}' |
      sed -E 's/.*"key":"([^"]+)".*/\1/')
    local n=$((TOOLS - made_tools < per_tenant_tools ? TOOLS - made_tools : per_tenant_tools))
    local h=$((WEBHOOKS - made_hooks < per_tenant_hooks ? WEBHOOKS - made_hooks : per_tenant_hooks))
    made_tools=$((made_tools + n)); made_hooks=$((made_hooks + h))
    # Four at a time: the definitions go in faster than one curl after another.
    if ((n > 0)); then
      seq 1 "$n" | xargs -P 4 -I{} curl -fsS -o /dev/null --max-time 30 -X POST "http://127.0.0.1:$PORT/breadcrumbs" \
        -H "Authorization: Bearer $key" -H 'Content-Type: application/json' --data-binary \
        "{\"title\":\"tool {}\",\"schema_name\":\"tool.v1\",\"context\":{\"name\":\"bench_t${t}_{}\",\"description\":\"never called\",\"runtime\":\"process\",\"command\":[\"/bin/true\"]}}"
    fi
    if ((h > 0)); then
      seq 1 "$h" | xargs -P 4 -I{} curl -fsS -o /dev/null --max-time 30 -X POST "http://127.0.0.1:$PORT/webhooks" \
        -H "Authorization: Bearer $key" -H 'Content-Type: application/json' --data-binary \
        "{\"url\":\"http://hook-{}.bench.invalid/t$t\",\"selector\":{\"schema_name\":\"bench.never.v1\"}}"
    fi
  done
}

# measure NAME: starts a server, defines (for "many"), counts its idle threads, runs the round trip.
measure() {
  local name=$1 dir before wanted
  dir=$(mktemp -d "${TMPDIR:-/tmp}/cairn-execbench.XXXXXX")
  DATA_DIR=$dir
  # shellcheck disable=SC2086
  CAIRN_BOOTSTRAP_ADMIN_KEY=$ADMIN_KEY start_cairn "$CAIRN" "$dir" --auth on --webhook-max-per-tenant 1000 \
    ${EXEC_BENCH_SERVER_ARGS:-}
  cp "$RESULTS/server.log" "$RESULTS/server-$name.log" 2>/dev/null || true
  before=$(consumers)
  if [[ $name == many ]]; then
    local started=$SECONDS
    define_many
    wanted=$((before + TOOLS))
    # The supervisor starts each definition's executor as its event arrives: wait for them all.
    for _ in $(seq 1 600); do (($(consumers) >= wanted)) && break; sleep 0.1; done
    (($(consumers) >= wanted)) || die "only $(consumers) of $wanted executors started"
    echo "define_seconds=$((SECONDS - started))" >"$RESULTS/$name.kv"
  fi
  echo "threads_busy=$(threads_of "$SERVER_PID")" >>"$RESULTS/$name.kv"
  # Threads started for the burst of definitions (HTTP handlers) end after 10 s idle.
  sleep 11
  {
    echo "consumers=$(consumers)"
    echo "threads_idle=$(threads_of "$SERVER_PID")"
    echo "rss_kb=$(awk '/^VmRSS/ { print $2 }' "/proc/$SERVER_PID/status")"
  } >>"$RESULTS/$name.kv"
  timeout --kill-after=10 "$STEP_TIMEOUT" "$BENCH" --port "$PORT" --server-pid "$SERVER_PID" --bearer "$ADMIN_KEY" \
    --levels "${LEVELS// /,}" --seconds "$SECS" >"$RESULTS/$name-bench.txt" 2>"$RESULTS/$name-bench.stderr" ||
    log "tool_roundtrip_bench ($name) exited with status $?"
  echo "threads_after=$(threads_of "$SERVER_PID")" >>"$RESULTS/$name.kv"
  curl -fsS --max-time 30 -H "Authorization: Bearer $ADMIN_KEY" "http://127.0.0.1:$PORT/metrics" \
    >"$RESULTS/$name-metrics.txt" 2>/dev/null || true
  stop_server
  rm -rf "$dir"; DATA_DIR=""
}

log "few: the built-in tools only"
measure few
log "many: + $TOOLS tools and $WEBHOOKS webhooks over $TENANTS tenants"
measure many

rt() {  # rt NAME LEVEL KEY: a key of the round trip's RESULT line
  awk -v l="$2" -v k="$3" '$1 == "RESULT" && $2 == "mode=roundtrip" && $3 == "level=" l {
    for (i = 4; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) { print kv[2]; exit } } }' "$RESULTS/$1-bench.txt"
}
cores=$(nproc)
{
  summary_head "executors" "the load generator shares the $cores CPUs with the server"
  echo "few: built-in tools only; many: + $TOOLS tool definitions and $WEBHOOKS webhooks over $TENANTS tenants"
  echo "targets: the definitions add no threads; idle threads <= 2 x $cores + a fixed handful; round trip ratio >= 0.9"
  echo
  printf '%-6s | %9s | %14s | %12s | %13s | %7s\n' server executors "after writing" "idle threads" "after load" "RSS MB"
  for n in few many; do
    printf '%-6s | %9s | %14s | %12s | %13s | %7s\n' "$n" "$(val "$n" consumers)" "$(val "$n" threads_busy)" \
      "$(val "$n" threads_idle)" "$(val "$n" threads_after)" "$(awk -v k="$(val "$n" rss_kb)" 'BEGIN { printf "%.1f", k / 1024 }')"
  done
  echo "(threads: right after start-up and the definitions; idle: 11 s later; after load: right after the round trips)"
  echo
  printf '%-7s | %9s %9s | %9s %9s | %6s | %s\n' callers "few/s" "p99 ms" "many/s" "p99 ms" ratio "CPU us/req few, many"
  for l in "${LEVEL_LIST[@]}"; do
    printf '%-7s | %9s %9s | %9s %9s | %6s | %s, %s\n' "$l" "$(rt few "$l" rps)" "$(rt few "$l" p99_ms)" \
      "$(rt many "$l" rps)" "$(rt many "$l" p99_ms)" "$(ratio_of "$(rt many "$l" rps)" "$(rt few "$l" rps)")" \
      "$(rt few "$l" server_cpu_us_per_req)" "$(rt many "$l" server_cpu_us_per_req)"
  done
  echo
  echo "definitions took $(val many define_seconds) s to create and start; raw outputs: $RESULTS"
} >"$RESULTS/summary.txt"
cat "$RESULTS/summary.txt"
