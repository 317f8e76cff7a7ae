// The WebhookStore and CursorStore contracts (store/webhook_store.h, store/cursor_store.h), run
// against SqliteStore in a fresh temporary directory and against PgWebhookStore beside PgStore (the
// records whose events move cursors) on a fresh database of the test process's PostgreSQL server
// (support/postgres_server.h). What only one backend does (rows an older version wrote) is tested
// on that backend alone.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <boost/json/parse.hpp>
#include <memory>
#include <string>

#include "base/clock.h"
#include "store/postgres/pg_store.h"
#include "store/postgres/pg_webhooks.h"
#include "store/sqlite/sqlite_store.h"
#include "support/pg_database.h"
#include "support/sqlite_store.h"

namespace cairn::store {
namespace {

namespace json = boost::json;
constexpr int64_t kStart = 1'795'225'252'000'000;

enum class Backend { kSqlite, kPostgres };

class WebhookStoreTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::kSqlite) {
      ASSERT_TRUE(sqlite_.Open(clock_));
      return;
    }
    auto db = test_support::OpenFreshPgDatabase(nullptr, &pg_uri_);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    OpenPostgres(*db);
  }
  // Closes the store and opens it again on the same data (a restart).
  void Reopen() {
    if (GetParam() == Backend::kSqlite) {
      ASSERT_TRUE(sqlite_.Reopen());
      return;
    }
    pg_hooks_.reset();
    pg_store_->Close();
    pg_store_.reset();
    pg_db_.reset();
    auto db = test_support::OpenPgDatabase(pg_uri_);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    OpenPostgres(*db);
  }
  void OpenPostgres(std::shared_ptr<postgres::PgDatabase> db) {
    pg_db_ = db;
    pg_hooks_ = std::make_unique<postgres::PgWebhookStore>(db, clock_);
    pg_store_ = std::make_unique<postgres::PgStore>(std::move(db), postgres::PgStoreOptions{}, clock_);
  }

  WebhookStore& hooks() { return sqlite_ ? static_cast<WebhookStore&>(*sqlite_) : *pg_hooks_; }
  Store& records() { return sqlite_ ? static_cast<Store&>(*sqlite_) : *pg_store_; }
  CursorStore& cursors() { return sqlite_ ? static_cast<CursorStore&>(*sqlite_) : *pg_store_; }

  void CreateCrumb(const std::string& title) {
    model::BreadcrumbDraft draft;
    draft.title = title;
    draft.context = json::object{};
    auto created = records().Create(model::WriteContext{"default", "alice"}, draft, "");
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }
  Webhook MakeHook(const std::string& owner = "default", std::optional<std::string> secret = std::nullopt) {
    WebhookDraft draft{owner, "http://127.0.0.1:9/hook", json::parse(R"({"any_tags":["a"]})"), secret, true};
    auto created = hooks().CreateWebhook(draft, 10);
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return created.ok() ? *created : Webhook{};
  }
  DeadLetter Letter(const Webhook& hook, int64_t seq) {
    DeadLetter d;
    d.webhook_id = hook.id;
    d.owner_id = hook.owner_id;
    d.event_seq = seq;
    d.payload = R"({"seq":)" + std::to_string(seq) + "}";
    d.attempts = 6;
    d.last_status = 500;
    d.last_error = "HTTP 500";
    return d;
  }

  ManualClock clock_{kStart};
  test_support::TempSqliteStore sqlite_{"cairn-webhook-store-test"};  // opened for Backend::kSqlite
  std::string pg_uri_;
  std::shared_ptr<postgres::PgDatabase> pg_db_;
  std::unique_ptr<postgres::PgStore> pg_store_;
  std::unique_ptr<postgres::PgWebhookStore> pg_hooks_;
};

