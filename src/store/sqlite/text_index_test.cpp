// The TextIndex contract (store/text_index.h) on both backends: what is indexed, ranking, filters,
// tenants, the index following every write in its transaction, and hostile query text; then the
// SQLite backend's own mechanisms (the FTS5 rows indexed in batches, its migration) and the
// PostgreSQL migration.
#include <gtest/gtest.h>

#include <algorithm>
#include <sqlite3.h>

#include <boost/json/parse.hpp>
#include <set>
#include <string>
#include <vector>

#include "base/clock.h"
#include "model/access.h"
#include "store/text_index.h"
#include "support/search_backends.h"

namespace cairn::store {
namespace {

namespace json = boost::json;
using test_support::SearchBackend;

constexpr int64_t kStart = 1'795'225'252'000'000;
constexpr int64_t kSecond = 1'000'000;

class TextIndexTest : public ::testing::TestWithParam<SearchBackend> {
 protected:
  void SetUp() override { ASSERT_TRUE(backends_.Open(GetParam(), clock_)); }

  Store& store() { return backends_.store(); }

  model::Breadcrumb Create(std::string title, std::string_view context = "{}", std::vector<std::string> tags = {},
                           std::optional<std::string> schema = std::nullopt, std::optional<std::string> path = std::nullopt,
                           const std::string& owner = "default") {
    model::BreadcrumbDraft d;
    d.title = std::move(title);
    d.context = json::parse(context);
    d.tags = std::move(tags);
    d.schema_name = std::move(schema);
    d.path = std::move(path);
    auto created = store().Create(model::WriteContext{owner, "alice"}, d, "");
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return created.ok() ? created->breadcrumb : model::Breadcrumb{};
  }

  Result<std::vector<TextHit>> Search(TextSearchQuery query, const std::string& owner = "default") {
    return backends_.text().SearchText(owner, query);
  }
  std::vector<std::string> Titles(std::string text, const std::string& owner = "default") {
    TextSearchQuery query;
    query.text = std::move(text);
    return Titles(query, owner);
  }
  std::vector<std::string> Titles(const TextSearchQuery& query, const std::string& owner = "default") {
    auto hits = Search(query, owner);
    EXPECT_TRUE(hits.ok()) << hits.status().ToString();
    std::vector<std::string> titles;
    if (hits.ok()) {
      for (const auto& hit : *hits) titles.push_back(hit.breadcrumb.title);
    }
    return titles;
  }
  // Records whose text the index holds, whatever their tenant or expiry (for SQLite, once the
  // text waiting to be indexed is): what the index really holds.
  int64_t IndexedRows() {
    if (backends_.postgres()) {
      return backends_.Number("SELECT count(*) FROM breadcrumbs WHERE search_vector IS NOT NULL");
    }
    EXPECT_TRUE(backends_.sqlite()->IndexPendingText().ok());
    return CountRows("breadcrumbs_fts");
  }
  int64_t CountRows(const std::string& table) { return backends_.Number("SELECT count(*) FROM " + table); }

