// search_bench: the search benchmarks (bench/search/run.sh; docs/performance.md), each printing
// key=value lines.
//
//   search_bench vectors [--count N] [--dimension D] [--clusters C] [--queries Q] [--exact-queries E]
//     N clustered synthetic unit vectors: HnswIndex (cairn's index, hnswlib) build time and memory,
//     then top-10 queries/s of the index and of an exact brute-force scan over the same vectors in
//     the same run, and the index's recall@10 against the scan.
//   search_bench text --dir DIR [--records N] [--queries Q]
//     N records written through the store API (SqliteStore, batches of 1,000, FTS5 kept by its
//     triggers), then Q full-text queries of 1-3 words: p50/p99 latency.
//   search_bench writes --dir DIR [--records N] [--writers W]
//     creates of N records with 1 KiB contexts by W threads, one create per transaction, on a store
//     without the full-text triggers and with no embedding worker (the baseline), then with both
//     (timed until the worker has stored every vector), then with each alone: the rates and ratios.
//     --only baseline|both|fts|embed runs that phase alone (for a profiler: valgrind --tool=callgrind
//     counts one phase's instructions).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <ctime>
#include <sys/resource.h>
#include <unistd.h>
#include <string>
#include <thread>
#include <vector>

#include <boost/json.hpp>
#include <sqlite3.h>

#include "base/clock.h"
#include "bus/local_event_bus.h"
#include "search/embedder.h"
#include "search/embedding_worker.h"
#include "search/hashing_embedder.h"
#include "search/hnsw_index.h"
#include "store/sqlite/sqlite_store.h"

namespace {

using Clock = std::chrono::steady_clock;
using cairn::search::HnswIndex;

double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

// This thread's CPU time: rates per CPU second do not depend on what else the machine runs.
double ThreadCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
}

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

size_t RssBytes() {
  std::ifstream statm("/proc/self/statm");
  size_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

std::string Arg(int argc, char** argv, const std::string& name, const std::string& fallback) {
  for (int i = 2; i + 1 < argc; ++i) {
    if (argv[i] == "--" + name) return argv[i + 1];
  }
  return fallback;
}
size_t SizeArg(int argc, char** argv, const std::string& name, size_t fallback) {
  return static_cast<size_t>(std::stoull(Arg(argc, argv, name, std::to_string(fallback))));
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, static_cast<size_t>(p * static_cast<double>(values.size())))];
}

// ---- vectors -------------------------------------------------------------------------------------

// `count` unit vectors around `clusters` random centres (a centre plus Gaussian noise of 0.35 of
// its norm spread over the dimensions), like embeddings of documents on a number of topics.
std::vector<float> Clustered(size_t count, size_t dimension, const std::vector<float>& centres, size_t clusters,
                             std::mt19937& rng) {
  std::normal_distribution<float> noise(0, 0.35f / std::sqrt(static_cast<float>(dimension)) * 1.0f);
  std::uniform_int_distribution<size_t> pick(0, clusters - 1);
  std::vector<float> out(count * dimension);
  for (size_t i = 0; i < count; ++i) {
    const float* centre = &centres[pick(rng) * dimension];
    float* v = &out[i * dimension];
    double norm = 0;
    for (size_t d = 0; d < dimension; ++d) {
      v[d] = centre[d] + noise(rng);
      norm += static_cast<double>(v[d]) * v[d];
    }
    const auto scale = static_cast<float>(1.0 / std::sqrt(norm));
    for (size_t d = 0; d < dimension; ++d) v[d] *= scale;
  }
  return out;
}