TEST_P(WebhookStoreTest, CreateGetListUpdateDelete) {
  Webhook hook = MakeHook("default", "s3cret");
  EXPECT_FALSE(hook.id.empty());
  EXPECT_EQ(hook.cursor, 0);
  auto got = hooks().GetWebhook("default", hook.id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->url, "http://127.0.0.1:9/hook");
  EXPECT_EQ(got->selector, json::parse(R"({"any_tags":["a"]})"));
  EXPECT_EQ(got->secret, std::optional<std::string>("s3cret"));
  EXPECT_TRUE(got->active);
  EXPECT_EQ(hooks().GetWebhook("other", hook.id).status().code(), StatusCode::kNotFound);

  Webhook second = MakeHook("other");
  EXPECT_EQ(hooks().ListWebhooks("default")->size(), 1u);
  EXPECT_EQ(hooks().ListAllWebhooks()->size(), 2u);

  WebhookPatch patch;
  patch.url = "https://example.com/x";
  patch.secret = std::optional<std::string>();  // clear
  auto updated = hooks().UpdateWebhook("default", hook.id, patch);
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  EXPECT_EQ(updated->url, "https://example.com/x");
  EXPECT_FALSE(updated->secret.has_value());
  EXPECT_GT(updated->updated_at, hook.updated_at);
  EXPECT_EQ(hooks().UpdateWebhook("other", hook.id, patch).status().code(), StatusCode::kNotFound);

  EXPECT_EQ(hooks().DeleteWebhook("other", hook.id).code(), StatusCode::kNotFound);
  EXPECT_TRUE(hooks().DeleteWebhook("default", hook.id).ok());
  EXPECT_EQ(hooks().GetWebhook("default", hook.id).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(hooks().DeleteWebhook("default", hook.id).code(), StatusCode::kNotFound);
  EXPECT_TRUE(hooks().GetWebhook("other", second.id).ok());
}

TEST_P(WebhookStoreTest, EveryFieldReadsBackAsWritten) {
  WebhookDraft draft{"default", "http://h/x", json::parse(R"({"schema_name":"task.v1"})"), std::nullopt, false};
  draft.created_by = "user:ada";
  draft.secret_name = "signing";
  draft.headers = json::parse(R"({"X-Team":"ops","Authorization":{"secret":"token"}})");
  auto created = hooks().CreateWebhook(draft, 10);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  auto got = hooks().GetWebhook("default", created->id);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->owner_id, "default");
  EXPECT_EQ(got->selector, draft.selector);
  EXPECT_FALSE(got->secret.has_value());
  EXPECT_EQ(got->secret_name, std::optional<std::string>("signing"));
  EXPECT_EQ(got->headers, draft.headers);
  EXPECT_FALSE(got->active);
  EXPECT_EQ(got->created_by, "user:ada");
  EXPECT_EQ(got->created_at, kStart);
  EXPECT_EQ(got->updated_at, kStart);

  WebhookPatch patch;
  patch.selector = json::parse(R"({"any_tags":["b"]})");
  patch.secret_name = std::optional<std::string>();  // clear
  patch.secret = "s3cret";
  patch.headers = json::object{};
  clock_.Advance(5);
  ASSERT_TRUE(hooks().UpdateWebhook("default", created->id, patch).ok());
  got = hooks().GetWebhook("default", created->id);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->selector, *patch.selector);
  EXPECT_FALSE(got->secret_name.has_value());
  EXPECT_EQ(got->secret, std::optional<std::string>("s3cret"));
  EXPECT_EQ(got->headers, json::value(json::object{}));
  EXPECT_FALSE(got->active);  // not in the patch
  EXPECT_EQ(got->updated_at, kStart + 5);
}

TEST_P(WebhookStoreTest, PerOwnerLimit) {
  WebhookDraft draft{"default", "http://h/x", json::object{}, std::nullopt, true};
  ASSERT_TRUE(hooks().CreateWebhook(draft, 2).ok());
  ASSERT_TRUE(hooks().CreateWebhook(draft, 2).ok());
  EXPECT_EQ(hooks().CreateWebhook(draft, 2).status().code(), StatusCode::kConflict);
  draft.owner_id = "other";
  EXPECT_TRUE(hooks().CreateWebhook(draft, 2).ok());
}

