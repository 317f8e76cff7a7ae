// The Store contract (store/store.h), run against SqliteStore, against SqliteStore behind the
// CachedStore decorator, each in a fresh temporary directory, and against PgStore, each test in a
// fresh database of the test process's own PostgreSQL server (support/postgres_server.h).
#include "store/store.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <latch>
#include <limits>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/json_util.h"
#include "base/uuid.h"
#include "model/query.h"
#include "store/cached_store.h"
#include "store/postgres/pg_store.h"
#include "store/sqlite/sqlite_store.h"
#include "support/pg_database.h"
#include "support/sqlite_store.h"

namespace cairn::store {
namespace {

namespace json = boost::json;
using model::BreadcrumbDraft;
using model::BreadcrumbPatch;
using model::BreadcrumbQuery;

constexpr int64_t kStart = 1'795'225'252'000'000;  // 2026-11-21T01:40:52Z
constexpr int64_t kSecond = 1'000'000;

json::value J(std::string_view text) { return json::parse(text); }

BreadcrumbDraft Draft(std::string title, std::string_view context = "{}", std::vector<std::string> tags = {},
                      std::optional<std::string> path = std::nullopt) {
  BreadcrumbDraft d;
  d.title = std::move(title);
  d.context = J(context);
  d.tags = std::move(tags);
  d.path = std::move(path);
  return d;
}

enum class Backend { kSqlite, kCached, kPostgres };

class StoreContractTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::kPostgres) {
      auto db = test_support::OpenFreshPgDatabase(&metrics_, &pg_uri_);
      ASSERT_TRUE(db.ok()) << db.status().ToString();
      pg_db_ = *db;
    }
    Open();
  }
  void TearDown() override {
    if (store_) store_->Close();
    store_.reset();
  }
  void Open() {
    if (GetParam() == Backend::kPostgres) {
      if (!pg_db_) {  // reopened
        auto db = test_support::OpenPgDatabase(pg_uri_, &metrics_);
        ASSERT_TRUE(db.ok()) << db.status().ToString();
        pg_db_ = *db;
      }
      store_ = std::make_unique<postgres::PgStore>(std::move(pg_db_), postgres::PgStoreOptions{3600 * kSecond}, clock_);
      return;
    }
    auto opened = test_support::OpenSqliteStore(dir_.path(), clock_, &metrics_, [](sqlite::SqliteStoreOptions& options) {
      options.idempotency_retention_micros = 3600 * kSecond;
    });
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(opened).value();
    if (GetParam() == Backend::kCached) store_ = std::make_unique<CachedStore>(std::move(store_), 1000, clock_, &metrics_);
  }
  void Reopen() {
    store_->Close();
    store_.reset();
    Open();
  }

  model::Breadcrumb Create(const BreadcrumbDraft& draft, const std::string& owner = "default") {
    model::WriteContext ctx{owner, "alice"};
    auto created = store_->Create(ctx, draft, "");
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return created.ok() ? created->breadcrumb : model::Breadcrumb{};
  }
  int64_t LastSeq() { return store_->Stats().value().last_event_seq; }
  int64_t Records() { return store_->Stats().value().records; }

  std::vector<std::string> ListTitles(BreadcrumbQuery query, const std::string& owner = "default") {
    query.limit = 1000;
    auto page = store_->List(owner, query);
    EXPECT_TRUE(page.ok()) << page.status().ToString();
    std::vector<std::string> titles;
    if (page.ok()) {
      for (const auto& crumb : page->items) titles.push_back(crumb.title);
    }
    return titles;
  }
  std::set<std::string> Matching(std::string_view rules) {
    BreadcrumbQuery query;
    auto parsed = model::ParseContextRules(J(rules), model::Limits{});
    EXPECT_TRUE(parsed.ok()) << rules;
    if (parsed.ok()) query.context_match = std::move(parsed).value();
    auto titles = ListTitles(query);
    return {titles.begin(), titles.end()};
  }

  test_support::TempDir dir_{"cairn-store-test"};
  std::string pg_uri_;
  std::shared_ptr<postgres::PgDatabase> pg_db_;  // until the store takes it
  ManualClock clock_{kStart};
  MetricsRegistry metrics_;
  model::WriteContext ctx_;  // owner "default", actor "anonymous"
  std::unique_ptr<Store> store_;
};

TEST_P(StoreContractTest, CreateThenGet) {
  BreadcrumbDraft d = Draft("first", R"({"b":[1,2],"a":"x"})", {"t1", "t2"}, "users/u1");
  d.schema_name = "note.v1";
  d.description = "desc";
  d.llm_hints = J(R"({"include":["a"]})");
  d.visibility = "private";
  d.sensitivity = "pii";
  d.ttl_micros = kStart + 60 * kSecond;
  model::Breadcrumb c = Create(d);
  EXPECT_TRUE(IsUuidString(c.id));
  EXPECT_EQ(c.version, 1);
  EXPECT_EQ(c.checksum, Sha256Checksum(CanonicalJson(d.context)));
  EXPECT_EQ(c.size_bytes, static_cast<int64_t>(json::serialize(d.context).size()));
  EXPECT_EQ(c.created_at, kStart);
  EXPECT_EQ(c.updated_at, kStart);
  EXPECT_EQ(c.created_by, "alice");
  EXPECT_EQ(c.updated_by, "alice");
  EXPECT_EQ(c.owner_id, "default");
  EXPECT_EQ(c.trace.trace_id, c.id);  // a root write starts its own trace
  EXPECT_EQ(c.trace.caused_by, "");
  EXPECT_EQ(c.trace.depth, 0);

  auto got = store_->Get("default", c.id);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->id, c.id);
  EXPECT_EQ(got->title, "first");
  EXPECT_EQ(got->schema_name, "note.v1");
  EXPECT_EQ(got->description, "desc");
  EXPECT_EQ(got->tags, (std::vector<std::string>{"t1", "t2"}));
  EXPECT_EQ(got->context, d.context);
  EXPECT_EQ(got->path, "users/u1");
  EXPECT_EQ(got->llm_hints, d.llm_hints);
  EXPECT_EQ(got->visibility, "private");
  EXPECT_EQ(got->sensitivity, "pii");
  EXPECT_EQ(got->ttl_micros, kStart + 60 * kSecond);
  EXPECT_EQ(got->checksum, c.checksum);
  EXPECT_EQ(got->trace.trace_id, c.id);
  EXPECT_EQ(got->created_at, kStart);
  EXPECT_EQ(got->size_bytes, c.size_bytes);
  EXPECT_EQ(Records(), 1);
}