// The exact top `k` by inner product (the vectors are unit length: cosine), best first.
std::vector<uint64_t> BruteForce(const std::vector<float>& data, size_t dimension, const float* query, size_t k) {
  const size_t count = data.size() / dimension;
  std::vector<std::pair<float, uint64_t>> best;  // a min-heap of the k best
  best.reserve(k + 1);
  auto worse = [](const auto& a, const auto& b) { return a.first > b.first; };
  for (size_t i = 0; i < count; ++i) {
    const float* v = &data[i * dimension];
    // Eight independent sums: the compiler turns them into SIMD lanes (one sum could not be
    // reordered), so the scan is as fast as plain code gets without hand-written intrinsics.
    float lanes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    size_t d = 0;
    for (; d + 8 <= dimension; d += 8) {
      for (size_t l = 0; l < 8; ++l) lanes[l] += v[d + l] * query[d + l];
    }
    float dot = 0;
    for (; d < dimension; ++d) dot += v[d] * query[d];
    for (float lane : lanes) dot += lane;
    if (best.size() < k) {
      best.emplace_back(dot, i);
      std::push_heap(best.begin(), best.end(), worse);
    } else if (dot > best.front().first) {
      std::pop_heap(best.begin(), best.end(), worse);
      best.back() = {dot, i};
      std::push_heap(best.begin(), best.end(), worse);
    }
  }
  std::sort_heap(best.begin(), best.end(), worse);
  std::vector<uint64_t> labels;
  for (const auto& [score, label] : best) labels.push_back(label);
  return labels;
}

int Vectors(int argc, char** argv) {
  const size_t count = SizeArg(argc, argv, "count", 100000);
  const size_t dimension = SizeArg(argc, argv, "dimension", 384);
  const size_t clusters = SizeArg(argc, argv, "clusters", 100);
  const size_t queries = SizeArg(argc, argv, "queries", 2000);
  const size_t exact_queries = std::min(queries, SizeArg(argc, argv, "exact-queries", 200));
  constexpr size_t k = 10;
  std::mt19937 rng(42);
  std::normal_distribution<float> normal(0, 1);
  std::vector<float> centres(clusters * dimension);
  for (float& x : centres) x = normal(rng) / std::sqrt(static_cast<float>(dimension));
  const std::vector<float> data = Clustered(count, dimension, centres, clusters, rng);
  const std::vector<float> probes = Clustered(queries, dimension, centres, clusters, rng);

  const size_t rss_before = RssBytes();
  cairn::search::HnswOptions options;
  HnswIndex index(dimension, options);
  auto start = Clock::now();
  const double cpu_start = CpuSeconds();
  for (size_t i = 0; i < count; ++i) {
    if (!index.Add(i, &data[i * dimension]).ok()) return 1;
  }
  const double build_s = SecondsSince(start);
  const double build_cpu_s = CpuSeconds() - cpu_start;
  const size_t rss_after = RssBytes();

  // The exact answers first, then the index at several candidate-list sizes (ef_search): recall
  // against speed, the production default (HnswOptions) among them.
  start = Clock::now();
  double cpu = ThreadCpuSeconds();
  std::vector<std::vector<uint64_t>> exact(exact_queries);
  for (size_t q = 0; q < exact_queries; ++q) exact[q] = BruteForce(data, dimension, &probes[q * dimension], k);
  const double exact_qps = static_cast<double>(exact_queries) / SecondsSince(start);
  const double exact_cpu_qps = static_cast<double>(exact_queries) / (ThreadCpuSeconds() - cpu);
  std::printf("vectors=%zu\ndimension=%zu\nclusters=%zu\nhnsw_m=%zu\nhnsw_ef_construction=%zu\nhnsw_ef_search=%zu\n",
              count, dimension, clusters, options.m, options.ef_construction, options.ef_search);
  std::printf("build_seconds=%.2f\nbuild_cpu_seconds=%.2f\nbuild_vectors_per_s=%.0f\nindex_bytes=%zu\n"
              "rss_growth_bytes=%zu\n",
              build_s, build_cpu_s, static_cast<double>(count) / build_s, index.MemoryBytes(), rss_after - rss_before);
  std::printf("hnsw_queries=%zu\nexact_queries=%zu\nexact_qps=%.1f\nexact_cpu_qps=%.1f\n", queries, exact_queries,
              exact_qps, exact_cpu_qps);
  double best_speedup = 0;  // at recall >= 0.95
  for (size_t ef : {16, 24, 32, 48, 64, 96}) {
    index.SetEfSearch(ef);
    start = Clock::now();
    cpu = ThreadCpuSeconds();
    std::vector<std::vector<uint64_t>> approximate(queries);
    for (size_t q = 0; q < queries; ++q) {
      for (const auto& [label, score] : index.Search(&probes[q * dimension], k)) approximate[q].push_back(label);
    }
    const double hnsw_qps = static_cast<double>(queries) / SecondsSince(start);
    const double hnsw_cpu_qps = static_cast<double>(queries) / (ThreadCpuSeconds() - cpu);
    size_t found = 0;
    for (size_t q = 0; q < exact_queries; ++q) {
      for (uint64_t label : approximate[q]) found += std::count(exact[q].begin(), exact[q].end(), label);
    }
    const double recall = static_cast<double>(found) / static_cast<double>(exact_queries * k);
    // Per CPU second: the wall-clock rates of the two loops, run one after the other, move with
    // the machine's load (both are printed).
    const double speedup = hnsw_cpu_qps / exact_cpu_qps;
    if (recall >= 0.95) best_speedup = std::max(best_speedup, speedup);
    std::printf("ef%zu_qps=%.0f\nef%zu_cpu_qps=%.0f\nef%zu_recall_at_10=%.4f\nef%zu_speedup=%.1f\n", ef, hnsw_qps, ef,
                hnsw_cpu_qps, ef, recall, ef, speedup);
    if (ef == options.ef_search) {
      std::printf("hnsw_qps=%.0f\nhnsw_cpu_qps=%.0f\nrecall_at_10=%.4f\nspeedup=%.1f\nwall_speedup=%.1f\n", hnsw_qps,
                  hnsw_cpu_qps, recall, speedup, hnsw_qps / exact_qps);
    }
  }
  std::printf("best_speedup_at_recall_095=%.1f\n", best_speedup);
  return 0;
}

