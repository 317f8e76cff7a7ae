#!/usr/bin/env bash
# bench/cluster/run.sh [BUILD_DIR] [--quick] — cairn on PostgreSQL with 1, 2 and 3 processes against
# one process on SQLite (run by `make bench`; docs/deploy.md, docs/performance.md).
#
# Needs BUILD_DIR/src/app/cairn and BUILD_DIR/bench/tools/tool_roundtrip_bench, wrk, and PostgreSQL
# 15 (scripts/install-deps test). For each setup, in the same run:
#   sqlite-1   one process on SQLite (the baseline), --sync normal
#   pg-N       N processes on one PostgreSQL database (a throwaway server in a temporary directory,
#              synchronous_commit off to match --sync normal: both survive a process crash, not a
#              power loss); the first is --role all, the others --role worker: every process
#              runs its share of the executors (shards), the first also the sessions and webhooks;
#              events reach the processes through PostgreSQL (--bus local)
#   nats-N     the same with --bus nats:// (a throwaway nats-server -js): events through JetStream
# it measures
#   creates    POST /breadcrumbs with 1 KiB contexts (wrk), the connections spread over the processes
#   tools      tool round trips (tool_roundtrip_bench) to CLUSTER_BENCH_TOOLS echo tools in turn (so
#              that their executors spread over the processes' shards), one bench per process at once
# and prints each figure with its ratio to sqlite-1. Everything is bounded by timeouts and stopped
# on exit; raw outputs go to BUILD_DIR/results/cluster-<stamp>/.
#
# Environment (all optional):
#   CLUSTER_BENCH_SECONDS=10      seconds per measurement (--quick: 4)
#   CLUSTER_BENCH_CONNECTIONS=64  wrk connections in all, split over the processes
#   CLUSTER_BENCH_CALLERS=16      tool callers in all, split over the processes
#   CLUSTER_BENCH_TOOLS=8         echo tools the callers take in turn (bench-echo-1 ..)
#   CLUSTER_BENCH_SIZES="1 2 3"   numbers of PostgreSQL processes
#   CLUSTER_BENCH_BUSES="local nats"  the buses of the PostgreSQL setups (pg-N, nats-N)
#   CLUSTER_BENCH_SERVER_ARGS="--embedder none"  extra `cairn serve` flags for every setup; without
#                                 embedding by default: the embedding of the records the creates
#                                 leave behind would run under the next measurement (on PostgreSQL
#                                 its vector writes take the cluster's writer path)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=bench/args.sh
source "$ROOT/bench/args.sh"
parse_bench_args cluster 0 "$@"
SECS=${CLUSTER_BENCH_SECONDS:-$( ((QUICK)) && echo 4 || echo 10)}
CONNS=${CLUSTER_BENCH_CONNECTIONS:-64}
CALLERS=${CLUSTER_BENCH_CALLERS:-16}
TOOL_COUNT=${CLUSTER_BENCH_TOOLS:-8}
SIZES=${CLUSTER_BENCH_SIZES:-"1 2 3"}
BUSES=${CLUSTER_BENCH_BUSES:-"local nats"}
read -ra SERVER_ARGS <<<"${CLUSTER_BENCH_SERVER_ARGS---embedder none}"
CAIRN=$BUILD/src/app/cairn
TOOLS=$BUILD/bench/tools/tool_roundtrip_bench
need_commands " (run make deps-bench)" wrk curl awk timeout
need_cairn "$CAIRN"
[[ -x $TOOLS ]] || { echo "bench/cluster: $TOOLS not found; configure with -DCAIRN_BUILD_BENCH=ON" >&2; exit 2; }
new_results
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
# shellcheck source=scripts/lib/postgres.sh
source "$ROOT/scripts/lib/postgres.sh"
# shellcheck source=scripts/lib/nats.sh
source "$ROOT/scripts/lib/nats.sh"