TEST_P(StoreContractTest, CreateKeepsGivenTrace) {
  BreadcrumbDraft d = Draft("child");
  d.trace = model::Trace{"trace-1", "parent-id", 4};
  model::Breadcrumb c = Create(d);
  auto got = store_->Get("default", c.id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->trace.trace_id, "trace-1");
  EXPECT_EQ(got->trace.caused_by, "parent-id");
  EXPECT_EQ(got->trace.depth, 4);
}

TEST_P(StoreContractTest, GetUnknownIsNotFound) {
  auto got = store_->Get("default", "0190b3c4-5d6e-7f80-9a1b-2c3d4e5f6a7b");
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kNotFound);
}

TEST_P(StoreContractTest, UpdateIncrementsVersionAndKeepsHistory) {
  model::Breadcrumb c = Create(Draft("v1", R"({"n":1})", {"a"}));
  for (int n = 2; n <= 3; ++n) {
    clock_.Advance(kSecond);
    BreadcrumbPatch p;
    p.context.Set(J(R"({"n":)" + std::to_string(n) + "}"));
    p.title.Set("v" + std::to_string(n));
    auto updated = store_->Update({"default", "bob"}, c.id, p, std::nullopt);
    ASSERT_TRUE(updated.ok()) << updated.status().ToString();
    EXPECT_EQ(updated->version, n);
    EXPECT_EQ(updated->updated_by, "bob");
    EXPECT_EQ(updated->created_by, "alice");
    EXPECT_EQ(updated->updated_at, clock_.NowMicros());
    EXPECT_EQ(updated->created_at, kStart);
    EXPECT_EQ(updated->checksum, Sha256Checksum(CanonicalJson(p.context.value)));
    EXPECT_EQ(updated->tags, (std::vector<std::string>{"a"}));  // untouched
  }
  auto history = store_->History("default", c.id);
  ASSERT_TRUE(history.ok()) << history.status().ToString();
  ASSERT_EQ(history->size(), 3u);
  for (int i = 0; i < 3; ++i) {
    const auto& v = (*history)[i];
    EXPECT_EQ(v.version, i + 1);
    EXPECT_EQ(v.title, "v" + std::to_string(i + 1));
    EXPECT_EQ(v.context, J(R"({"n":)" + std::to_string(i + 1) + "}"));
    EXPECT_EQ(v.checksum, Sha256Checksum(CanonicalJson(v.context)));
    EXPECT_EQ(v.updated_by, i == 0 ? "alice" : "bob");
    EXPECT_EQ(v.updated_at, kStart + i * kSecond);
    EXPECT_EQ(v.tags, (std::vector<std::string>{"a"}));
  }
  EXPECT_EQ(store_->Get("default", c.id)->version, 3);
}

TEST_P(StoreContractTest, PatchSetsOnlyNamedFieldsAndNullClears) {
  BreadcrumbDraft d = Draft("t", R"({"k":1})", {"old", "keep"}, "p/q");
  d.schema_name = "s.v1";
  d.description = "desc";
  d.llm_hints = J(R"({"exclude":["k"]})");
  d.ttl_micros = kStart + 100 * kSecond;
  model::Breadcrumb c = Create(d);

  BreadcrumbPatch p;
  p.schema_name.Set(std::nullopt);
  p.description.Set(std::nullopt);
  p.path.Set(std::nullopt);
  p.llm_hints.Set(json::value(nullptr));
  p.ttl_micros.Set(std::nullopt);
  p.tags.Set({"keep", "new"});
  p.visibility.Set("public");
  auto updated = store_->Update(ctx_, c.id, p, std::nullopt);
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  auto got = store_->Get("default", c.id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->title, "t");
  EXPECT_EQ(got->context, J(R"({"k":1})"));
  EXPECT_FALSE(got->schema_name);
  EXPECT_FALSE(got->description);
  EXPECT_FALSE(got->path);
  EXPECT_TRUE(got->llm_hints.is_null());
  EXPECT_FALSE(got->ttl_micros);
  EXPECT_EQ(got->visibility, "public");
  EXPECT_EQ(got->sensitivity, "low");
  EXPECT_EQ(got->tags, (std::vector<std::string>{"keep", "new"}));

  // The tag index follows the new tags.
  BreadcrumbQuery by_tag;
  by_tag.all_tags = {"old"};
  EXPECT_TRUE(ListTitles(by_tag).empty());
  by_tag.all_tags = {"new"};
  EXPECT_EQ(ListTitles(by_tag), std::vector<std::string>{"t"});
  by_tag.all_tags = {"keep"};
  EXPECT_EQ(ListTitles(by_tag), std::vector<std::string>{"t"});
  // The cleared path is free again.
  Create(Draft("other", "{}", {}, "p/q"));
}

TEST_P(StoreContractTest, IfMatchMismatchChangesNothing) {
  model::Breadcrumb c = Create(Draft("orig"));
  int64_t seq = LastSeq();
  BreadcrumbPatch p;
  p.title.Set("changed");
  for (int64_t wrong : {0, 2, 7}) {
    auto updated = store_->Update(ctx_, c.id, p, wrong);
    ASSERT_FALSE(updated.ok());
    EXPECT_EQ(updated.status().code(), StatusCode::kFailedPrecondition);
  }
  Status deleted = store_->Delete(ctx_, c.id, 3);
  EXPECT_EQ(deleted.code(), StatusCode::kFailedPrecondition);
  auto got = store_->Get("default", c.id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->title, "orig");
  EXPECT_EQ(got->version, 1);
  EXPECT_EQ(store_->History("default", c.id)->size(), 1u);
  EXPECT_EQ(LastSeq(), seq);

  auto ok = store_->Update(ctx_, c.id, p, 1);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->version, 2);
  EXPECT_TRUE(store_->Delete(ctx_, c.id, 2).ok());
}

TEST_P(StoreContractTest, ConcurrentIfMatchRaceHasExactlyOneWinner) {
  model::Breadcrumb c = Create(Draft("race"));
  constexpr int kThreads = 16;
  std::latch start(kThreads);
  std::vector<Status> results(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      BreadcrumbPatch p;
      p.title.Set("winner-" + std::to_string(t));
      start.arrive_and_wait();
      results[t] = store_->Update(ctx_, c.id, p, 1).status();
    });
  }
  for (auto& thread : threads) thread.join();
  int winners = 0;
  int winner = -1;
  for (int t = 0; t < kThreads; ++t) {
    if (results[t].ok()) {
      ++winners;
      winner = t;
    } else {
      EXPECT_EQ(results[t].code(), StatusCode::kFailedPrecondition) << results[t].ToString();
    }
  }
  ASSERT_EQ(winners, 1);
  auto got = store_->Get("default", c.id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->version, 2);
  EXPECT_EQ(got->title, "winner-" + std::to_string(winner));
  EXPECT_EQ(store_->History("default", c.id)->size(), 2u);
  EXPECT_EQ(LastSeq(), 2);
}

