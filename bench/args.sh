# bench/args.sh — the command line every bench/<name>/run.sh takes: [BUILD_DIR] [--quick].
# Source it first, with ROOT set to the repository; then `parse_bench_args NAME "$QUICK" "$@"` sets
# QUICK (1 with --quick, else the given default) and BUILD (BUILD_DIR, default build/bench, as an
# absolute path), or exits 2 with the usage line.
# shellcheck shell=bash

parse_bench_args() {
  local name=$1 build_arg="" a
  QUICK=$2
  shift 2
  local usage="usage: bench/$name/run.sh [BUILD_DIR] [--quick]"
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
