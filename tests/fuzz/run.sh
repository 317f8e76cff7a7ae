#!/usr/bin/env bash
# Runs the fuzz targets of a CAIRN_FUZZ build (`make fuzz`), each for a bounded time, starting from
# its checked-in corpus and the reproducers of its known findings. New inputs go to a temporary
# directory, so a run never changes the tree. Exits non-zero if any target crashes, leaks, times
# out or breaks a property; the input that did it is kept in <build dir>/fuzz-artifacts/.
#   usage: tests/fuzz/run.sh <build dir> [seconds per target] [target...]
# FUZZ_SEED and FUZZ_RUNS (environment) make a run repeatable: with both, every target runs the
# same inputs on any machine (seconds then only caps a slow one), which is what CI gates on; without
# them each run explores anew.
set -euo pipefail

build="${1:?usage: $0 <build dir> [seconds per target] [target...]}"
seconds="${2:-60}"
shift $(($# < 2 ? $# : 2))
targets=("$@")
if ((${#targets[@]} == 0)); then targets=(json_fuzz http_request_fuzz selector_fuzz query_string_fuzz cel_fuzz search_text_fuzz); fi

here="$(cd "$(dirname "$0")" && pwd)"
artifacts="$build/fuzz-artifacts"
logs="$build/fuzz-logs"
mkdir -p "$artifacts" "$logs"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Stacks with function names and lines; a report of any sanitizer ends the run as a crash.
for symbolizer in llvm-symbolizer-16 llvm-symbolizer; do
  if command -v "$symbolizer" >/dev/null; then export ASAN_SYMBOLIZER_PATH="$(command -v "$symbolizer")"; break; fi
done
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

failed=()
for target in "${targets[@]}"; do
  binary="$build/tests/fuzz/$target"
  [[ -x $binary ]] || { echo "fuzz: no $binary (build with CAIRN_FUZZ=ON)" >&2; exit 2; }
  mkdir -p "$work/$target"
  dirs=("$work/$target" "$here/corpus/$target")  # the first one receives new inputs
  [[ -d $here/findings/$target ]] && dirs+=("$here/findings/$target")
  options=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
           -artifact_prefix="$artifacts/$target-")
  [[ -f $here/dict/$target.dict ]] && options+=(-dict="$here/dict/$target.dict")
  [[ -n ${FUZZ_SEED:-} ]] && options+=(-seed="$FUZZ_SEED")
  [[ -n ${FUZZ_RUNS:-} ]] && options+=(-runs="$FUZZ_RUNS")
  echo "fuzz: $target for ${seconds}s"
  if "$binary" "${options[@]}" "${dirs[@]}" >"$logs/$target.log" 2>&1; then
    # The last status line: executions, coverage (cov), features (ft), corpus size, exec/s.
    { grep -a -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE)' "$logs/$target.log" || true; } | tail -1 | sed 's/^/  /'
    { grep -a 'known finding reached' "$logs/$target.log" || true; } | sort -u | sed 's/^/  /'
  else
    echo "fuzz: $target FAILED; log: $logs/$target.log" >&2
    { grep -a -v -E '^#[0-9]+' "$logs/$target.log" || true; } | tail -60 >&2
    failed+=("$target")
  fi
done

if ((${#failed[@]} > 0)); then
  echo "fuzz: failed: ${failed[*]} (inputs in $artifacts)" >&2
  exit 1
fi