// History reads the record and its archived versions; both must come from one snapshot, or a
// concurrent update shows up as a repeated version (or a delete as a lone current version).
TEST_P(StoreContractTest, HistoryIsOneSnapshotWhileUpdating) {
  model::Breadcrumb c = Create(Draft("h"));
  std::atomic<bool> done{false};
  std::thread writer([&] {
    BreadcrumbPatch p;
    p.title.Set("next");
    for (int i = 0; i < 400; ++i) (void)store_->Update(ctx_, c.id, p, std::nullopt);
    done = true;
  });
  int inconsistent = 0;
  std::string example;
  while (!done) {
    auto history = store_->History("default", c.id);
    ASSERT_TRUE(history.ok()) << history.status().ToString();
    for (size_t i = 0; i < history->size(); ++i) {
      if ((*history)[i].version != static_cast<int64_t>(i + 1)) {
        if (inconsistent++ == 0) {
          for (const auto& v : *history) example += std::to_string(v.version) + " ";
        }
        break;
      }
    }
  }
  writer.join();
  EXPECT_EQ(inconsistent, 0) << "versions not 1..N, e.g. [ " << example << "]";
  EXPECT_EQ(store_->History("default", c.id)->size(), 401u);
}

TEST_P(StoreContractTest, ConcurrentCreatesAllSucceedWithDistinctIds) {
  constexpr int kThreads = 8;
  constexpr int kPerThread = 40;
  std::latch start(kThreads);
  std::vector<std::vector<std::string>> ids(kThreads);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      for (int i = 0; i < kPerThread; ++i) {
        auto created = store_->Create(ctx_, Draft("c" + std::to_string(t) + "-" + std::to_string(i)), "");
        if (!created.ok()) {
          ++failures;
          continue;
        }
        ids[t].push_back(created->breadcrumb.id);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  std::set<std::string> all;
  for (const auto& list : ids) all.insert(list.begin(), list.end());
  EXPECT_EQ(all.size(), static_cast<size_t>(kThreads * kPerThread));
  EXPECT_EQ(Records(), kThreads * kPerThread);
  EXPECT_EQ(LastSeq(), kThreads * kPerThread);
  EXPECT_EQ(ListTitles({}).size(), static_cast<size_t>(kThreads * kPerThread));
}

TEST_P(StoreContractTest, IdempotencyKeyReplays) {
  BreadcrumbDraft d = Draft("once", R"({"x":1})", {"t"});
  auto first = store_->Create(ctx_, d, "key-1");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_FALSE(first->replayed);
  auto again = store_->Create(ctx_, d, "key-1");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(again->replayed);
  EXPECT_EQ(again->breadcrumb.id, first->breadcrumb.id);
  EXPECT_EQ(again->breadcrumb.version, 1);
  EXPECT_EQ(Records(), 1);
  EXPECT_EQ(LastSeq(), 1);

  BreadcrumbDraft other = d;
  other.context = J(R"({"x":2})");
  auto conflict = store_->Create(ctx_, other, "key-1");
  ASSERT_FALSE(conflict.ok());
  EXPECT_EQ(conflict.status().code(), StatusCode::kConflict);
  EXPECT_EQ(Records(), 1);
  EXPECT_EQ(LastSeq(), 1);

  // Keys are per owner, and no key means no deduplication.
  auto elsewhere = store_->Create({"other-owner", "x"}, d, "key-1");
  ASSERT_TRUE(elsewhere.ok());
  EXPECT_FALSE(elsewhere->replayed);
  EXPECT_NE(elsewhere->breadcrumb.id, first->breadcrumb.id);
  EXPECT_TRUE(store_->Create(ctx_, d, "").ok());
  EXPECT_TRUE(store_->Create(ctx_, d, "").ok());
  EXPECT_EQ(Records(), 4);
}

// CreateAsync answers what Create() would have, once per call, after the write committed.
TEST_P(StoreContractTest, CreateAsyncAnswersAsCreateWouldAfterTheCommit) {
  auto create = [this](BreadcrumbDraft draft, std::string key) {
    auto answered = std::make_shared<std::promise<Result<CreateResult>>>();
    auto calls = std::make_shared<std::atomic<int>>(0);
    store_->CreateAsync(ctx_, std::move(draft), std::move(key), [answered, calls](Result<CreateResult> result) {
      if (calls->fetch_add(1) == 0) answered->set_value(std::move(result));
    });
    Result<CreateResult> result = answered->get_future().get();
    EXPECT_EQ(calls->load(), 1);
    return result;
  };
  BreadcrumbDraft d = Draft("async", R"({"x":1})", {"t"}, "notes/async");
  d.schema_name = "note.v1";
  auto first = create(d, "key-a");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_FALSE(first->replayed);
  EXPECT_EQ(first->breadcrumb.version, 1);
  // Committed when answered: readable, counted, its event in the log.
  auto got = store_->Get("default", first->breadcrumb.id);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->title, "async");
  EXPECT_EQ(got->context, d.context);
  EXPECT_EQ(Records(), 1);
  EXPECT_EQ(LastSeq(), 1);

  auto replay = create(d, "key-a");
  ASSERT_TRUE(replay.ok()) << replay.status().ToString();
  EXPECT_TRUE(replay->replayed);
  EXPECT_EQ(replay->breadcrumb.id, first->breadcrumb.id);

  // Refusals come through `done` too, and write nothing.
  BreadcrumbDraft other = Draft("other", R"({"x":2})");
  auto conflict = create(other, "key-a");
  ASSERT_FALSE(conflict.ok());
  EXPECT_EQ(conflict.status().code(), StatusCode::kConflict);
  BreadcrumbDraft taken = Draft("same path", "{}", {}, "notes/async");
  auto path_taken = create(taken, "");
  ASSERT_FALSE(path_taken.ok());
  EXPECT_EQ(path_taken.status().code(), StatusCode::kConflict);
  EXPECT_EQ(Records(), 1);
  EXPECT_EQ(LastSeq(), 1);

  // Many at once, as a server's connections queue them: each answered with its own record.
  constexpr int kCreates = 50;
  std::vector<std::future<Result<CreateResult>>> answers;
  std::vector<std::shared_ptr<std::promise<Result<CreateResult>>>> promises;
  for (int i = 0; i < kCreates; ++i) {
    promises.push_back(std::make_shared<std::promise<Result<CreateResult>>>());
    answers.push_back(promises.back()->get_future());
    store_->CreateAsync(ctx_, Draft("n" + std::to_string(i)), "",
                        [answered = promises.back()](Result<CreateResult> result) { answered->set_value(std::move(result)); });
  }
  std::set<std::string> ids;
  for (int i = 0; i < kCreates; ++i) {
    auto result = answers[static_cast<size_t>(i)].get();
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_EQ(result->breadcrumb.title, "n" + std::to_string(i));
    ids.insert(result->breadcrumb.id);
  }
  EXPECT_EQ(ids.size(), static_cast<size_t>(kCreates));
  EXPECT_EQ(Records(), 1 + kCreates);
}