// ---- text and writes -----------------------------------------------------------------------------

// A vocabulary of made-up words whose frequencies follow Zipf's law, like natural text.
class Words {
 public:
  explicit Words(size_t size) {
    std::mt19937 rng(7);
    const char* syllables[] = {"ka", "lo", "mi", "ren", "sa", "tu", "vor", "el", "qui", "da", "bex", "no", "pra", "zu"};
    std::uniform_int_distribution<int> syllable(0, 13), length(2, 4);
    for (size_t i = 0; i < size; ++i) {
      std::string word;
      for (int n = length(rng); n > 0; --n) word += syllables[syllable(rng)];
      words_.push_back(word + std::to_string(i % 97));
    }
    double total = 0;
    for (size_t i = 0; i < size; ++i) cumulative_.push_back(total += 1.0 / static_cast<double>(i + 1));
  }
  const std::string& Pick(std::mt19937& rng) const {
    std::uniform_real_distribution<double> u(0, cumulative_.back());
    return words_[std::lower_bound(cumulative_.begin(), cumulative_.end(), u(rng)) - cumulative_.begin()];
  }
  // A word drawn uniformly from the vocabulary past its `skip` most frequent ones: what a person
  // searches for (content words), where Pick draws by frequency (mostly the commonest words).
  const std::string& PickUniform(std::mt19937& rng, size_t skip) const {
    std::uniform_int_distribution<size_t> rank(skip, words_.size() - 1);
    return words_[rank(rng)];
  }
  std::string Sentence(std::mt19937& rng, size_t n) const {
    std::string out;
    for (size_t i = 0; i < n; ++i) out += (i ? " " : "") + Pick(rng);
    return out;
  }

 private:
  std::vector<std::string> words_;
  std::vector<double> cumulative_;
};

cairn::model::BreadcrumbDraft Draft(const Words& words, std::mt19937& rng, size_t context_bytes) {
  cairn::model::BreadcrumbDraft draft;
  draft.schema_name = "note.v1";
  draft.title = words.Sentence(rng, 6);
  draft.tags = {words.Pick(rng)};
  std::string body = words.Sentence(rng, 40);
  while (body.size() < context_bytes) body += " " + words.Sentence(rng, 20);
  body.resize(context_bytes);
  draft.context = boost::json::object{{"body", body}};
  return draft;
}

std::unique_ptr<cairn::store::sqlite::SqliteStore> OpenStore(const std::string& dir, const cairn::Clock& clock) {
  std::filesystem::create_directories(dir);
  cairn::store::sqlite::SqliteStoreOptions options;
  options.path = dir + "/cairn.db";
  auto opened = cairn::store::sqlite::SqliteStore::Open(options, clock, nullptr);
  if (!opened.ok()) {
    std::fprintf(stderr, "search_bench: %s\n", opened.status().ToString().c_str());
    std::exit(1);
  }
  return std::move(opened).value();
}

