#!/usr/bin/env bash
# bench/ui/run.sh [BUILD_DIR] [--quick] — the dashboard's live tail under load (run by `make bench`):
# the Events page (/ui#/events) in headless chromium against a bare SSE client in Node (the
# baseline), both following the same selector on a release cairn while records are written at
# fixed rates, then while a backlog is replayed from a seq. tail.mjs says what is measured.
#
# Builds nothing: BUILD_DIR (default build/bench) must hold a release src/app/cairn, e.g.
#   cmake -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DCAIRN_BUILD_TESTS=OFF -DCAIRN_BUILD_BENCH=ON
#   cmake --build build/bench -j2 --target cairn
# Needs chromium and tests/e2e/ui-node's packages (scripts/install-deps).
#
# Target: at 1,000 events/s the page receives every event, ends less than 1 s behind the last
# write, and never goes 250 ms without drawing a frame. A control phase (the same writes, the page
# following a tag nobody writes) gives the frame gaps the loaded machine causes by itself.
#
# Environment (all optional):
#   UI_BENCH_RATES="1000 2000 4000"   write rates of the live phases (records/s)
#   UI_BENCH_SECONDS=10               seconds of writing per rate
#   UI_BENCH_REPLAY=20000             records replayed from a seq (0 skips the phase)
#   UI_BENCH_SYNC=normal              cairn's --sync
#   UI_BENCH_DATA_PARENT=$TMPDIR      where the temporary data directory goes
#   UI_BENCH_STRICT=0                 1: exit with status 3 when the target is missed
#   --quick (or UI_BENCH_QUICK=1): 3 s per rate, 5,000 replayed
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck source=bench/args.sh
source "$HERE/../args.sh"
parse_bench_args ui "${UI_BENCH_QUICK:-0}" "$@"

if ((QUICK)); then
  SECS=${UI_BENCH_SECONDS:-3}; REPLAY=${UI_BENCH_REPLAY:-5000}
else
  SECS=${UI_BENCH_SECONDS:-10}; REPLAY=${UI_BENCH_REPLAY:-20000}
fi
RATES=${UI_BENCH_RATES:-"1000 2000 4000"}
SYNC=${UI_BENCH_SYNC:-normal}
DATA_PARENT=${UI_BENCH_DATA_PARENT:-${TMPDIR:-/tmp}}
STRICT=${UI_BENCH_STRICT:-0}
CHROMIUM=${CHROMIUM:-$(command -v chromium || true)}

CAIRN=$BUILD/src/app/cairn
need_commands " (run make deps)" node curl awk timeout
need_cairn "$CAIRN"
[[ -x $CHROMIUM ]] || { echo "bench/ui: chromium is not installed (run make deps)" >&2; exit 2; }
[[ -f $ROOT/tests/e2e/ui-node/node_modules/playwright-core/package.json ]] ||
  { echo "bench/ui: tests/e2e/ui-node has no node_modules (run make deps)" >&2; exit 2; }

new_results
# shellcheck source=bench/lib.sh
source "$HERE/../lib.sh"
trap_cleanup

{
  machine_info
  data_fs_info "$DATA_PARENT"
  echo "node=$(node --version) chromium=$("$CHROMIUM" --version 2>/dev/null | head -1)"
  echo "rates=$RATES seconds=$SECS replay=$REPLAY sync=$SYNC quick=$QUICK"
} >"$RESULTS/machine.txt"
show_machine

DATA_DIR=$(mktemp -d "$DATA_PARENT/cairn-uibench.XXXXXX")
start_cairn "$CAIRN" "$DATA_DIR" --sync "$SYNC" --builtin-tools=false --default-agent=false
log "cairn pid $SERVER_PID on 127.0.0.1:$PORT (--sync $SYNC)"

rc=0
n_rates=$(wc -w <<<"$RATES")
timeout --kill-after=10 $(((SECS + 150) * n_rates + 300)) node "$HERE/tail.mjs" --port "$PORT" --rates "$RATES" \
  --seconds "$SECS" --replay "$REPLAY" --chromium "$CHROMIUM" \
  >"$RESULTS/tail.jsonl" 2> >(tee -a "$RESULTS/tail.stderr" >&2) || rc=$?
save_server_end ""
stop_server
rm -rf "$DATA_DIR"; DATA_DIR=""

# One .kv per phase (live-<rate>, replay) for val().
while IFS= read -r line; do
  [[ $line == \{* ]] || continue
  name=$(node -e 'const o = JSON.parse(process.argv[1]); console.log(o.phase === "live" ? "live-" + o.rate_target : o.phase)' "$line")
  printf '%s\n' "$line" >"$RESULTS/$name.json"
  json_kv "$RESULTS/$name.json" >"$RESULTS/$name.kv"
done <"$RESULTS/tail.jsonl"

row() { printf '%-10s | %8s | %9s %7s %7s %9s | %9s %7s | %s\n' "$@"; }
fails=0
{
  summary_head "dashboard live tail" "chromium, the writer and the bare client share the $(nproc) CPUs with the server"
  echo "cairn --sync $SYNC; the Events page (/ui) in headless chromium vs a bare SSE client in Node, same selector"
  echo "target: at 1000 records/s the page gets every event, < 1000 ms behind the last write, no frame gap >= 250 ms"
  echo
  row "phase" "written/s" "page got" "lag ms" "gap ms" "gaps>100" "bare got" "lag ms" "result"
  row "control" "$(val control write_rate)" "$(val control page.received)" "" "$(val control page.max_frame_gap_ms)" \
      "$(val control page.frames_over_100ms)" "" "" "(the page follows nothing: the machine's own frame gaps)"
  for rate in $RATES; do
    n=live-$rate
    result=""
    if [[ -z $(val "$n" written) ]]; then
      result="no result"
    elif [[ $rate == 1000 ]] && (($(val "$n" write_rate) < 900)); then
      result="NOT MEASURED: the writer reached only $(val "$n" write_rate)/s"
    elif [[ $rate == 1000 ]]; then
      if [[ $(val "$n" page.received) == "$(val "$n" written)" && $(val "$n" page.lag_ms) -lt 1000 &&
            $(val "$n" page.max_frame_gap_ms) -lt 250 ]]; then result=PASS; else result=FAIL; fi
    fi
    [[ $result == FAIL || $result == "no result" || $result == NOT* ]] && fails=$((fails + 1))
    row "$rate/s" "$(val "$n" write_rate)" "$(val "$n" page.received)/$(val "$n" written)" "$(val "$n" page.lag_ms)" \
        "$(val "$n" page.max_frame_gap_ms)" "$(val "$n" page.frames_over_100ms)" "$(val "$n" bare.received)" \
        "$(val "$n" bare.lag_ms)" "$result"
  done
  if ((REPLAY > 0)); then
    echo
    echo "replay of $REPLAY stored events from a seq: page $(val replay page.events_per_s) events/s" \
         "(frame gap max $(val replay page.max_frame_gap_ms) ms, $(val replay page.frames_over_100ms) over 100 ms)," \
         "bare client $(val replay bare.events_per_s) events/s; ratio page/bare $(val replay ratio)"
  fi
  ((rc == 0)) || { echo "tail.mjs exited with status $rc (see tail.stderr)"; fails=$((fails + 1)); }
  ((SERVER_ALIVE)) || { echo "THE SERVER WAS NOT RUNNING AT THE END (see server.log)"; fails=$((fails + 1)); }
  echo
  echo "raw outputs: $RESULTS"
} >"$RESULTS/summary.txt"
cat "$RESULTS/summary.txt"

if ((STRICT && fails > 0)); then exit 3; fi
exit 0