TEST_P(StoreContractTest, IdempotencyKeysExpireAfterRetention) {
  BreadcrumbDraft d = Draft("a");
  ASSERT_TRUE(store_->Create(ctx_, d, "k").ok());
  clock_.Advance(2 * 3600 * kSecond);  // retention is one hour in this fixture
  ASSERT_TRUE(store_->SweepExpired().ok());
  auto reused = store_->Create(ctx_, Draft("b"), "k");
  ASSERT_TRUE(reused.ok()) << reused.status().ToString();
  EXPECT_FALSE(reused->replayed);
  EXPECT_EQ(reused->breadcrumb.title, "b");
}

TEST_P(StoreContractTest, PathIsUniquePerOwner) {
  model::Breadcrumb holder = Create(Draft("holder", "{}", {}, "a/b"));
  int64_t seq = LastSeq();
  auto dup = store_->Create(ctx_, Draft("dup", "{}", {}, "a/b"), "");
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.status().code(), StatusCode::kConflict);
  EXPECT_EQ(LastSeq(), seq);
  EXPECT_EQ(Records(), 1);

  model::Breadcrumb mover = Create(Draft("mover", "{}", {}, "a/c"));
  BreadcrumbPatch p;
  p.path.Set("a/b");
  auto moved = store_->Update(ctx_, mover.id, p, std::nullopt);
  ASSERT_FALSE(moved.ok());
  EXPECT_EQ(moved.status().code(), StatusCode::kConflict);
  EXPECT_EQ(store_->Get("default", mover.id)->version, 1);
  EXPECT_EQ(store_->Get("default", mover.id)->path, "a/c");
  EXPECT_EQ(store_->History("default", mover.id)->size(), 1u);

  Create(Draft("same path, other owner", "{}", {}, "a/b"), "owner-2");

  ASSERT_TRUE(store_->Delete(ctx_, holder.id, std::nullopt).ok());
  auto reused = store_->Create(ctx_, Draft("reuser", "{}", {}, "a/b"), "");
  ASSERT_TRUE(reused.ok()) << reused.status().ToString();
}

TEST_P(StoreContractTest, PathOfExpiredHolderIsReusableBeforeSweep) {
  BreadcrumbDraft d = Draft("short-lived", "{}", {}, "tmp/x");
  d.ttl_micros = kStart + 10 * kSecond;
  Create(d);
  BreadcrumbDraft d2 = Draft("short-lived-2", "{}", {}, "tmp/y");
  d2.ttl_micros = kStart + 10 * kSecond;
  Create(d2);
  model::Breadcrumb mover = Create(Draft("mover"));
  EXPECT_EQ(store_->Create(ctx_, Draft("early", "{}", {}, "tmp/x"), "").status().code(), StatusCode::kConflict);
  clock_.Advance(11 * kSecond);
  auto reused = store_->Create(ctx_, Draft("late", "{}", {}, "tmp/x"), "");
  ASSERT_TRUE(reused.ok()) << reused.status().ToString();
  BreadcrumbPatch p;
  p.path.Set("tmp/y");
  auto moved = store_->Update(ctx_, mover.id, p, std::nullopt);
  ASSERT_TRUE(moved.ok()) << moved.status().ToString();
  BreadcrumbQuery by_path;
  by_path.path_prefix = "tmp";
  auto titles = ListTitles(by_path);
  EXPECT_EQ(std::set<std::string>(titles.begin(), titles.end()), (std::set<std::string>{"late", "mover"}));
}

TEST_P(StoreContractTest, ExpiredRecordsAreInvisibleThenSwept) {
  BreadcrumbDraft d = Draft("ephemeral", "{}", {"t"});
  d.ttl_micros = kStart + 5 * kSecond;
  model::Breadcrumb gone = Create(d);
  model::Breadcrumb stays = Create(Draft("stays", "{}", {"t"}));
  clock_.Advance(5 * kSecond - 1);
  EXPECT_TRUE(store_->Get("default", gone.id).ok());
  EXPECT_EQ(ListTitles({}).size(), 2u);

  clock_.Advance(1);  // now == ttl: expired
  EXPECT_EQ(store_->Get("default", gone.id).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->History("default", gone.id).status().code(), StatusCode::kNotFound);
  BreadcrumbPatch p;
  p.title.Set("x");
  EXPECT_EQ(store_->Update(ctx_, gone.id, p, std::nullopt).status().code(), StatusCode::kNotFound);
  BreadcrumbQuery by_tag;
  by_tag.all_tags = {"t"};
  EXPECT_EQ(ListTitles(by_tag), std::vector<std::string>{"stays"});
  EXPECT_EQ(Records(), 2);  // not swept yet

  int64_t seq = LastSeq();
  auto swept = store_->SweepExpired();
  ASSERT_TRUE(swept.ok()) << swept.status().ToString();
  EXPECT_EQ(*swept, 1);
  EXPECT_EQ(Records(), 1);
  EXPECT_EQ(LastSeq(), seq + 1);  // one breadcrumb.deleted event
  EXPECT_EQ(*store_->SweepExpired(), 0);
  EXPECT_EQ(LastSeq(), seq + 1);
  EXPECT_TRUE(store_->Get("default", stays.id).ok());
}

