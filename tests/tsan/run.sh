#!/usr/bin/env bash
# Runs the ThreadSanitizer suites (`make tsan`): tests/tsan/run.sh BUILD_DIR JOBS SUITE...
# Each SUITE is a test binary; its tests carry its name as their ctest label. Fails if a test
# fails or if any process (a test binary, or a cairn server an end-to-end test started) wrote a
# ThreadSanitizer report.
set -euo pipefail

if (($# < 3)); then
  echo "usage: $0 BUILD_DIR JOBS SUITE..." >&2
  exit 2
fi
build="$(cd "$1" && pwd)"
jobs="$2"
shift 2
here="$(cd "$(dirname "$0")" && pwd)"

# Every process writes its reports to report.<pid> here: a server's stderr goes to the temporary
# directory of its test, which the test removes, so its reports would be lost otherwise.
reports="$build/tsan-reports"
rm -rf "$reports"
mkdir -p "$reports"

# halt_on_error: the first report ends the process, so the test that caused it fails there.
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$here/suppressions.txt:log_path=$reports/report"

labels="^($(IFS='|'; echo "$*"))\$"
# Tests of these suites left out here, each for a reason that has nothing to do with threads:
# - e2e_full_disk: once the disk is full, one more write must still be refused; but it can fit in
#   file space the refused batches had already allocated (the WAL keeps it), and how much that is
#   depends on how the four concurrent writers happened to batch, which TSan's slowdown changes.
#   It failed that way in one of three runs here. The kill -9 fault test of the suite still runs.
exclude='^e2e_full_disk\.'
status=0
start=$SECONDS
(cd "$build" && ctest -L "$labels" -E "$exclude" --no-tests=error --output-on-failure -j "$jobs" --timeout 600) ||
  status=$?
echo "tsan: tests ran in $((SECONDS - start)) s"

if compgen -G "$reports/report.*" >/dev/null; then
  for f in "$reports"/report.*; do
    echo "=== tsan: $f" >&2
    cat "$f" >&2
  done
  echo "tsan: ThreadSanitizer reported the above (kept in $reports)" >&2
  status=1
fi
exit "$status"