int Text(int argc, char** argv) {
  const std::string dir = Arg(argc, argv, "dir", "");
  const size_t records = SizeArg(argc, argv, "records", 1000000);
  const size_t queries = SizeArg(argc, argv, "queries", 2000);
  if (dir.empty()) return 2;
  cairn::SystemClock clock;
  auto store = OpenStore(dir, clock);
  Words words(50000);
  std::mt19937 rng(11);
  auto start = Clock::now();
  for (size_t done = 0; done < records;) {
    std::vector<cairn::store::WriteOp> ops;
    for (size_t i = 0; i < 1000 && done < records; ++i, ++done) {
      ops.push_back(cairn::store::WriteOp::Create(Draft(words, rng, 200)));
    }
    auto applied = store->Apply(cairn::model::WriteContext{}, ops);
    if (!applied.ok()) {
      std::fprintf(stderr, "search_bench: %s\n", applied.status().ToString().c_str());
      return 1;
    }
  }
  const double load_s = SecondsSince(start);
  // Content-word queries (1-3 words uniform over the vocabulary past its 100 commonest words),
  // then common-word queries (words drawn by frequency: every record holds the commonest, so all
  // of them are ranked).
  struct Run {
    std::vector<double> latencies_ms;
    size_t hits = 0;
  };
  auto measure = [&](size_t count, bool common) -> std::optional<Run> {
    Run run;
    for (size_t q = 0; q < count; ++q) {
      cairn::store::TextSearchQuery query;
      for (size_t w = 0; w <= q % 3; ++w) query.text += (w ? " " : "") + (common ? words.Pick(rng) : words.PickUniform(rng, 100));
      query.limit = 20;
      query.snippets = true;
      const auto t = Clock::now();
      auto found = store->SearchText("default", query);
      run.latencies_ms.push_back(SecondsSince(t) * 1000);
      if (!found.ok()) {
        std::fprintf(stderr, "search_bench: %s\n", found.status().ToString().c_str());
        return std::nullopt;
      }
      run.hits += found->size();
    }
    return run;
  };
  auto content = measure(queries, false);
  auto common = measure(std::max<size_t>(queries / 10, 10), true);
  if (!content || !common) return 1;
  std::printf("records=%zu\nload_seconds=%.1f\nload_records_per_s=%.0f\n", records, load_s,
              static_cast<double>(records) / load_s);
  std::printf("text_queries=%zu\nmean_hits=%.1f\ntext_p50_ms=%.2f\ntext_p99_ms=%.2f\ntext_max_ms=%.2f\n", queries,
              static_cast<double>(content->hits) / static_cast<double>(queries), Percentile(content->latencies_ms, 0.5),
              Percentile(content->latencies_ms, 0.99), Percentile(content->latencies_ms, 1.0));
  std::printf("common_queries=%zu\ncommon_p50_ms=%.2f\ncommon_p99_ms=%.2f\n", common->latencies_ms.size(),
              Percentile(common->latencies_ms, 0.5), Percentile(common->latencies_ms, 0.99));
  store->Close();
  return 0;
}

// Creates `records` records from `writers` threads, one per transaction; seconds taken.
double CreateAll(cairn::store::Store& store, size_t records, size_t writers) {
  Words words(5000);
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  auto start = Clock::now();
  std::vector<std::thread> threads;
  for (size_t w = 0; w < writers; ++w) {
    threads.emplace_back([&, w] {
      std::mt19937 rng(static_cast<uint32_t>(100 + w));
      while (next++ < records) {
        if (!store.Create(cairn::model::WriteContext{}, Draft(words, rng, 1024), "").ok()) failed = true;
      }
    });
  }
  for (auto& t : threads) t.join();
  if (failed) {
    std::fprintf(stderr, "search_bench: a create failed\n");
    std::exit(1);
  }
  return SecondsSince(start);
}