TEST_P(StoreContractTest, DeleteRemovesRecordAndHistory) {
  model::Breadcrumb c = Create(Draft("doomed", "{}", {"t"}));
  BreadcrumbPatch p;
  p.title.Set("v2");
  ASSERT_TRUE(store_->Update(ctx_, c.id, p, std::nullopt).ok());
  ASSERT_TRUE(store_->Delete(ctx_, c.id, std::nullopt).ok());
  EXPECT_EQ(store_->Get("default", c.id).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->History("default", c.id).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->Delete(ctx_, c.id, std::nullopt).code(), StatusCode::kNotFound);
  BreadcrumbQuery by_tag;
  by_tag.all_tags = {"t"};
  EXPECT_TRUE(ListTitles(by_tag).empty());
  EXPECT_EQ(Records(), 0);
}

TEST_P(StoreContractTest, OwnersAreIsolated) {
  model::Breadcrumb c = Create(Draft("mine"), "owner-a");
  model::WriteContext other{"owner-b", "mallory"};
  BreadcrumbPatch p;
  p.title.Set("stolen");
  EXPECT_EQ(store_->Get("owner-b", c.id).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->History("owner-b", c.id).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->Update(other, c.id, p, std::nullopt).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->Delete(other, c.id, std::nullopt).code(), StatusCode::kNotFound);
  EXPECT_TRUE(ListTitles({}, "owner-b").empty());
  EXPECT_EQ(ListTitles({}, "owner-a"), std::vector<std::string>{"mine"});
  auto got = store_->Get("owner-a", c.id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->title, "mine");
  EXPECT_EQ(got->version, 1);
}

TEST_P(StoreContractTest, EventSequenceGrowsByOnePerSuccessfulWrite) {
  EXPECT_EQ(LastSeq(), 0);
  model::Breadcrumb c = Create(Draft("e", "{}", {}, "e/1"));
  EXPECT_EQ(LastSeq(), 1);
  BreadcrumbPatch p;
  p.title.Set("e2");
  ASSERT_TRUE(store_->Update(ctx_, c.id, p, std::nullopt).ok());
  EXPECT_EQ(LastSeq(), 2);
  EXPECT_FALSE(store_->Update(ctx_, c.id, p, 1).ok());  // 412
  EXPECT_EQ(LastSeq(), 2);
  EXPECT_FALSE(store_->Create(ctx_, Draft("dup", "{}", {}, "e/1"), "").ok());  // 409
  EXPECT_EQ(LastSeq(), 2);
  EXPECT_FALSE(store_->Update(ctx_, "missing", p, std::nullopt).ok());  // 404
  EXPECT_EQ(LastSeq(), 2);
  ASSERT_TRUE(store_->Delete(ctx_, c.id, 2).ok());
  EXPECT_EQ(LastSeq(), 3);
  EXPECT_FALSE(store_->Delete(ctx_, c.id, std::nullopt).ok());
  EXPECT_EQ(LastSeq(), 3);
  Create(Draft("after"));
  EXPECT_EQ(LastSeq(), 4);
}