  ManualClock clock_{kStart};
  test_support::SearchBackends backends_{"cairn-text-index-test"};
};

// The SQLite backend's own mechanisms.
class SqliteTextIndexTest : public TextIndexTest {};
// The PostgreSQL backend's own.
class PgTextIndexTest : public TextIndexTest {};

using Names = std::vector<std::string>;

template <typename Fn>
TextSearchQuery With(TextSearchQuery query, Fn change) {
  change(query);
  return query;
}

TextSearchQuery Q(std::string text) {
  TextSearchQuery query;
  query.text = std::move(text);
  return query;
}

TEST_P(TextIndexTest, FindsTitleDescriptionTagsAndNestedContextStrings) {
  Create("Plan the trip", R"({"city":"Lisbon","stops":[{"name":"Belem tower"}],"days":3})", {"holiday"});
  model::BreadcrumbDraft d;
  d.title = "described";
  d.description = "a note about porcelain";
  ASSERT_TRUE(store().Create(model::WriteContext{}, d, "").ok());
  EXPECT_EQ(Titles("lisbon"), Names{"Plan the trip"});
  EXPECT_EQ(Titles("belem"), Names{"Plan the trip"});
  EXPECT_EQ(Titles("holiday"), Names{"Plan the trip"});
  EXPECT_EQ(Titles("PORCELAIN"), Names{"described"});
  EXPECT_EQ(Titles("lisb*"), Names{"Plan the trip"});
  EXPECT_TRUE(Titles("3").empty());     // numbers of the context are not text
  EXPECT_TRUE(Titles("city").empty());  // nor are its keys
}

// Punctuation separates words in the indexed text as it does in the query (which cannot hold any).
TEST_P(TextIndexTest, PunctuationSeparatesWordsOfTheText) {
  Create("contact", R"({"mail":"ada@example.com","page":"https://lovelace.org/notes-on_engines"})");
  for (const char* word : {"ada", "example", "com", "lovelace", "notes", "engines"}) {
    EXPECT_EQ(Titles(word), Names{"contact"}) << word;
  }
  EXPECT_EQ(Titles("ada@example.com"), Names{"contact"});
}

TEST_P(TextIndexTest, RanksByBm25TitleFirstAndMoreWordsHigher) {
  Create("unrelated", R"({"note":"the harbour is near"})");
  Create("harbour", R"({"note":"nothing else"})");
  Create("harbour lights", R"({"note":"lights over the harbour"})");
  EXPECT_EQ(Titles("harbour lights"), (Names{"harbour lights", "harbour", "unrelated"}));
  auto hits = Search(Q("harbour"));
  ASSERT_TRUE(hits.ok());
  ASSERT_EQ(hits->size(), 3u);
  EXPECT_GE((*hits)[0].score, (*hits)[1].score);
  EXPECT_GE((*hits)[1].score, (*hits)[2].score);
  EXPECT_GT((*hits)[2].score, 0);
}

// Equal texts but for the word: the rarer one ranks first (the older record, which would lose a tie).
TEST_P(TextIndexTest, RarerWordsWeighMore) {
  Create("zeta");
  for (int i = 0; i < 4; ++i) Create("alpha");
  EXPECT_EQ(Titles("alpha zeta"), (Names{"zeta", "alpha", "alpha", "alpha", "alpha"}));
}

TEST_P(TextIndexTest, FiltersBySchemaTagsPathPrefixAndLimit) {
  Create("apple one", "{}", {"fruit", "red"}, "note.v1", "orchard/a");
  Create("apple two", "{}", {"fruit"}, "note.v1", "orchard/b/c");
  Create("apple three", "{}", {"fruit", "red"}, "task.v1", "orchardx/d");
  Create("apple four", "{}", {}, std::nullopt, std::nullopt);
  auto sorted = [](Names t) {
    std::sort(t.begin(), t.end());
    return t;
  };
  EXPECT_EQ(sorted(Titles(With(Q("apple"), [](auto& q) { q.schema_name = "note.v1"; }))),
            (Names{"apple one", "apple two"}));
  EXPECT_EQ(sorted(Titles(With(Q("apple"), [](auto& q) { q.all_tags = {"fruit", "red"}; }))),
            (Names{"apple one", "apple three"}));
  EXPECT_EQ(sorted(Titles(With(Q("apple"), [](auto& q) { q.path_prefix = "orchard"; }))),
            (Names{"apple one", "apple two"}));
  EXPECT_EQ(Titles(With(Q("apple"), [](auto& q) { q.limit = 2; })).size(), 2u);
  for (size_t bad : {size_t{0}, kMaxSearchLimit + 1}) {
    auto refused = Search(With(Q("apple"), [bad](auto& q) { q.limit = bad; }));
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().field(), "limit");
  }
}

// The reader's rights (model/access.h) and exclude_secret are applied by the search itself.
TEST_P(TextIndexTest, ReadersFindOnlyWhatTheyMayRead) {
  std::vector<model::Breadcrumb> records;
  for (const char* visibility : {"public", "team", "private"}) {
    for (const char* creator : {"alice", "bob"}) {
      for (bool developers_only : {false, true}) {
        model::BreadcrumbDraft d;
        d.title = std::string("quokka ") + visibility + " by " + creator;
        d.visibility = visibility;
        if (developers_only) d.acl = model::RecordAcl{std::vector<std::string>{"role:developer"}, std::nullopt};
        d.sensitivity = creator == std::string("bob") && !developers_only ? "secret" : "low";
        auto created = store().Create(model::WriteContext{"default", creator}, d, "");
        ASSERT_TRUE(created.ok()) << created.status().ToString();
        records.push_back(created->breadcrumb);
      }
    }
  }
  model::AccessScope bob{"bob", {"reader", "user"}};
  model::AccessScope dana{"dana", {"reader", "user", "developer"}};
  for (const model::AccessScope& scope : {bob, dana, model::AccessScope::Everything()}) {
    for (bool exclude_secret : {false, true}) {
      std::set<std::string> expected;
      for (const auto& crumb : records) {
        if (scope.MayRead(crumb.visibility, crumb.created_by, crumb.acl) &&
            !(exclude_secret && crumb.sensitivity == "secret")) {
          expected.insert(crumb.id);
        }
      }
      auto hits = Search(With(Q("quokka"), [&](auto& q) {
        q.reader = scope;
        q.exclude_secret = exclude_secret;
        q.limit = kMaxSearchLimit;
      }));
      ASSERT_TRUE(hits.ok()) << hits.status().ToString();
      std::set<std::string> found;
      for (const auto& hit : *hits) found.insert(hit.breadcrumb.id);
      EXPECT_EQ(found, expected) << scope.principal << (exclude_secret ? " without secrets" : "");
      EXPECT_FALSE(expected.empty());
      EXPECT_LT(expected.size(), scope.admin ? records.size() + 1 : records.size());
    }
  }
}

TEST_P(TextIndexTest, TenantsSeeOnlyTheirOwnRecords) {
  Create("secret plan", "{}", {}, std::nullopt, std::nullopt, "tenant-a");
  Create("public plan", "{}", {}, std::nullopt, std::nullopt, "tenant-b");
  EXPECT_EQ(Titles("plan", "tenant-a"), Names{"secret plan"});
  EXPECT_EQ(Titles("secret", "tenant-b"), Names{});
  EXPECT_EQ(Titles("plan", "default"), Names{});
}

TEST_P(TextIndexTest, AnUpdateReplacesTheOldTextInItsTransaction) {
  model::Breadcrumb crumb = Create("draft", R"({"body":"walrus"})", {"zebra"});
  model::BreadcrumbPatch patch;
  patch.context = {true, json::parse(R"({"body":"penguin"})")};
  patch.tags = {true, {"okapi"}};
  ASSERT_TRUE(store().Update(model::WriteContext{}, crumb.id, patch, std::nullopt).ok());
  EXPECT_TRUE(Titles("walrus").empty());
  EXPECT_TRUE(Titles("zebra").empty());
  EXPECT_EQ(Titles("penguin okapi"), Names{"draft"});
  // Becoming a snapshot takes it out of the index (runs and snapshots are not indexed).
  model::BreadcrumbPatch to_snapshot;
  to_snapshot.schema_name = {true, std::string("agent.snapshot.v1")};
  ASSERT_TRUE(store().Update(model::WriteContext{}, crumb.id, to_snapshot, std::nullopt).ok());
  EXPECT_TRUE(Titles("penguin").empty());
  EXPECT_EQ(IndexedRows(), 0);
}

// Several writes in one transaction, and a write that fails, leave the index as separate writes
// would (SQLite: the triggers note new text and the writer indexes it before COMMIT, migration 6;
// PostgreSQL: the generated column is written with the row).
TEST_P(TextIndexTest, TextNotedInATransactionIsIndexedAtItsCommitAndNotWhenItFails) {
  model::Breadcrumb a = Create("alpha", R"({"body":"walrus"})");
  model::Breadcrumb c = Create("gamma", R"({"body":"ibis"})");
  model::BreadcrumbDraft b;
  b.title = "beta";
  b.context = json::parse(R"({"body":"penguin"})");
  model::BreadcrumbPatch patch;
  patch.context = {true, json::parse(R"({"body":"penguin"})")};
  std::vector<WriteOp> ops{WriteOp::Update(a.id, patch), WriteOp::Create(b), WriteOp::Delete(c.id)};
  ASSERT_TRUE(store().Apply(model::WriteContext{}, ops).ok());
  Names both = Titles("penguin");
  std::sort(both.begin(), both.end());
  EXPECT_EQ(both, (Names{"alpha", "beta"}));
  EXPECT_TRUE(Titles("walrus").empty());
  EXPECT_TRUE(Titles("ibis").empty());
  // A failed write (a stale If-Match) rolls back what its create noted.
  model::BreadcrumbDraft d;
  d.title = "delta";
  d.context = json::parse(R"({"body":"narwhal"})");
  std::vector<WriteOp> failing{WriteOp::Create(d), WriteOp::Update(a.id, patch, 1)};
  EXPECT_FALSE(store().Apply(model::WriteContext{}, failing).ok());
  Create("epsilon", R"({"body":"okapi"})");
  EXPECT_TRUE(Titles("narwhal").empty());
  EXPECT_EQ(Titles("okapi"), Names{"epsilon"});
  EXPECT_EQ(IndexedRows(), 3);
}

TEST_P(TextIndexTest, RunsAndSnapshotsAreNotIndexedSessionMessagesAre) {
  Create("run", R"({"output":"kestrel"})", {}, "agent.execution.v1");
  Create("snap", R"({"state":"kestrel"})", {}, "agent.snapshot.v1");
  Create("said", R"({"content":"kestrel"})", {}, "agent.session.message.v1");
  EXPECT_EQ(Titles("kestrel"), Names{"said"});
  EXPECT_EQ(IndexedRows(), 1);
}

TEST_P(TextIndexTest, DeletesAndExpiryRemoveTheText) {
  model::Breadcrumb gone = Create("heron", "{}");
  ASSERT_TRUE(store().Delete(model::WriteContext{}, gone.id, std::nullopt).ok());
  EXPECT_TRUE(Titles("heron").empty());

  model::BreadcrumbDraft d;
  d.title = "ibis";
  d.path = "birds/ibis";
  d.ttl_micros = kStart + 10 * kSecond;
  ASSERT_TRUE(store().Create(model::WriteContext{}, d, "").ok());
  EXPECT_EQ(Titles("ibis"), Names{"ibis"});
  clock_.Advance(11 * kSecond);
  EXPECT_TRUE(Titles("ibis").empty());  // expired: invisible before any sweep
  // A new record reclaiming the expired one's path removes the old row and its text.
  Create("stork", "{}", {}, std::nullopt, "birds/ibis");
  EXPECT_EQ(IndexedRows(), 1);

  d.title = "crane";
  d.path.reset();
  d.ttl_micros = clock_.NowMicros() + kSecond;
  ASSERT_TRUE(store().Create(model::WriteContext{}, d, "").ok());
  clock_.Advance(2 * kSecond);
  ASSERT_TRUE(store().SweepExpired().ok());
  EXPECT_EQ(IndexedRows(), 1);
  EXPECT_EQ(Titles("stork crane ibis heron"), Names{"stork"});
}

TEST_P(TextIndexTest, HostileQueryTextIsWordsOrAClearRefusal) {
  Create("and or not near", R"({"x":"drop table breadcrumbs"})");
  const std::vector<std::string> hostile = {
      R"(title:and)", R"("unbalanced)", R"(a OR)", R"(NEAR(a b)", R"(* OR *)", R"(-x)", R"(^and)", R"({title body}:and)",
      "x'); DROP TABLE breadcrumbs; --", std::string("and\0or", 6), std::string(10000, 'z'), std::string(1024, '"'),
      "\xff\xfe\xc3", "and \xe2\x80\x94 or", "x\xc2\xa0y \xe3\x80\x80 z'\\:*",
  };
  for (const std::string& text : hostile) {
    auto hits = Search(With(Q(text), [](auto& q) { q.snippets = true; }));
    if (hits.ok()) continue;
    EXPECT_EQ(hits.status().code(), StatusCode::kInvalidArgument) << text.substr(0, 40) << ": " << hits.status().ToString();
    EXPECT_EQ(hits.status().field(), "q");
    EXPECT_EQ(hits.status().message().find("SQL"), std::string::npos) << hits.status().message();
  }
  EXPECT_EQ(Titles("x'); DROP TABLE breadcrumbs; --"), Names{"and or not near"});
  EXPECT_EQ(Titles("title:and"), Names{"and or not near"});
  EXPECT_EQ(IndexedRows(), 1);
}

TEST_P(TextIndexTest, SnippetsMarkTheMatchedWords) {
  Create("notes", R"({"text":"the quick brown fox jumps over the lazy dog"})");
  auto hits = Search(With(Q("fox"), [](auto& q) { q.snippets = true; }));
  ASSERT_TRUE(hits.ok());
  ASSERT_EQ(hits->size(), 1u);
  EXPECT_NE((*hits)[0].snippet.find("**fox**"), std::string::npos) << (*hits)[0].snippet;
}

// Noted text is indexed once enough has gathered (full_text_batch_rows), and before any search:
// a search finds every acknowledged write however few wait; a restart loses nothing noted.
TEST_P(SqliteTextIndexTest, TextIsIndexedInBatchesAndBeforeEverySearch) {
  backends_.Close();
  ASSERT_TRUE(backends_.Open(GetParam(), clock_, [](sqlite::SqliteStoreOptions& o) { o.full_text_batch_rows = 4; }));
  Create("one", R"({"body":"puffin"})");
  Create("two", R"({"body":"puffin"})");
  EXPECT_EQ(CountRows("breadcrumbs_fts"), 0);  // waiting, noted in the writes' transactions
  EXPECT_EQ(CountRows("breadcrumbs_fts_pending"), 2);
  EXPECT_EQ(Titles("puffin").size(), 2u);  // the search indexed them first
  EXPECT_EQ(CountRows("breadcrumbs_fts"), 2);
  EXPECT_EQ(CountRows("breadcrumbs_fts_pending"), 0);

  for (const char* title : {"three", "four", "five"}) Create(title, R"({"body":"gannet"})");
  EXPECT_EQ(CountRows("breadcrumbs_fts_pending"), 3);
  Create("six", R"({"body":"gannet"})");  // the fourth waiting: its commit indexes all four
  EXPECT_EQ(CountRows("breadcrumbs_fts"), 6);
  EXPECT_EQ(CountRows("breadcrumbs_fts_pending"), 0);

  // A deleted record's noted text goes with it; what waits is indexed when the store closes.
  model::Breadcrumb gone = Create("seven", R"({"body":"skua"})");
  Create("eight", R"({"body":"skua"})");
  ASSERT_TRUE(store().Delete(model::WriteContext{}, gone.id, std::nullopt).ok());
  EXPECT_EQ(CountRows("breadcrumbs_fts_pending"), 1);
  ASSERT_TRUE(backends_.Reopen());
  EXPECT_EQ(Titles("skua"), Names{"eight"});
}

TEST_P(SqliteTextIndexTest, TheMigrationIndexesRecordsWrittenBeforeIt) {
  Create("older record", R"({"deep":{"er":["quokka"]}})");
  Create("older run", R"({"x":"quokka"})", {}, "agent.execution.v1");
  backends_.Close();
  // Back to schema 3: no index, no triggers, no vectors, as a data dir of the previous release.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((backends_.sqlite().dir() + "/cairn.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "DROP TABLE breadcrumbs_fts; DROP TRIGGER breadcrumbs_fts_insert; "
                             "DROP TRIGGER breadcrumbs_fts_update; DROP TRIGGER breadcrumbs_fts_delete; "
                             "DROP TRIGGER breadcrumb_vectors_delete; DROP TABLE breadcrumb_vectors; DROP TABLE breadcrumbs_fts_pending; "
                             "ALTER TABLE breadcrumbs DROP COLUMN acl; ALTER TABLE events DROP COLUMN access; "
                             "ALTER TABLE webhooks DROP COLUMN created_by; ALTER TABLE webhooks DROP COLUMN secret_name; "
                             "ALTER TABLE webhooks DROP COLUMN headers; "
                             "DELETE FROM schema_migrations WHERE version >= 4;",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  ASSERT_TRUE(backends_.Reopen());
  EXPECT_EQ(Titles("quokka"), Names{"older record"});
}

// Records written before migration 3 are indexed by it (the generated column is computed for
// every existing row).
TEST_P(PgTextIndexTest, TheMigrationIndexesRecordsWrittenBeforeIt) {
  Create("older record", R"({"deep":{"er":["quokka"]}})");
  Create("older run", R"({"x":"quokka"})", {}, "agent.execution.v1");
  // Back to schema 2: no search column, functions or vectors, as a database of the previous release.
  ASSERT_TRUE(backends_.Execute("DROP TABLE breadcrumb_vectors; ALTER TABLE breadcrumbs DROP COLUMN search_vector; "
                                "DROP FUNCTION cairn_search_text(text); DROP FUNCTION cairn_json_strings(jsonb); "
                                "DELETE FROM schema_migrations WHERE version >= 3"));
  ASSERT_TRUE(backends_.Reopen());
  EXPECT_EQ(Titles("quokka"), Names{"older record"});
}

INSTANTIATE_TEST_SUITE_P(Backends, TextIndexTest, test_support::kSearchBackends, test_support::SearchBackendName);
INSTANTIATE_TEST_SUITE_P(Backends, SqliteTextIndexTest, ::testing::Values(SearchBackend::kSqlite),
                         test_support::SearchBackendName);
INSTANTIATE_TEST_SUITE_P(Backends, PgTextIndexTest, ::testing::Values(SearchBackend::kPostgres),
                         test_support::SearchBackendName);

}  // namespace
}  // namespace cairn::store