WORK=$(mktemp -d /tmp/cairn-cluster-bench-XXXXXX)
PIDS=()
PORTS=()
stop_all() {
  for pid in "${PIDS[@]}"; do stop_pid "$pid" cairn; done
  PIDS=()
  PORTS=()
}
# shellcheck disable=SC2317  # invoked by the EXIT trap
finish() {
  local rc=$?
  stop_all
  nats_stop
  pg_stop "$WORK"
  rm -rf "$WORK"
  exit "$rc"
}
trap finish EXIT
trap 'log "interrupted"; exit 130' INT TERM
{
  machine_info
  echo "seconds=$SECS connections=$CONNS callers=$CALLERS tools=$TOOL_COUNT sizes=$SIZES buses=$BUSES quick=$QUICK server_args=${SERVER_ARGS[*]}"
} >"$RESULTS/machine.txt"
show_machine

# start_process NAME ARGS...: one cairn serve on a free port; appends to PIDS and PORTS.
start_process() {
  local name=$1
  shift
  mkdir -p "$WORK/$name"
  "$CAIRN" serve --listen 127.0.0.1:0 --data-dir "$WORK/$name/data" --port-file "$WORK/$name/port" \
    --log-level warn --builtin-tools=true --sync normal "${SERVER_ARGS[@]}" "$@" >"$RESULTS/$name.log" 2>&1 &
  local pid=$!
  for _ in $(seq 1 300); do
    [[ -s $WORK/$name/port ]] && break
    kill -0 "$pid" 2>/dev/null || { cat "$RESULTS/$name.log" >&2; die "$name exited at start-up"; }
    sleep 0.1
  done
  [[ -s $WORK/$name/port ]] || die "$name wrote no port file within 30 s"
  PIDS+=("$pid")
  PORTS+=("$(grep -oE '[0-9]+' "$WORK/$name/port" | tail -n 1)")
}

# define_tools: the echo tools bench-echo-1 .. bench-echo-TOOL_COUNT, through the first process;
# echoes their names, comma-separated.
define_tools() {
  local i names=()
  for i in $(seq 1 "$TOOL_COUNT"); do
    curl -sf -o /dev/null -H 'Content-Type: application/json' "http://127.0.0.1:${PORTS[0]}/breadcrumbs" \
      -d "{\"schema_name\":\"tool.v1\",\"title\":\"bench-echo-$i\",\"context\":{\"name\":\"bench-echo-$i\",\"runtime\":\"builtin\",\"builtin\":\"echo\",\"concurrency\":16}}" ||
      die "cannot define the tool bench-echo-$i"
    names+=("bench-echo-$i")
  done
  local IFS=,
  echo "${names[*]}"
}