TEST_P(StoreContractTest, ApplyCommitsEveryWriteWithItsEventInOrder) {
  model::Breadcrumb a = Create(Draft("a", R"({"n":1})"));
  model::Breadcrumb doomed = Create(Draft("doomed"));
  ASSERT_EQ(store_->Get("default", a.id).value().title, "a");  // warms the read cache
  BreadcrumbPatch p;
  p.title.Set("a2");
  auto applied = store_->Apply(ctx_, {WriteOp::Create(Draft("b", "{}", {}, "batch/b")), WriteOp::Update(a.id, p, 1),
                                      WriteOp::Delete(doomed.id)});
  ASSERT_TRUE(applied.ok()) << applied.status().ToString();
  ASSERT_EQ(applied->size(), 3u);
  EXPECT_EQ((*applied)[0].breadcrumb.title, "b");
  EXPECT_EQ((*applied)[1].breadcrumb.version, 2);
  EXPECT_EQ((*applied)[2].breadcrumb.id, doomed.id);
  EXPECT_EQ(LastSeq(), 5);
  EXPECT_EQ(store_->Get("default", a.id).value().title, "a2");
  EXPECT_EQ(store_->Get("default", doomed.id).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(Records(), 2);
}

TEST_P(StoreContractTest, ApplyChangesNothingWhenOneWriteFails) {
  model::Breadcrumb a = Create(Draft("a"));
  ASSERT_EQ(store_->Get("default", a.id).value().title, "a");
  Create(Draft("holder", "{}", {}, "taken"));
  BreadcrumbPatch p;
  p.title.Set("changed");
  auto applied = store_->Apply(ctx_, {WriteOp::Update(a.id, p), WriteOp::Create(Draft("c", "{}", {}, "taken"))});
  ASSERT_FALSE(applied.ok());
  EXPECT_EQ(applied.status().code(), StatusCode::kConflict);
  EXPECT_NE(applied.status().message().find("write 1"), std::string::npos) << applied.status().message();
  EXPECT_EQ(store_->Get("default", a.id).value().title, "a");
  EXPECT_EQ(store_->Get("default", a.id).value().version, 1);
  EXPECT_EQ(LastSeq(), 2);
  EXPECT_EQ(Records(), 2);
  auto stale = store_->Apply(ctx_, {WriteOp::Create(Draft("d")), WriteOp::Update(a.id, p, 7)});
  EXPECT_EQ(stale.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(LastSeq(), 2);
  EXPECT_EQ(store_->Apply(ctx_, {}).status().code(), StatusCode::kInvalidArgument);
}

TEST_P(StoreContractTest, JsonTheStoreCouldNotReadBackIsRefusedAndChangesNothing) {
  model::Breadcrumb a = Create(Draft("a", R"({"n":1})"));
  const int64_t seq = LastSeq();
  BreadcrumbDraft bad = Draft("bad", R"({"n":[1,2]})");
  bad.context.as_object()["n"].as_array()[1] = std::numeric_limits<double>::infinity();  // built in code
  auto created = store_->Create(ctx_, bad, "");
  ASSERT_EQ(created.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(created.status().message().find("$.n[1]"), std::string::npos) << created.status().message();
  BreadcrumbDraft bad_hints = Draft("hints");
  bad_hints.llm_hints = json::object{{"x", -std::numeric_limits<double>::infinity()}};
  EXPECT_EQ(store_->Create(ctx_, bad_hints, "").status().code(), StatusCode::kInvalidArgument);
  BreadcrumbPatch p;
  p.context.Set(json::object{{"n", std::numeric_limits<double>::quiet_NaN()}});
  EXPECT_EQ(store_->Update(ctx_, a.id, p, std::nullopt).status().code(), StatusCode::kInvalidArgument);
  auto applied = store_->Apply(ctx_, {WriteOp::Create(Draft("fine")), WriteOp::Update(a.id, p)});
  EXPECT_EQ(applied.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(applied.status().message().find("write 1"), std::string::npos) << applied.status().message();
  EXPECT_EQ(LastSeq(), seq);
  EXPECT_EQ(Records(), 1);
  EXPECT_EQ(store_->Get("default", a.id).value().context, J(R"({"n":1})"));
}

TEST_P(StoreContractTest, AnEmptyPrefixMatchesEveryStringTheEmptyOneIncluded) {
  // As selectors match in memory (found by query_string_fuzz).
  Create(Draft("empty", R"({"e":""})"));
  Create(Draft("abc", R"({"e":"abc"})"));
  Create(Draft("number", R"({"e":1})"));
  EXPECT_EQ(Matching(R"([{"path":"$.e","op":"prefix","value":""}])"), (std::set<std::string>{"empty", "abc"}));
  EXPECT_EQ(Matching(R"([{"path":"$.e","op":"prefix","value":"a"}])"), std::set<std::string>{"abc"});
}

TEST_P(StoreContractTest, ContextMatchWithTheMostValuesAllowedRuns) {
  // The largest comparison the rules allow still makes SQL that SQLite accepts (its expression
  // depth is bounded); a larger one is refused by ParseContextRules before it gets here.
  std::string zeros = "[";
  for (size_t i = 0; i + 1 < model::kMaxContextRuleValues; ++i) zeros += i ? ",0" : "0";
  zeros += "]";
  Create(Draft("zeros", R"({"list":)" + zeros + "}"));
  Create(Draft("other", R"({"list":[1]})"));
  EXPECT_EQ(Matching(R"([{"path":"$.list","op":"eq","value":)" + zeros + "}]"), std::set<std::string>{"zeros"});
  EXPECT_EQ(Matching(R"([{"path":"$.list","op":"ne","value":)" + zeros + "}]"), std::set<std::string>{"other"});
}

TEST_P(StoreContractTest, DataSurvivesReopen) {
  model::Breadcrumb c = Create(Draft("durable", R"({"v":1})", {"t"}, "d/1"));
  BreadcrumbPatch p;
  p.context.Set(J(R"({"v":2})"));
  ASSERT_TRUE(store_->Update(ctx_, c.id, p, 1).ok());
  Reopen();
  auto got = store_->Get("default", c.id);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->version, 2);
  EXPECT_EQ(got->context, J(R"({"v":2})"));
  EXPECT_EQ(got->path, "d/1");
  EXPECT_EQ(store_->History("default", c.id)->size(), 2u);
  EXPECT_EQ(LastSeq(), 2);
  EXPECT_EQ(store_->Create(ctx_, Draft("dup", "{}", {}, "d/1"), "").status().code(), StatusCode::kConflict);
  Create(Draft("next"));
  EXPECT_EQ(LastSeq(), 3);
  EXPECT_EQ(Records(), 2);
}

TEST_P(StoreContractTest, WritesAfterCloseAreUnavailable) {
  model::Breadcrumb c = Create(Draft("x"));
  store_->Close();
  store_->Close();  // idempotent
  EXPECT_EQ(store_->Create(ctx_, Draft("y"), "").status().code(), StatusCode::kUnavailable);
  BreadcrumbPatch p;
  p.title.Set("z");
  EXPECT_EQ(store_->Update(ctx_, c.id, p, std::nullopt).status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(store_->Delete(ctx_, c.id, std::nullopt).code(), StatusCode::kUnavailable);
}

// --- List -------------------------------------------------------------------------------------

TEST_P(StoreContractTest, ListFilters) {
  auto make = [&](std::string title, std::optional<std::string> schema, std::vector<std::string> tags,
                  std::optional<std::string> path) {
    BreadcrumbDraft d = Draft(std::move(title), "{}", std::move(tags), std::move(path));
    d.schema_name = std::move(schema);
    Create(d);
  };
  make("r1", "note.v1", {"x", "y"}, "a/b");
  make("r2", "note.v1", {"x"}, "a/b/c");
  make("r3", "task.v1", {"y", "z"}, "a/bc");
  make("r4", std::nullopt, {}, "a");
  make("r5", "note.v2", {"z"}, std::nullopt);

  using V = std::vector<std::string>;
  BreadcrumbQuery q;
  EXPECT_EQ(ListTitles(q), (V{"r5", "r4", "r3", "r2", "r1"}));  // newest first by default
  q.order = model::SortOrder::kOldestFirst;
  EXPECT_EQ(ListTitles(q), (V{"r1", "r2", "r3", "r4", "r5"}));

  q = {};
  q.schema_name = "note.v1";
  EXPECT_EQ(ListTitles(q), (V{"r2", "r1"}));
  q = {};
  q.all_tags = {"x", "y"};
  EXPECT_EQ(ListTitles(q), (V{"r1"}));
  q = {};
  q.any_tags = {"x", "z"};
  EXPECT_EQ(ListTitles(q), (V{"r5", "r3", "r2", "r1"}));
  q.all_tags = {"y"};
  EXPECT_EQ(ListTitles(q), (V{"r3", "r1"}));
  q = {};
  q.path = "a/b";
  EXPECT_EQ(ListTitles(q), (V{"r1"}));
  q = {};
  q.path_prefix = "a/b";  // whole segments: not a/bc
  EXPECT_EQ(ListTitles(q), (V{"r2", "r1"}));
  q.path_prefix = "a";
  EXPECT_EQ(ListTitles(q), (V{"r4", "r3", "r2", "r1"}));
  q.path_prefix = "a/b/c";
  EXPECT_EQ(ListTitles(q), (V{"r2"}));
  q.path_prefix = "b";
  EXPECT_TRUE(ListTitles(q).empty());
  q = {};
  q.schema_name = "note.v1";
  q.all_tags = {"y"};
  q.path_prefix = "a";
  EXPECT_EQ(ListTitles(q), (V{"r1"}));
}

TEST_P(StoreContractTest, ContextMatchOps) {
  Create(Draft("r1", R"({"n":1,"s":"1","list":["x","y"],"name":"alpha","obj":{"k":1,"j":[2]},"flag":true})"));
  Create(Draft("r2", R"({"n":1.0,"s":"b","list":["z"],"name":"beta","flag":false,"nul":null})"));
  Create(Draft("r3", R"({"n":2.5,"s":"c","name":"gamma","deep":{"a":[{"b":7}]}})"));
  Create(Draft("r4", R"({"n":"1"})"));
  Create(Draft("r5", R"([1,2,3])"));

  using S = std::set<std::string>;
  EXPECT_EQ(Matching(R"({"path":"$.n","op":"eq","value":1})"), (S{"r1", "r2"}));  // 1 == 1.0, never "1"
  EXPECT_EQ(Matching(R"({"path":"$.n","op":"eq","value":1.0})"), (S{"r1", "r2"}));
  EXPECT_EQ(Matching(R"({"path":"$.n","op":"eq","value":"1"})"), (S{"r4"}));
  EXPECT_EQ(Matching(R"({"path":"$.s","op":"eq","value":1})"), S{});
  EXPECT_EQ(Matching(R"({"path":"$.n","op":"ne","value":1})"), (S{"r3", "r4", "r5"}));
  EXPECT_EQ(Matching(R"({"path":"$.n","op":"gt","value":1})"), (S{"r3"}));
  EXPECT_EQ(Matching(R"({"path":"$.n","op":"gte","value":1})"), (S{"r1", "r2", "r3"}));
  EXPECT_EQ(Matching(R"({"path":"$.n","op":"lt","value":2.5})"), (S{"r1", "r2"}));
  EXPECT_EQ(Matching(R"({"path":"$.n","op":"lte","value":2.5})"), (S{"r1", "r2", "r3"}));
  EXPECT_EQ(Matching(R"({"path":"$.s","op":"gt","value":"a"})"), (S{"r2", "r3"}));  // strings compare as text
  EXPECT_EQ(Matching(R"({"path":"$.n","op":"in","value":[2.5,"1"]})"), (S{"r3", "r4"}));
  EXPECT_EQ(Matching(R"({"path":"$.list","op":"contains","value":"x"})"), (S{"r1"}));
  EXPECT_EQ(Matching(R"({"path":"$.name","op":"contains","value":"amm"})"), (S{"r3"}));  // substring
  EXPECT_EQ(Matching(R"({"path":"$","op":"contains","value":2})"), (S{"r5"}));
  EXPECT_EQ(Matching(R"({"path":"$.list","op":"contains_any","value":["y","z","q"]})"), (S{"r1", "r2"}));
  EXPECT_EQ(Matching(R"({"path":"$.flag","op":"exists"})"), (S{"r1", "r2"}));
  EXPECT_EQ(Matching(R"({"path":"$.flag","op":"exists","value":false})"), (S{"r3", "r4", "r5"}));
  EXPECT_EQ(Matching(R"({"path":"$.nul","op":"exists","value":true})"), (S{"r2"}));  // present null exists
  EXPECT_EQ(Matching(R"({"path":"$.nul","op":"eq","value":null})"), (S{"r2"}));
  EXPECT_EQ(Matching(R"({"path":"$.flag","op":"eq","value":true})"), (S{"r1"}));
  EXPECT_EQ(Matching(R"({"path":"$.flag","op":"eq","value":false})"), (S{"r2"}));
  EXPECT_EQ(Matching(R"({"path":"$.obj","op":"eq","value":{"k":1,"j":[2]}})"), (S{"r1"}));
  EXPECT_EQ(Matching(R"({"path":"$.list[1]","op":"eq","value":"y"})"), (S{"r1"}));
  EXPECT_EQ(Matching(R"({"path":"$.deep.a[0].b","op":"gte","value":7})"), (S{"r3"}));
  EXPECT_EQ(Matching(R"([{"path":"$.n","op":"eq","value":1},{"path":"$.name","op":"eq","value":"beta"}])"),
            (S{"r2"}));  // all rules must hold
}

// JSON objects are unordered: {"k":1,"j":[2]} and {"j":[2],"k":1} are the same value, and inside
// them 1 equals 1.0 as it does at the top level.
TEST_P(StoreContractTest, ContextMatchObjectEqualityIgnoresKeyOrder) {
  Create(Draft("r1", R"({"obj":{"k":1,"j":[2]},"list":[{"a":1,"b":2}]})"));
  using S = std::set<std::string>;
  EXPECT_EQ(Matching(R"({"path":"$.obj","op":"eq","value":{"j":[2],"k":1}})"), (S{"r1"}));
  EXPECT_EQ(Matching(R"({"path":"$.obj","op":"eq","value":{"k":1.0,"j":[2]}})"), (S{"r1"}));
  EXPECT_EQ(Matching(R"({"path":"$.obj","op":"in","value":[{"j":[2],"k":1}]})"), (S{"r1"}));
  EXPECT_EQ(Matching(R"({"path":"$.list","op":"contains","value":{"b":2,"a":1}})"), (S{"r1"}));
  EXPECT_EQ(Matching(R"({"path":"$.obj","op":"ne","value":{"j":[2],"k":1}})"), S{});
}

// Walks every page of `query` (with `limit` per page) and returns the titles in order.
std::vector<std::string> AllPages(Store& store, BreadcrumbQuery query, size_t limit, size_t* pages) {
  std::vector<std::string> titles;
  query.limit = limit;
  *pages = 0;
  while (true) {
    auto page = store.List("default", query);
    EXPECT_TRUE(page.ok()) << page.status().ToString();
    if (!page.ok() || ++*pages > 1000) break;
    EXPECT_LE(page->items.size(), limit);
    for (const auto& crumb : page->items) titles.push_back(crumb.title);
    if (!page->next_cursor) break;
    EXPECT_EQ(page->items.size(), limit);  // only the last page may be short
    query.cursor = page->next_cursor;
  }
  return titles;
}

TEST_P(StoreContractTest, PaginationHasNoGapsOrDuplicates) {
  constexpr int kCount = 250;
  std::vector<std::string> created;
  for (int i = 0; i < kCount; ++i) {
    char title[16];
    std::snprintf(title, sizeof(title), "r%03d", i);
    created.push_back(title);
    Create(Draft(title, "{}", {i % 2 == 0 ? "even" : "odd"}));
  }
  size_t pages = 0;
  BreadcrumbQuery asc;
  asc.order = model::SortOrder::kOldestFirst;
  EXPECT_EQ(AllPages(*store_, asc, 40, &pages), created);
  EXPECT_EQ(pages, 7u);  // 6 full pages and one of 10

  std::vector<std::string> reversed(created.rbegin(), created.rend());
  EXPECT_EQ(AllPages(*store_, {}, 40, &pages), reversed);
  EXPECT_EQ(AllPages(*store_, {}, 50, &pages), reversed);
  EXPECT_EQ(pages, 5u);  // an exactly full last page has no next_cursor
  EXPECT_EQ(AllPages(*store_, {}, 1000, &pages), reversed);
  EXPECT_EQ(pages, 1u);

  BreadcrumbQuery odd;
  odd.all_tags = {"odd"};
  std::vector<std::string> expected;
  for (int i = kCount - 1; i >= 0; --i) {
    if (i % 2 == 1) expected.push_back(created[i]);
  }
  EXPECT_EQ(AllPages(*store_, odd, 7, &pages), expected);
}

TEST_P(StoreContractTest, PaginationIsStableWhileWriting) {
  for (int i = 0; i < 10; ++i) Create(Draft("old" + std::to_string(i)));
  BreadcrumbQuery q;
  q.limit = 4;
  auto first = store_->List("default", q);
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(first->next_cursor);
  Create(Draft("newer"));  // newest-first paging continues below the cursor, unaffected
  q.cursor = first->next_cursor;
  auto second = store_->List("default", q);
  ASSERT_TRUE(second.ok());
  ASSERT_EQ(second->items.size(), 4u);
  EXPECT_EQ(second->items.front().title, "old5");
}

TEST_P(StoreContractTest, MalformedCursorIsInvalidArgument) {
  Create(Draft("x"));
  for (const char* cursor : {"", "garbage", "zz", "0", "c1.5", "3939", "ffffffffffffffff"}) {
    BreadcrumbQuery q;
    q.cursor = cursor;
    auto page = store_->List("default", q);
    ASSERT_FALSE(page.ok()) << cursor;
    EXPECT_EQ(page.status().code(), StatusCode::kInvalidArgument) << cursor;
  }
}

// The bus replaces the listener and is then destroyed: a call already running on the writer
// thread must have returned by then, or it touches a destroyed bus.
TEST(SqliteCommitListenerTest, ReplacingTheListenerWaitsForTheCallInProgress) {
  ManualClock clock{kStart};
  test_support::TempSqliteStore store{"cairn-listener-test"};
  ASSERT_TRUE(store.Open(clock));
  std::promise<void> entered;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> returned{false};
  store->SetCommittedEventsListener([&](std::vector<model::Event>, bool) {
    entered.set_value();
    released.wait();
    returned = true;
  });
  std::thread writer([&] { EXPECT_TRUE(store->Create(model::WriteContext{"default", "alice"}, Draft("w"), "").ok()); });
  entered.get_future().wait();  // the listener is running and blocked

  std::atomic<bool> returned_when_replaced{false};
  std::thread replacer([&] {
    store->SetCommittedEventsListener(nullptr);
    returned_when_replaced = returned.load();
  });
  // Replacing must block while the call runs. A replacement that does not wait returns within this
  // bound; one that waits is released after it (the bound only decides how quickly a bug shows).
  std::promise<void> replacer_done;
  auto done = replacer_done.get_future();
  std::thread watcher([&] {
    replacer.join();
    replacer_done.set_value();
  });
  done.wait_for(std::chrono::milliseconds(200));
  release.set_value();
  watcher.join();
  writer.join();
  EXPECT_TRUE(returned_when_replaced) << "SetCommittedEventsListener returned while the old listener ran";
}

// Conditions on `before` (model/event_expression.h) read the record before an update from the
// event, handed over by the writer or read back from the history: both the same.
TEST(SqliteEventBeforeTest, AnUpdateCarriesTheVersionBeforeItLiveAndWhenReadBack) {
  ManualClock clock{kStart};
  test_support::TempSqliteStore store{"cairn-before-test"};
  ASSERT_TRUE(store.Open(clock));
  std::mutex mu;
  std::condition_variable handed_over;
  std::vector<model::Event> live;
  store->SetCommittedEventsListener([&](std::vector<model::Event> events, bool) {
    std::lock_guard lock(mu);
    for (auto& e : events) live.push_back(std::move(e));
    handed_over.notify_all();
  });
  model::WriteContext ctx{"default", "alice"};
  auto created = store->Create(ctx, Draft("task", R"({"status": "todo", "n": 1})", {"a"}, "projects/p/tasks/t"), "");
  ASSERT_TRUE(created.ok());
  BreadcrumbPatch done;
  done.context.Set(J(R"({"status": "done", "n": 2})"));
  done.tags.Set({"b"});
  ASSERT_TRUE(store->Update(ctx, created->breadcrumb.id, done, std::nullopt).ok());
  BreadcrumbPatch renamed;
  renamed.title.Set("task 2");
  ASSERT_TRUE(store->Update(ctx, created->breadcrumb.id, renamed, std::nullopt).ok());
  {
    // A write is acknowledged before its events are handed over (after the commit).
    std::unique_lock lock(mu);
    ASSERT_TRUE(handed_over.wait_for(lock, std::chrono::seconds(20), [&] { return live.size() == 3; }));
  }
  store->SetCommittedEventsListener(nullptr);

  auto logged = store->ReadEvents(0, 10);
  ASSERT_TRUE(logged.ok());
  ASSERT_EQ(logged->size(), 3u);
  std::lock_guard lock(mu);
  for (const auto* events : {&live, &*logged}) {
    EXPECT_FALSE((*events)[0].before) << "a create has no before";
    ASSERT_TRUE((*events)[1].before);
    EXPECT_EQ(*(*events)[1].before, J(R"({"id": ")" + created->breadcrumb.id + R"(", "schema_name": null, "title": "task",
        "tags": ["a"], "path": "projects/p/tasks/t", "version": 1, "context": {"status": "todo", "n": 1}})"));
    ASSERT_TRUE((*events)[2].before);
    EXPECT_EQ((*events)[2].before->at("context"), J(R"({"status": "done", "n": 2})"));
    EXPECT_EQ((*events)[2].before->at("version"), 2);
  }
  // Once the record is deleted its history is gone: a replayed update has no before.
  ASSERT_TRUE(store->Delete(ctx, created->breadcrumb.id, std::nullopt).ok());
  auto after_delete = store->ReadEvents(0, 10);
  ASSERT_TRUE(after_delete.ok());
  EXPECT_FALSE((*after_delete)[1].before);
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreContractTest,
                         ::testing::Values(Backend::kSqlite, Backend::kCached, Backend::kPostgres),
                         [](const ::testing::TestParamInfo<Backend>& param_info) {
                           switch (param_info.param) {
                             case Backend::kSqlite: return "Sqlite";
                             case Backend::kCached: return "Cached";
                             case Backend::kPostgres: return "Postgres";
                           }
                           return "Unknown";
                         });

}  // namespace
}  // namespace cairn::store