// One phase of the write benchmark on a fresh store in `dir`: creates per second, counted until
// every vector is stored when `embed`.
double WritePhase(const std::string& dir, size_t records, size_t writers, bool fts, bool embed) {
  cairn::SystemClock clock;
  auto store = OpenStore(dir, clock);
  if (!fts) {
    // No full-text index: its triggers are dropped (the store never recreates them).
    store->Close();
    sqlite3* db = nullptr;
    if (sqlite3_open((dir + "/cairn.db").c_str(), &db) != SQLITE_OK ||
        sqlite3_exec(db,
                     "DROP TRIGGER breadcrumbs_fts_insert; DROP TRIGGER breadcrumbs_fts_delete; "
                     "DROP TRIGGER breadcrumbs_fts_update;",
                     nullptr, nullptr, nullptr) != SQLITE_OK) {
      std::fprintf(stderr, "search_bench: cannot drop the full-text triggers: %s\n", sqlite3_errmsg(db));
      std::exit(1);
    }
    sqlite3_close(db);
    store = OpenStore(dir, clock);
  }
  if (const char* sql = std::getenv("SEARCH_BENCH_SQL"); sql != nullptr && *sql != '\0') {  // an experiment's setting
    store->Close();
    sqlite3* db = nullptr;
    if (sqlite3_open((dir + "/cairn.db").c_str(), &db) != SQLITE_OK || sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK) {
      std::fprintf(stderr, "search_bench: SEARCH_BENCH_SQL failed: %s\n", sqlite3_errmsg(db));
      std::exit(1);
    }
    sqlite3_close(db);
    store = OpenStore(dir, clock);
  }
  auto bus = cairn::bus::LocalEventBus::Start(*store, 1000, nullptr);
  if (!bus.ok()) std::exit(1);
  cairn::search::HashingEmbedder embedder;
  std::unique_ptr<cairn::search::EmbeddingWorker> worker;
  if (embed) {
    worker = std::make_unique<cairn::search::EmbeddingWorker>(*store, *store, *store, **bus, embedder,
                                                               cairn::search::EmbeddingWorkerOptions{}, nullptr);
    worker->Start();
  }
  auto start = Clock::now();
  CreateAll(*store, records, writers);
  if (worker) {
    const int64_t last = store->Stats().value().last_event_seq;
    if (!worker->WaitCaughtUp(last, std::chrono::minutes(10))) {
      std::fprintf(stderr, "search_bench: the embedding worker did not catch up\n");
      std::exit(1);
    }
  }
  const double seconds = SecondsSince(start);
  if (worker) {
    const int64_t vectors = store->CountVectors(embedder.model()).value();
    if (vectors != static_cast<int64_t>(records)) {
      std::fprintf(stderr, "search_bench: %lld vectors for %zu records\n", static_cast<long long>(vectors), records);
      std::exit(1);
    }
    worker->Stop();
  }
  (*bus)->Stop();
  store->Close();
  return static_cast<double>(records) / seconds;
}

int Writes(int argc, char** argv) {
  const std::string dir = Arg(argc, argv, "dir", "");
  const size_t records = SizeArg(argc, argv, "records", 20000);
  const size_t writers = SizeArg(argc, argv, "writers", 4);
  if (dir.empty()) return 2;
  if (const std::string only = Arg(argc, argv, "only", ""); !only.empty()) {
    if (only != "baseline" && only != "both" && only != "fts" && only != "embed") return 2;
    const bool fts = only == "both" || only == "fts";
    const bool embed = only == "both" || only == "embed";
    std::printf("%s_per_s=%.0f\n", only.c_str(), WritePhase(dir + "/" + only, records, writers, fts, embed));
    return 0;
  }
  const double baseline = WritePhase(dir + "/baseline", records, writers, false, false);
  const double both = WritePhase(dir + "/both", records, writers, true, true);
  const double fts_only = WritePhase(dir + "/fts", records, writers, true, false);
  const double embed_only = WritePhase(dir + "/embed", records, writers, false, true);
  std::printf("write_records=%zu\nwriters=%zu\nbaseline_creates_per_s=%.0f\nfts_embed_searchable_per_s=%.0f\n"
              "fts_only_per_s=%.0f\nembed_only_per_s=%.0f\nsearchable_ratio=%.2f\nfts_only_ratio=%.2f\n"
              "embed_only_ratio=%.2f\n",
              records, writers, baseline, both, fts_only, embed_only, both / baseline, fts_only / baseline,
              embed_only / baseline);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "vectors") return Vectors(argc, argv);
  if (mode == "text") return Text(argc, argv);
  if (mode == "writes") return Writes(argc, argv);
  std::fprintf(stderr, "usage: search_bench vectors|text|writes [--options] (see the file's header)\n");
  return 2;
}
