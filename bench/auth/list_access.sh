#!/usr/bin/env bash
# bench/auth/list_access.sh [BUILD_DIR] [--quick] — the cost of record access on listing.
#
# One server (--auth=on) holds RECORDS records of one tenant, written by two principals: most
# `team`, one in ten `private` of the other principal, one in twenty with an acl.read. Then wrk
# reads the same list back to back, two ways:
#   admin  an admin's key: no reader scope, the list query as it was before record access
#   user   a user's key: the reader's scope in the query's WHERE (model/access.h)
# for GET /breadcrumbs?limit=50 (newest page) and GET /breadcrumbs?tag=bench&limit=50, and
# reports requests/s of each and the ratios user/admin (docs/security.md "Record access").
# Not part of `make bench` (a quick check); raw outputs go to BUILD_DIR/results/list-access-<stamp>/.
#
# Environment (all optional):
#   LIST_BENCH_RECORDS=3000   records written before measuring
#   LIST_BENCH_SECONDS=5      measured seconds per way (2 with --quick), after 1 s of warm-up
#   LIST_BENCH_CONNECTIONS=8  wrk connections (2 threads)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=bench/args.sh
source "$ROOT/bench/args.sh"
parse_bench_args list-access 0 "$@"
need_commands " (run make bench, which installs it)" wrk curl awk
CAIRN=$BUILD/src/app/cairn
need_cairn "$CAIRN"
new_results
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
trap_cleanup

RECORDS=${LIST_BENCH_RECORDS:-3000}
SECONDS_PER=${LIST_BENCH_SECONDS:-5}
[[ $QUICK == 1 ]] && SECONDS_PER=2
CONNS=${LIST_BENCH_CONNECTIONS:-8}
BOOTSTRAP=bench-bootstrap-admin-key-0123456789abcdef
machine_info >"$RESULTS/machine.txt"

DATA_DIR=$(mktemp -d "${TMPDIR:-/tmp}/cairn-list-bench.XXXXXX")
start_cairn "$CAIRN" "$DATA_DIR" --auth=on --bootstrap-admin-key "$BOOTSTRAP" --sync normal
key_of() {
  curl -fsS -H "Authorization: Bearer $BOOTSTRAP" -H 'Content-Type: application/json' \
    -d "{\"principal\":\"$1\",\"roles\":[\"$2\"]}" "http://127.0.0.1:$PORT/tenants/default/keys" |
    grep -oE '"key":"[^"]+"' | cut -d'"' -f4
}
ADMIN=$(key_of ann admin)
ALICE=$(key_of alice user)
BOB=$(key_of bob user)
[[ -n $ADMIN && -n $ALICE && -n $BOB ]] || die "could not make the keys"

log "writing $RECORDS records"
for ((i = 0; i < RECORDS; i++)); do
  extra=""
  ((i % 10 == 0)) && extra=',"visibility":"private"'
  ((i % 20 == 5)) && extra=',"acl":{"read":["role:developer"]}'
  writer=$ALICE
  ((i % 2 == 0)) && writer=$BOB
  curl -fsS -o /dev/null --max-time 10 -H 'Content-Type: application/json' -H "Authorization: Bearer $writer" \
    -d "{\"title\":\"bench $i\",\"tags\":[\"bench\"],\"context\":{\"n\":$i}$extra}" "http://127.0.0.1:$PORT/breadcrumbs"
done

# measure NAME KEY PATH: wrk on PATH as KEY; key=value results in $RESULTS/NAME.kv.
measure() {
  local name=$1 key=$2 path=$3
  local -a args=(-t 2 -c "$CONNS" -H "Authorization: Bearer $key")
  timeout 60 wrk "${args[@]}" -d 1 "http://127.0.0.1:$PORT$path" >/dev/null
  timeout $((SECONDS_PER + 60)) wrk "${args[@]}" -d "$SECONDS_PER" "http://127.0.0.1:$PORT$path" >"$RESULTS/$name.out"
  awk '/Requests\/sec/ { print "ok_per_sec=" $2 } /Non-2xx/ { print "non2xx=" $NF }' "$RESULTS/$name.out" >"$RESULTS/$name.kv"
  [[ -z $(val "$name" non2xx) ]] || die "$name: non-2xx answers (see $RESULTS/$name.out)"
  log "$name: $(val "$name" ok_per_sec) req/s"
}
for way in newest tagged; do
  path="/breadcrumbs?limit=50"
  [[ $way == tagged ]] && path="/breadcrumbs?tag=bench&limit=50"
  measure "$way-admin" "$ADMIN" "$path"
  measure "$way-user" "$ALICE" "$path"
done
stop_server
rm -rf "$DATA_DIR"
{
  echo "record access on GET /breadcrumbs (limit 50) over $RECORDS records, ${SECONDS_PER}s each, $CONNS connections"
  for way in newest tagged; do
    printf '  %-7s admin %9s req/s  user %9s req/s  user/admin = %s\n' "$way" "$(val "$way-admin" ok_per_sec)" \
      "$(val "$way-user" ok_per_sec)" "$(ratio_of "$(val "$way-user" ok_per_sec)" "$(val "$way-admin" ok_per_sec)")"
  done
} | tee "$RESULTS/summary.txt"
