// raw_sqlite_baseline: the floor that `POST /breadcrumbs` is measured against.
//
// Writes exactly the rows one cairn create writes (one `breadcrumbs` row, one `breadcrumb_tags` row
// per tag, one `events` row carrying the context) straight through the SQLite C API, with the
// server's schema (cairn's own migrations) and the server's connection pragmas (cairn's own
// Connection::Open: WAL, synchronous=FULL by default, temp_store=MEMORY, busy timeout). There is no
// HTTP, no JSON parsing, no checksum: only SQLite and the fsync of each commit.
//
// Default mode: one thread, one transaction per create (BEGIN IMMEDIATE ... COMMIT), which is what
// an application without group commit pays per durable write. Options add a multi-threaded variant
// (each thread its own connection, contending for SQLite's write lock) and a batched variant
// (--batch N creates per transaction: the ceiling group commit can approach).
//
// Output: `key=value` lines on stdout (machine-readable; bench/run.sh parses them).
#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/log.h"
#include "base/uuid.h"
#include "store/sqlite/connection.h"
#include "store/sqlite/migrations.h"

namespace {

using Clock = std::chrono::steady_clock;
using cairn::store::sqlite::Connection;

struct Options {
  std::string db;              // database file; empty: a fresh temporary directory
  int64_t rows = 1'000'000;    // upper bound on creates (all threads together)
  double seconds = 10.0;       // upper bound on wall time
  int threads = 1;
  int batch = 1;               // creates per transaction
  int context_bytes = 1024;
  int tags = 2;
  std::string synchronous = "full";
  bool keep = false;           // keep the temporary database
  bool full_text = false;      // index the batch's text before COMMIT, as the server's writer does
};

[[noreturn]] void Usage(const char* message) {
  if (message) std::fprintf(stderr, "raw_sqlite_baseline: %s\n", message);
  std::fprintf(stderr,
               "usage: raw_sqlite_baseline [--db FILE] [--rows N] [--seconds S] [--threads T] [--batch B]\n"
               "                           [--context-bytes N] [--tags N] [--sync full|normal] [--full-text]\n"
               "                           [--keep]\n"
               "Inserts cairn create rows (breadcrumb + tags + event) with cairn's schema and pragmas and\n"
               "prints key=value results. Stops after N rows or S seconds, whichever comes first.\n");
  std::exit(2);
}

Options ParseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Usage(("option " + arg + " needs a value").c_str());
      return argv[++i];
    };
    if (arg == "--db") o.db = value();
    else if (arg == "--rows") o.rows = std::stoll(value());
    else if (arg == "--seconds") o.seconds = std::stod(value());
    else if (arg == "--threads") o.threads = std::stoi(value());
    else if (arg == "--batch") o.batch = std::stoi(value());
    else if (arg == "--context-bytes") o.context_bytes = std::stoi(value());
    else if (arg == "--tags") o.tags = std::stoi(value());
    else if (arg == "--sync") o.synchronous = value();
    else if (arg == "--keep") o.keep = true;
    else if (arg == "--full-text") o.full_text = true;
    else if (arg == "--help" || arg == "-h") Usage(nullptr);
    else Usage(("unknown option " + arg).c_str());
  }
  if (o.rows < 1 || o.seconds <= 0 || o.threads < 1 || o.threads > 256 || o.batch < 1 || o.context_bytes < 128 ||
      o.tags < 0 || o.tags > 64 || (o.synchronous != "full" && o.synchronous != "normal")) {
    Usage("option out of range");
  }
  return o;
}

void Check(sqlite3* db, int rc, const char* what) {
  if (rc == SQLITE_OK || rc == SQLITE_DONE || rc == SQLITE_ROW) return;
  std::fprintf(stderr, "raw_sqlite_baseline: %s: %s (%d)\n", what, sqlite3_errmsg(db), rc);
  std::exit(1);
}

// The context a bench create carries: the same shape bench/wrk/post_breadcrumbs.lua sends,
// padded to exactly `bytes` bytes of compact JSON.
std::string MakeContext(int64_t seq, int bytes) {
  std::string head = "{\"seq\":" + std::to_string(seq) +
                     ",\"kind\":\"observation\",\"source\":\"bench\",\"attrs\":{\"a\":1,\"b\":\"two\",\"c\":[1,2,3]},"
                     "\"text\":\"";
  std::string tail = "\"}";
  std::string out = head;
  int pad = bytes - static_cast<int>(head.size() + tail.size());
  static const char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz ";
  for (int i = 0; i < std::max(pad, 0); ++i) out += kAlphabet[(seq + i * 7) % 27];
  out += tail;
  return out;
}

