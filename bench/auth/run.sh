#!/usr/bin/env bash
# bench/auth/run.sh [BUILD_DIR] [--quick] — the cost of authentication (run by `make bench`).
#
# Measures GET /breadcrumbs/{id} (wrk, keep-alive, over ids created beforehand) on the same binary,
# back to back, three ways:
#   off    --auth=none (the baseline)
#   key    --auth=on, Authorization: Bearer <API key> (SHA-256 of the key, one map lookup)
#   token  --auth=on, Authorization: Bearer <HS256 JWT> (HMAC check, claims parsed)
# and reports requests/s and p99 of each, and the ratios key/off and token/off (docs/auth.md,
# docs/performance.md). Target: each ratio ≥ 0.8. Raw outputs go to BUILD_DIR/results/auth-<stamp>/.
#
# Environment (all optional):
#   AUTH_BENCH_SECONDS=10      measured seconds per way (2 with --quick), after 2 s of warm-up
#   AUTH_BENCH_IDS=1000        records created and read round-robin
#   AUTH_BENCH_CONNECTIONS=32  wrk connections (2 threads)
#   AUTH_BENCH_ROUNDS=3        rounds of the three ways (1 with --quick); ratios are medians
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=bench/args.sh
source "$ROOT/bench/args.sh"
parse_bench_args auth 0 "$@"
need_commands " (run make bench, which installs it)" wrk curl awk
CAIRN=$BUILD/src/app/cairn
need_cairn "$CAIRN"
new_results
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
trap_cleanup

SECONDS_PER=${AUTH_BENCH_SECONDS:-10}
ROUNDS=${AUTH_BENCH_ROUNDS:-3}
if [[ $QUICK == 1 ]]; then SECONDS_PER=2; ROUNDS=1; fi
IDS=${AUTH_BENCH_IDS:-1000}
CONNS=${AUTH_BENCH_CONNECTIONS:-32}
BOOTSTRAP=bench-bootstrap-admin-key-0123456789abcdef
machine_info >"$RESULTS/machine.txt"
show_machine

# fill AUTH_HEADER: creates $IDS records (one id per line into $RESULTS/ids.txt).
fill() {
  : >"$RESULTS/ids.txt"
  for ((i = 0; i < IDS; i++)); do
    curl -fsS --max-time 10 -H 'Content-Type: application/json' ${1:+-H "$1"} \
      -d "{\"title\":\"bench $i\",\"context\":{\"n\":$i,\"text\":\"a record of about a hundred bytes of context\"}}" \
      "http://127.0.0.1:$PORT/breadcrumbs" | grep -oE '"id":"[^"]+"' | head -n 1 | cut -d'"' -f4 >>"$RESULTS/ids.txt"
  done
  [[ $(wc -l <"$RESULTS/ids.txt") -eq $IDS ]] || die "could not create $IDS records"
}

# measure NAME [HEADER]: warm-up, then wrk GET by id; key=value results in $RESULTS/NAME.kv.
measure() {
  local name=$1 header=${2:-}
  local -a args=(-t 2 -c "$CONNS" -s "$ROOT/bench/wrk/get_breadcrumb.lua")
  [[ -n $header ]] && args+=(-H "$header")
  BENCH_WRK_THREADS=2 timeout 60 wrk "${args[@]}" -d 2 "http://127.0.0.1:$PORT" -- "$RESULTS/ids.txt" >/dev/null
  BENCH_WRK_THREADS=2 timeout $((SECONDS_PER + 60)) wrk "${args[@]}" -d "$SECONDS_PER" "http://127.0.0.1:$PORT" \
    -- "$RESULTS/ids.txt" >"$RESULTS/$name.out"
  grep '^bench_' "$RESULTS/$name.out" | sed 's/^bench_//' >"$RESULTS/$name.kv"
  [[ $(val "$name" non2xx) == 0 ]] || die "$name: non-2xx answers (see $RESULTS/$name.out)"
  log "$name: $(val "$name" ok_per_sec) req/s, p99 $(val "$name" lat_p99_us) µs"
}

for ((round = 1; round <= ROUNDS; round++)); do
  DATA_DIR=$(mktemp -d "${TMPDIR:-/tmp}/cairn-auth-bench.XXXXXX")
  start_cairn "$CAIRN" "$DATA_DIR" --auth=none
  fill ""
  measure "off-$round"
  stop_server
  rm -rf "$DATA_DIR"

  DATA_DIR=$(mktemp -d "${TMPDIR:-/tmp}/cairn-auth-bench.XXXXXX")
  start_cairn "$CAIRN" "$DATA_DIR" --auth=on --bootstrap-admin-key "$BOOTSTRAP"
  KEY=$(curl -fsS -H "Authorization: Bearer $BOOTSTRAP" -H 'Content-Type: application/json' \
    -d '{"principal":"bench","roles":["user"]}' "http://127.0.0.1:$PORT/tenants/default/keys" | grep -oE '"key":"[^"]+"' | cut -d'"' -f4)
  TOKEN=$(curl -fsS -H 'Content-Type: application/json' -d "{\"key\":\"$KEY\"}" "http://127.0.0.1:$PORT/auth/token" |
    grep -oE '"token":"[^"]+"' | cut -d'"' -f4)
  [[ -n $KEY && -n $TOKEN ]] || die "could not make a key and a token"
  fill "Authorization: Bearer $KEY"
  measure "key-$round" "Authorization: Bearer $KEY"
  measure "token-$round" "Authorization: Bearer $TOKEN"
  stop_server
  rm -rf "$DATA_DIR"
done

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "n/a"; else print v[int((NR + 1) / 2)] }'; }
ratios() {
  for ((round = 1; round <= ROUNDS; round++)); do ratio_of "$(val "$1-$round" ok_per_sec)" "$(val "off-$round" ok_per_sec)"; echo; done | median
}
KEY_RATIO=$(ratios key)
TOKEN_RATIO=$(ratios token)
{
  echo "auth cost on GET /breadcrumbs/{id} ($ROUNDS rounds × ${SECONDS_PER}s, $CONNS connections, median ratios)"
  for ((round = 1; round <= ROUNDS; round++)); do
    for way in off key token; do
      printf '  round %d %-6s %10s req/s  p99 %6s µs\n' "$round" "$way" "$(val "$way-$round" ok_per_sec)" "$(val "$way-$round" lat_p99_us)"
    done
  done
  echo "  key/off   = $KEY_RATIO (target ≥ 0.8)"
  echo "  token/off = $TOKEN_RATIO (target ≥ 0.8)"
} | tee "$RESULTS/summary.txt"