TEST_P(WebhookStoreTest, CursorStartsAtEndOfLogAndOnlyMovesForwardAndSurvivesReopen) {
  CreateCrumb("a");
  CreateCrumb("b");
  Webhook hook = MakeHook();
  EXPECT_EQ(hook.cursor, 2);
  CreateCrumb("c");
  EXPECT_TRUE(hooks().AdvanceWebhookCursor(hook.id, 3).ok());
  EXPECT_TRUE(hooks().AdvanceWebhookCursor(hook.id, 1).ok());  // backwards: ignored
  EXPECT_EQ(hooks().GetWebhook("default", hook.id)->cursor, 3);
  Reopen();
  EXPECT_EQ(hooks().GetWebhook("default", hook.id)->cursor, 3);
  EXPECT_EQ(hooks().AdvanceWebhookCursor("no-such-hook", 4).code(), StatusCode::kNotFound);
}

TEST_P(WebhookStoreTest, ReactivationSkipsToEndOfLog) {
  Webhook hook = MakeHook();
  WebhookPatch off;
  off.active = false;
  ASSERT_TRUE(hooks().UpdateWebhook("default", hook.id, off).ok());
  EXPECT_FALSE(hooks().GetWebhook("default", hook.id)->active);
  CreateCrumb("while inactive");
  CreateCrumb("also while inactive");
  WebhookPatch on;
  on.active = true;
  auto updated = hooks().UpdateWebhook("default", hook.id, on);
  ASSERT_TRUE(updated.ok());
  EXPECT_EQ(updated->cursor, 2);
  EXPECT_EQ(hooks().GetWebhook("default", hook.id)->cursor, 2);
}

TEST_P(WebhookStoreTest, DeadLettersAdvanceCursorListRetryDelete) {
  CreateCrumb("a");
  Webhook hook = MakeHook();
  Webhook other_owner = MakeHook("other");
  CreateCrumb("b");
  CreateCrumb("c");
  auto first = hooks().DeadLetterAndAdvance(Letter(hook, 2));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(hooks().GetWebhook("default", hook.id)->cursor, 2);
  auto second = hooks().DeadLetterAndAdvance(Letter(hook, 3));
  ASSERT_TRUE(second.ok());
  ASSERT_TRUE(hooks().DeadLetterAndAdvance(Letter(other_owner, 3)).ok());

  auto page = hooks().ListDeadLetters("default", std::nullopt, "", 1);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->items.size(), 1u);
  EXPECT_EQ(page->items[0].id, first->id);
  EXPECT_EQ(page->items[0].payload, R"({"seq":2})");
  EXPECT_EQ(page->items[0].last_status, std::optional<int64_t>(500));
  ASSERT_TRUE(page->next_cursor.has_value());
  auto rest = hooks().ListDeadLetters("default", std::nullopt, *page->next_cursor, 10);
  ASSERT_EQ(rest->items.size(), 1u);
  EXPECT_EQ(rest->items[0].id, second->id);
  EXPECT_FALSE(rest->next_cursor.has_value());
  EXPECT_EQ(hooks().ListDeadLetters("default", hook.id, "", 10)->items.size(), 2u);
  EXPECT_EQ(hooks().ListDeadLetters("default", other_owner.id, "", 10)->items.size(), 0u);
  EXPECT_EQ(hooks().ListDeadLetters("other", std::nullopt, "", 10)->items.size(), 1u);

  auto retried = hooks().RecordDeadLetterAttempt("default", first->id, std::nullopt, "connection refused");
  ASSERT_TRUE(retried.ok());
  EXPECT_EQ(retried->attempts, 7);
  EXPECT_FALSE(retried->last_status.has_value());
  EXPECT_EQ(hooks().GetDeadLetter("default", first->id)->last_error, "connection refused");
  EXPECT_FALSE(hooks().GetDeadLetter("default", first->id)->last_status.has_value());
  EXPECT_EQ(hooks().GetDeadLetter("other", first->id).status().code(), StatusCode::kNotFound);

  EXPECT_EQ(hooks().DeleteDeadLetter("other", first->id).code(), StatusCode::kNotFound);
  EXPECT_TRUE(hooks().DeleteDeadLetter("default", first->id).ok());
  EXPECT_EQ(hooks().GetDeadLetter("default", first->id).status().code(), StatusCode::kNotFound);

  // Deleting the webhook takes its dead letters with it; a dead letter for it then fails.
  ASSERT_TRUE(hooks().DeleteWebhook("default", hook.id).ok());
  EXPECT_EQ(hooks().GetDeadLetter("default", second->id).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(hooks().DeadLetterAndAdvance(Letter(hook, 3)).status().code(), StatusCode::kNotFound);
}