std::string FakeChecksum(int64_t seq) {
  // The server computes sha256 of the canonical context; that is CPU work outside SQLite, so the
  // baseline stores a value of the same length without computing it.
  char buf[80];
  uint64_t x = static_cast<uint64_t>(seq) * 0x9E3779B97F4A7C15ULL;
  std::snprintf(buf, sizeof buf, "sha256:%016" PRIx64 "%016" PRIx64 "%016" PRIx64 "%016" PRIx64, x, ~x, x ^ 0xABCDEF,
                x + 12345);
  return buf;
}

struct Stmt {
  sqlite3_stmt* s = nullptr;
  Stmt(sqlite3* db, const char* sql) { Check(db, sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, nullptr), sql); }
  ~Stmt() { sqlite3_finalize(s); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
};

void BindText(sqlite3_stmt* s, int i, const std::string& v) {
  sqlite3_bind_text(s, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
}

struct Worker {
  int64_t done = 0;
  std::vector<double> txn_us;  // latency of each transaction (BEGIN..COMMIT), microseconds
};

std::unique_ptr<Connection> OpenConnection(const Options& o) {
  auto conn = Connection::Open(o.db, o.synchronous);
  if (!conn.ok()) {
    std::fprintf(stderr, "raw_sqlite_baseline: open %s: %s\n", o.db.c_str(), conn.status().message().c_str());
    std::exit(1);
  }
  return std::move(conn).value();
}

void RunWorker(const Options& o, int thread_index, std::atomic<int64_t>& next_seq, Clock::time_point deadline,
               cairn::UuidV7Generator& ids, Worker& w) {
  auto conn = OpenConnection(o);
  sqlite3* db = conn->raw();
  Stmt begin(db, "BEGIN IMMEDIATE");
  Stmt commit(db, "COMMIT");
  Stmt crumb(db,
             "INSERT INTO breadcrumbs(id, owner_id, schema_name, title, description, tags, context, path, llm_hints, "
             "version, checksum, visibility, sensitivity, expires_at, created_by, updated_by, trace_id, caused_by, depth, "
             "created_at, updated_at, size_bytes) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,"
             "?19,?20,?21,?22)");
  Stmt tag(db, "INSERT OR IGNORE INTO breadcrumb_tags(tag, rid) VALUES (?1, ?2)");
  Stmt event(db,
             "INSERT INTO events(type, breadcrumb_id, version, schema_name, title, tags, path, owner_id, created_by, "
             "trace_id, caused_by, depth, at, context) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14)");
  const std::string owner = "default", actor = "anonymous", schema = "bench.item.v1";
  w.txn_us.reserve(1 << 16);

  while (Clock::now() < deadline) {
    int64_t first = next_seq.fetch_add(o.batch);
    if (first >= o.rows) break;
    int64_t last = std::min<int64_t>(first + o.batch, o.rows);
    auto started = Clock::now();
    Check(db, sqlite3_step(begin.s), "BEGIN IMMEDIATE");
    sqlite3_reset(begin.s);
    for (int64_t seq = first; seq < last; ++seq) {
      std::string id = ids.Next();
      std::string title = "bench crumb " + std::to_string(thread_index) + "-" + std::to_string(seq);
      std::vector<std::string> tag_values;
      if (o.tags > 0) tag_values.push_back("bench");
      for (int t = 1; t < o.tags; ++t) tag_values.push_back("group:" + std::to_string((seq + t) % 100));
      std::string tags_json = "[";
      for (size_t t = 0; t < tag_values.size(); ++t) tags_json += (t ? ",\"" : "\"") + tag_values[t] + "\"";
      tags_json += "]";
      std::string context = MakeContext(seq, o.context_bytes);
      std::string checksum = FakeChecksum(seq);
      int64_t now = cairn::SystemClock::Instance().NowMicros();

      sqlite3_stmt* s = crumb.s;
      BindText(s, 1, id);
      BindText(s, 2, owner);
      BindText(s, 3, schema);
      BindText(s, 4, title);
      sqlite3_bind_null(s, 5);
      BindText(s, 6, tags_json);
      BindText(s, 7, context);
      sqlite3_bind_null(s, 8);
      sqlite3_bind_null(s, 9);
      sqlite3_bind_int64(s, 10, 1);
      BindText(s, 11, checksum);
      BindText(s, 12, "team");
      BindText(s, 13, "low");
      sqlite3_bind_null(s, 14);
      BindText(s, 15, actor);
      BindText(s, 16, actor);
      BindText(s, 17, id);
      sqlite3_bind_null(s, 18);
      sqlite3_bind_int64(s, 19, 0);
      sqlite3_bind_int64(s, 20, now);
      sqlite3_bind_int64(s, 21, now);
      sqlite3_bind_int64(s, 22, static_cast<int64_t>(context.size()));
      Check(db, sqlite3_step(s), "insert breadcrumb");
      sqlite3_reset(s);
      int64_t rid = sqlite3_last_insert_rowid(db);

      for (const auto& value : tag_values) {
        BindText(tag.s, 1, value);
        sqlite3_bind_int64(tag.s, 2, rid);
        Check(db, sqlite3_step(tag.s), "insert tag");
        sqlite3_reset(tag.s);
      }

      s = event.s;
      BindText(s, 1, "breadcrumb.created");
      BindText(s, 2, id);
      sqlite3_bind_int64(s, 3, 1);
      BindText(s, 4, schema);
      BindText(s, 5, title);
      BindText(s, 6, tags_json);
      sqlite3_bind_null(s, 7);
      BindText(s, 8, owner);
      BindText(s, 9, actor);
      BindText(s, 10, id);
      sqlite3_bind_null(s, 11);
      sqlite3_bind_int64(s, 12, 0);
      sqlite3_bind_int64(s, 13, now);
      BindText(s, 14, context);
      Check(db, sqlite3_step(s), "insert event");
      sqlite3_reset(s);
    }
    if (o.full_text) {
      for (const auto& statement : cairn::store::sqlite::FullTextPendingStatements()) {
        Check(db, sqlite3_exec(db, statement.c_str(), nullptr, nullptr, nullptr), "full-text index");
      }
    }
    Check(db, sqlite3_step(commit.s), "COMMIT");
    sqlite3_reset(commit.s);
    w.txn_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - started).count());
    w.done += last - first;
  }
}

double Percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  size_t k = static_cast<size_t>(p / 100.0 * static_cast<double>(v.size() - 1) + 0.5);
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

}  // namespace

int main(int argc, char** argv) {
  Options o = ParseArgs(argc, argv);
  cairn::InitLogging("warn");  // stdout carries only the key=value results
  std::filesystem::path temp_dir;
  if (o.db.empty()) {
    std::string pattern = (std::filesystem::temp_directory_path() / "cairn-rawsqlite.XXXXXX").string();
    if (!mkdtemp(pattern.data())) {
      std::perror("mkdtemp");
      return 1;
    }
    temp_dir = pattern;
    o.db = (temp_dir / "cairn.db").string();
  }

  {
    auto conn = OpenConnection(o);
    auto migrated = cairn::store::sqlite::RunMigrations(*conn);
    if (!migrated.ok()) {
      std::fprintf(stderr, "raw_sqlite_baseline: migrations: %s\n", migrated.message().c_str());
      return 1;
    }
  }

  cairn::UuidV7Generator ids(cairn::SystemClock::Instance());
  std::atomic<int64_t> next_seq{0};
  std::vector<Worker> workers(static_cast<size_t>(o.threads));
  auto started = Clock::now();
  auto deadline = started + std::chrono::microseconds(static_cast<int64_t>(o.seconds * 1e6));
  std::vector<std::thread> threads;
  for (int t = 0; t < o.threads; ++t) {
    threads.emplace_back([&, t] { RunWorker(o, t, next_seq, deadline, ids, workers[static_cast<size_t>(t)]); });
  }
  for (auto& t : threads) t.join();
  double elapsed = std::chrono::duration<double>(Clock::now() - started).count();

  int64_t rows = 0;
  std::vector<double> latencies;
  for (auto& w : workers) {
    rows += w.done;
    latencies.insert(latencies.end(), w.txn_us.begin(), w.txn_us.end());
  }
  size_t transactions = latencies.size();
  double p50 = Percentile(latencies, 50), p90 = Percentile(latencies, 90), p99 = Percentile(latencies, 99);
  double max = latencies.empty() ? 0 : *std::max_element(latencies.begin(), latencies.end());

  std::printf("baseline=raw_sqlite\n");
  std::printf("sqlite_version=%s\n", sqlite3_libversion());
  std::printf("synchronous=%s\n", o.synchronous.c_str());
  std::printf("threads=%d\n", o.threads);
  std::printf("batch=%d\n", o.batch);
  std::printf("context_bytes=%d\n", o.context_bytes);
  std::printf("tags_per_row=%d\n", o.tags);
  std::printf("full_text=%d\n", o.full_text ? 1 : 0);
  std::printf("rows=%" PRId64 "\n", rows);
  std::printf("transactions=%zu\n", transactions);
  std::printf("seconds=%.3f\n", elapsed);
  std::printf("inserts_per_sec=%.1f\n", elapsed > 0 ? static_cast<double>(rows) / elapsed : 0.0);
  std::printf("txn_p50_us=%.1f\n", p50);
  std::printf("txn_p90_us=%.1f\n", p90);
  std::printf("txn_p99_us=%.1f\n", p99);
  std::printf("txn_max_us=%.1f\n", max);
  std::fflush(stdout);

  if (!temp_dir.empty() && !o.keep) {
    std::error_code ec;
    std::filesystem::remove_all(temp_dir, ec);
  }
  return rows > 0 ? 0 : 1;
}
