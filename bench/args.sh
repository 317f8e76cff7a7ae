# bench/args.sh — the command line every bench/<name>/run.sh takes: [BUILD_DIR] [--quick], and what
# it checks and prepares before it sources lib.sh. Source it first, with ROOT set to the repository;
# then `parse_bench_args NAME "$QUICK" "$@"` sets QUICK (1 with --quick, else the given default),
# BUILD (BUILD_DIR, default build/bench, as an absolute path) and BENCH_NAME (NAME), or exits 2 with
# the usage line.
# shellcheck shell=bash

parse_bench_args() {
  local name=$1 build_arg="" a
  QUICK=$2
  shift 2
  local usage="usage: bench/$name/run.sh [BUILD_DIR] [--quick]"
  BENCH_NAME=$name
  for a in "$@"; do
    case $a in
      --quick) QUICK=1 ;;
      -*) echo "$usage" >&2; exit 2 ;;
      *) [[ -z $build_arg ]] || { echo "$usage" >&2; exit 2; }; build_arg=$a ;;
    esac
  done
  BUILD=$(cd "${build_arg:-$ROOT/build/bench}" 2>/dev/null && pwd) ||
    { echo "bench/$name: no build directory ${build_arg:-$ROOT/build/bench}; $usage" >&2; exit 2; }
}

# need_commands HINT COMMAND...: exits 2 unless every COMMAND is on PATH (the message ends with HINT).
need_commands() {
  local hint=$1 c
  shift
  for c in "$@"; do
    command -v "$c" >/dev/null || { echo "bench/$BENCH_NAME: '$c' is not installed$hint" >&2; exit 2; }
  done
}
# need_cairn CAIRN: exits 2 unless the cairn binary CAIRN was built.
need_cairn() {
  [[ -x $1 ]] || { echo "bench/$BENCH_NAME: $1 not found; build the 'cairn' target first" >&2; exit 2; }
}
# new_results: a fresh BUILD/results/BENCH_NAME-<STAMP>/ as RESULTS, with LOG, its run.log.
# shellcheck disable=SC2034  # LOG is lib.sh's
new_results() {
  STAMP=$(date -u +%Y%m%dT%H%M%SZ)
  RESULTS=$BUILD/results/$BENCH_NAME-$STAMP
  mkdir -p "$RESULTS"
  LOG=$RESULTS/run.log
}
# need_langgraph DIR SKIP_VAR: exits 2 when the LangGraph JS baseline in DIR has no node_modules,
# unless RUN_LANGGRAPH is 0 (what SKIP_VAR=0 sets).
need_langgraph() {
  ((RUN_LANGGRAPH)) || return 0
  [[ -d $1/node_modules ]] && return 0
  echo "bench/$BENCH_NAME: $1/node_modules is missing; run scripts/install-deps bench" \
       "(or npm ci --legacy-peer-deps --prefix ${1#"$ROOT"/}), or set $2=0" >&2
  exit 2
}