# await_shards: with several processes on PostgreSQL, waits (30 s at most) until their shares of
# the executors' 64 shards have settled: every process holds some, 64 in all.
await_shards() {
  ((${#PORTS[@]} > 1)) || return 0
  local port held sum some
  for _ in $(seq 1 300); do
    sum=0
    some=1
    for port in "${PORTS[@]}"; do
      held=$(curl -sf "http://127.0.0.1:$port/metrics" | awk '$1 == "cairn_executor_shards_held" { print int($2) }')
      sum=$((sum + ${held:-0}))
      ((${held:-0} > 0)) || some=0
    done
    ((sum == 64 && some)) && return 0
    sleep 0.1
  done
  log "the executors' shards did not settle within 30 s"
}

# measure SETUP: tool round trips/s (one bench per process at once), then creates/s (wrk on every
# process at once; after the tools, so that the embedding of the creates is not measured with
# them), summed over the processes, into $RESULTS/SETUP.*.txt; echoes "creates tools".
measure() {
  local setup=$1 n=${#PORTS[@]} i wrk_pids=() tool_pids=()
  local conns=$(((CONNS + n - 1) / n)) callers=$(((CALLERS + n - 1) / n)) tools
  tools=$(define_tools)
  await_shards
  for i in "${!PORTS[@]}"; do
    timeout --kill-after=10 $((SECS * 2 + 90)) "$TOOLS" --port "${PORTS[$i]}" --levels "$callers" --seconds "$SECS" \
      --tools "$tools" \
      >"$RESULTS/$setup.tools.$i.txt" 2>"$RESULTS/$setup.tools.$i.stderr" &
    tool_pids+=($!)
  done
  for pid in "${tool_pids[@]}"; do wait "$pid" || log "tool_roundtrip_bench on $setup failed"; done
  # Where the tools ran: each process's finished executor runs (the processes share the executors).
  local runs=() port
  for port in "${PORTS[@]}"; do
    runs+=("$(curl -sf "http://127.0.0.1:$port/metrics" |
      awk '$1 ~ /^cairn_executor_runs_total/ { s += $2 } END { printf "%d", s }')")
  done
  echo "${runs[*]}" >"$RESULTS/$setup.runs.txt"
  log "$setup: executor runs by process: ${runs[*]}"
  for i in "${!PORTS[@]}"; do
    BENCH_RUN_ID="$setup-$i" timeout --kill-after=10 $((SECS + 60)) wrk -t1 -c"$conns" -d"${SECS}s" --timeout 10s \
      -s "$ROOT/bench/wrk/post_breadcrumbs.lua" "http://127.0.0.1:${PORTS[$i]}/breadcrumbs" \
      >"$RESULTS/$setup.creates.$i.txt" 2>&1 &
    wrk_pids+=($!)
  done
  for pid in "${wrk_pids[@]}"; do wait "$pid" || log "wrk on $setup failed (see $RESULTS/$setup.creates.*.txt)"; done
  local creates tools
  creates=$(cat "$RESULTS/$setup".creates.*.txt | awk -F= '$1 == "bench_ok_per_sec" { s += $2 } END { printf "%.0f", s }')
  tools=$(cat "$RESULTS/$setup".tools.*.txt |
    awk '$1 == "RESULT" && $2 == "mode=roundtrip" { for (i = 3; i <= NF; i++) if ($i ~ /^rps=/) { sub(/^rps=/, "", $i); s += $i } }
         END { printf "%.0f", s }')
  log "$setup: $creates creates/s, $tools tool round trips/s"
  echo "$creates $tools"
}

declare -A CREATES TOOLSPS
log "sqlite-1"
start_process sqlite
read -r "CREATES[sqlite-1]" "TOOLSPS[sqlite-1]" < <(measure sqlite-1)
stop_all

log "PostgreSQL in $WORK"
PG_OPTIONS="-c synchronous_commit=off -c shared_buffers=256MB" pg_start "$WORK"
master_key=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
SETUPS=()
for bus in $BUSES; do
  prefix=pg
  bus_url=local
  if [[ $bus == nats ]]; then
    prefix=nats
    if [[ -z $NATS_PID ]]; then
      nats_start "$WORK" 0
      log "nats-server at $NATS_URL"
    fi
    bus_url=$NATS_URL
  fi
  for n in $SIZES; do
    setup=$prefix-$n
    uri=$(pg_create_db "$WORK" "bench_${prefix}_$n")
    for i in $(seq 1 "$n"); do
      role=worker
      ((i == 1)) && role=all
      start_process "$setup-$i" --store "$uri" --bus "$bus_url" --nats-stream "bench_${prefix}_$n" --role "$role" \
        --master-key "$master_key"
    done
    read -r "CREATES[$setup]" "TOOLSPS[$setup]" < <(measure "$setup")
    SETUPS+=("$setup")
    stop_all
  done
done

{
  summary_head "cluster" "the load generators and PostgreSQL share the $(nproc) CPUs with the servers"
  printf '%-9s | %10s %8s | %10s %8s\n' setup "creates/s" "x sqlite" "tools/s" "x sqlite"
  for setup in sqlite-1 "${SETUPS[@]}"; do
    awk -v s="$setup" -v c="${CREATES[$setup]}" -v t="${TOOLSPS[$setup]}" -v c0="${CREATES[sqlite-1]}" \
        -v t0="${TOOLSPS[sqlite-1]}" 'BEGIN { printf "%-9s | %10d %8.2f | %10d %8.2f\n", s, c, (c0 ? c / c0 : 0), t, (t0 ? t / t0 : 0) }'
  done
} | tee "$RESULTS/summary.txt"