TEST_P(WebhookStoreTest, ConsumerCursorsPersistWithoutEvents) {
  EXPECT_FALSE(cursors().LoadCursor("tool:echo").value().has_value());
  ASSERT_TRUE(cursors().SaveCursor("tool:echo", 7).ok());
  ASSERT_TRUE(cursors().SaveCursor("tool:sleep", 3).ok());
  ASSERT_TRUE(cursors().SaveCursor("tool:echo", 9).ok());
  EXPECT_EQ(records().Stats().value().last_event_seq, 0);  // cursor writes are not events
  Reopen();
  EXPECT_EQ(cursors().LoadCursor("tool:echo").value(), std::optional<int64_t>(9));
  EXPECT_EQ(cursors().LoadCursor("tool:sleep").value(), std::optional<int64_t>(3));
  ASSERT_TRUE(cursors().DeleteCursor("tool:echo").ok());
  ASSERT_TRUE(cursors().DeleteCursor("tool:none").ok());
  EXPECT_FALSE(cursors().LoadCursor("tool:echo").value().has_value());
}

std::string BackendName(const ::testing::TestParamInfo<Backend>& info) {
  return info.param == Backend::kSqlite ? "Sqlite" : "Postgres";
}

INSTANTIATE_TEST_SUITE_P(Backends, WebhookStoreTest, ::testing::Values(Backend::kSqlite, Backend::kPostgres),
                         BackendName);

// A SQLite database may hold rows an older version wrote that this one cannot read: the lists
// skip them (the deliverer goes on with the other webhooks), a read of the one row fails.
class SqliteWebhookStoreTest : public WebhookStoreTest {};

TEST_P(SqliteWebhookStoreTest, AnUnreadableWebhookIsSkippedByListsAndAnErrorToRead) {
  Webhook unreadable = MakeHook();
  Webhook readable = MakeHook();
  sqlite_.Close();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((sqlite_.dir() + "/cairn.db").c_str(), &db), SQLITE_OK);
  std::string sql = "UPDATE webhooks SET selector = '{\"n\":Infinity}' WHERE id = '" + unreadable.id + "'";
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  Reopen();

  auto listed = hooks().ListWebhooks("default");
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].id, readable.id);
  EXPECT_EQ(hooks().ListAllWebhooks()->size(), 1u);
  EXPECT_EQ(hooks().GetWebhook("default", unreadable.id).status().code(), StatusCode::kInternal);
  EXPECT_EQ(hooks().UpdateWebhook("default", unreadable.id, WebhookPatch{}).status().code(), StatusCode::kInternal);
}

INSTANTIATE_TEST_SUITE_P(Sqlite, SqliteWebhookStoreTest, ::testing::Values(Backend::kSqlite), BackendName);

// A PostgreSQL database holds only rows this version wrote: one that does not decode is an error,
// for the lists too, not a row to skip.
class PostgresWebhookStoreTest : public WebhookStoreTest {};

TEST_P(PostgresWebhookStoreTest, AnUnreadableWebhookIsAnError) {
  Webhook unreadable = MakeHook();
  ASSERT_TRUE(pg_db_->Write([&](postgres::PgConnection& conn) {
                      postgres::PgParams p;
                      return conn.Run("UPDATE webhooks SET selector = '{\"n\":Infinity}' WHERE id = " +
                                          p.Add(unreadable.id), p);
                    }).ok());
  EXPECT_EQ(hooks().GetWebhook("default", unreadable.id).status().code(), StatusCode::kInternal);
  EXPECT_EQ(hooks().ListWebhooks("default").status().code(), StatusCode::kInternal);
  EXPECT_EQ(hooks().ListAllWebhooks().status().code(), StatusCode::kInternal);
}

INSTANTIATE_TEST_SUITE_P(Postgres, PostgresWebhookStoreTest, ::testing::Values(Backend::kPostgres), BackendName);

}  // namespace
}  // namespace cairn::store
