#!/usr/bin/env bash
# bench/search/run.sh [BUILD_DIR] [--quick] — the search benchmarks (run by `make bench`; see
# docs/performance.md). Builds nothing: BUILD_DIR (default build/bench) must hold
# bench/search/search_bench (`cmake --build BUILD_DIR --target search_bench`).
#
# In one run, each against its same-run baseline:
#   vectors  100,000 × 384-dimension clustered unit vectors: cairn's hnswlib index top-10 queries/s
#            and recall@10 against an exact brute-force scan over the same vectors; build time and
#            memory. Target: ≥ 20× the scan's queries/s at recall@10 ≥ 0.95.
#   text     1,000,000 records written through the store API, then full-text queries of 1-3
#            words: p50/p99 latency (for information; no baseline).
#   writes   creates (1 KiB contexts, 4 writer threads, one create per transaction) with the
#            full-text index and the embedding worker on, timed until every vector is stored,
#            against the same creates with neither. Target: ≥ 0.8×.
# Results: key=value files in BUILD_DIR/results/search-<stamp>/.
#
# Environment (all optional):
#   SEARCH_BENCH_VECTORS=100000   SEARCH_BENCH_RECORDS=1000000   SEARCH_BENCH_WRITES=20000
#   SEARCH_BENCH_DATA_PARENT=$TMPDIR   where the temporary stores go (the text phase needs ~1.5 GB)
#   --quick: 20,000 vectors, 100,000 text records, 5,000 writes
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=bench/args.sh
source "$ROOT/bench/args.sh"
parse_bench_args search "${SEARCH_BENCH_QUICK:-0}" "$@"
BENCH=$BUILD/bench/search/search_bench
[[ -x $BENCH ]] || { echo "bench/search: $BENCH not found; cmake --build $BUILD --target search_bench" >&2; exit 2; }
new_results
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
machine_info >"$RESULTS/machine.txt"
show_machine

if [[ $QUICK == 1 ]]; then
  vectors=20000 records=100000 writes=5000
else
  vectors=${SEARCH_BENCH_VECTORS:-100000} records=${SEARCH_BENCH_RECORDS:-1000000} writes=${SEARCH_BENCH_WRITES:-20000}
fi
DATA_DIR=$(mktemp -d "${SEARCH_BENCH_DATA_PARENT:-${TMPDIR:-/tmp}}/cairn-search-bench.XXXXXX")
trap_cleanup  # removes DATA_DIR on exit

log "vectors: $vectors × 384, hnswlib against the exact scan"
"$BENCH" vectors --count "$vectors" >"$RESULTS/vectors.kv"
log "writes: $writes creates with full text and embeddings against without"
"$BENCH" writes --dir "$DATA_DIR/writes" --records "$writes" >"$RESULTS/writes.kv"
log "text: $records records, then full-text queries"
"$BENCH" text --dir "$DATA_DIR/text" --records "$records" >"$RESULTS/text.kv"

check() { awk -v v="$1" -v t="$2" 'BEGIN { print (v + 0 >= t + 0) ? "PASS" : "MISS" }'; }
speedup=$(val vectors speedup) recall=$(val vectors recall_at_10) best=$(val vectors best_speedup_at_recall_095)
ratio=$(val writes searchable_ratio)
sweep=""
for ef in 16 24 32 48 64 96; do
  sweep+=" ef$ef $(val vectors "ef${ef}_speedup")× recall $(val vectors "ef${ef}_recall_at_10");"
done
cat <<SUMMARY | tee "$RESULTS/summary.txt"
search benchmark ($(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) CPUs, load $(loadavg))
vectors   $(val vectors vectors) × $(val vectors dimension), exact scan $(val vectors exact_cpu_qps) q/CPU-s ($(val vectors exact_qps) q/s wall)
          default ef_search $(val vectors hnsw_ef_search): hnsw $(val vectors hnsw_cpu_qps) q/CPU-s ($(val vectors hnsw_qps) q/s wall), ${speedup}× per CPU second ($(val vectors wall_speedup)× wall), recall@10 $recall
          sweep:$sweep
          best speedup at recall@10 ≥ 0.95: ${best}× (target ≥ 20×): $(check "$best" 20)
          build $(val vectors build_seconds) s wall, $(val vectors build_cpu_seconds) s CPU, index $(($(val vectors index_bytes) / 1048576)) MiB, RSS +$(($(val vectors rss_growth_bytes) / 1048576)) MiB
text      $(val text records) records (loaded at $(val text load_records_per_s)/s): content words p50 $(val text text_p50_ms) ms, p99 $(val text text_p99_ms) ms (mean hits $(val text mean_hits)); common words p50 $(val text common_p50_ms) ms, p99 $(val text common_p99_ms) ms
writes    baseline $(val writes baseline_creates_per_s)/s; with FTS + embeddings $(val writes fts_embed_searchable_per_s)/s (until every vector is stored)
          ratio ${ratio}× (target ≥ 0.8×): $(check "$ratio" 0.8); FTS alone $(val writes fts_only_ratio)×, embeddings alone $(val writes embed_only_ratio)×
SUMMARY
