// The WebhookStore and CursorStore contracts (store/webhook_store.h, store/cursor_store.h) on
// SqliteStore, in a fresh temporary directory.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <boost/json/parse.hpp>
#include <filesystem>
#include <string>

#include "base/clock.h"
#include "store/sqlite/sqlite_store.h"
#include "support/sqlite_store.h"

namespace cairn::store {
namespace {

namespace json = boost::json;
constexpr int64_t kStart = 1'795'225'252'000'000;

class SqliteWebhookStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(store_.Open(clock_)); }
  void Reopen() { ASSERT_TRUE(store_.Reopen()); }
  void CreateCrumb(const std::string& title) {
    model::BreadcrumbDraft draft;
    draft.title = title;
    draft.context = json::object{};
    ASSERT_TRUE(store_->Create(model::WriteContext{"default", "alice"}, draft, "").ok());
  }
  Webhook MakeHook(const std::string& owner = "default", std::optional<std::string> secret = std::nullopt) {
    WebhookDraft draft{owner, "http://127.0.0.1:9/hook", json::parse(R"({"any_tags":["a"]})"), secret, true};
    auto created = store_->CreateWebhook(draft, 10);
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
  test_support::TempSqliteStore store_{"cairn-webhook-store-test"};
};

TEST_F(SqliteWebhookStoreTest, CreateGetListUpdateDelete) {
  Webhook hook = MakeHook("default", "s3cret");
  EXPECT_FALSE(hook.id.empty());
  EXPECT_EQ(hook.cursor, 0);
  auto got = store_->GetWebhook("default", hook.id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->url, "http://127.0.0.1:9/hook");
  EXPECT_EQ(got->selector, json::parse(R"({"any_tags":["a"]})"));
  EXPECT_EQ(got->secret, std::optional<std::string>("s3cret"));
  EXPECT_TRUE(got->active);
  EXPECT_EQ(store_->GetWebhook("other", hook.id).status().code(), StatusCode::kNotFound);

  Webhook second = MakeHook("other");
  EXPECT_EQ(store_->ListWebhooks("default")->size(), 1u);
  EXPECT_EQ(store_->ListAllWebhooks()->size(), 2u);

  WebhookPatch patch;
  patch.url = "https://example.com/x";
  patch.secret = std::optional<std::string>();  // clear
  auto updated = store_->UpdateWebhook("default", hook.id, patch);
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  EXPECT_EQ(updated->url, "https://example.com/x");
  EXPECT_FALSE(updated->secret.has_value());
  EXPECT_GT(updated->updated_at, hook.updated_at);
  EXPECT_EQ(store_->UpdateWebhook("other", hook.id, patch).status().code(), StatusCode::kNotFound);

  EXPECT_EQ(store_->DeleteWebhook("other", hook.id).code(), StatusCode::kNotFound);
  EXPECT_TRUE(store_->DeleteWebhook("default", hook.id).ok());
  EXPECT_EQ(store_->GetWebhook("default", hook.id).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->DeleteWebhook("default", hook.id).code(), StatusCode::kNotFound);
  EXPECT_TRUE(store_->GetWebhook("other", second.id).ok());
}

TEST_F(SqliteWebhookStoreTest, PerOwnerLimit) {
  WebhookDraft draft{"default", "http://h/x", json::object{}, std::nullopt, true};
  ASSERT_TRUE(store_->CreateWebhook(draft, 2).ok());
  ASSERT_TRUE(store_->CreateWebhook(draft, 2).ok());
  EXPECT_EQ(store_->CreateWebhook(draft, 2).status().code(), StatusCode::kConflict);
  draft.owner_id = "other";
  EXPECT_TRUE(store_->CreateWebhook(draft, 2).ok());
}

TEST_F(SqliteWebhookStoreTest, CursorStartsAtEndOfLogAndOnlyMovesForwardAndSurvivesReopen) {
  CreateCrumb("a");
  CreateCrumb("b");
  Webhook hook = MakeHook();
  EXPECT_EQ(hook.cursor, 2);
  CreateCrumb("c");
  EXPECT_TRUE(store_->AdvanceWebhookCursor(hook.id, 3).ok());
  EXPECT_TRUE(store_->AdvanceWebhookCursor(hook.id, 1).ok());  // backwards: ignored
  EXPECT_EQ(store_->GetWebhook("default", hook.id)->cursor, 3);
  Reopen();
  EXPECT_EQ(store_->GetWebhook("default", hook.id)->cursor, 3);
  EXPECT_EQ(store_->AdvanceWebhookCursor("no-such-hook", 4).code(), StatusCode::kNotFound);
}

TEST_F(SqliteWebhookStoreTest, ReactivationSkipsToEndOfLog) {
  Webhook hook = MakeHook();
  WebhookPatch off;
  off.active = false;
  ASSERT_TRUE(store_->UpdateWebhook("default", hook.id, off).ok());
  CreateCrumb("while inactive");
  CreateCrumb("also while inactive");
  WebhookPatch on;
  on.active = true;
  auto updated = store_->UpdateWebhook("default", hook.id, on);
  ASSERT_TRUE(updated.ok());
  EXPECT_EQ(updated->cursor, 2);
}

TEST_F(SqliteWebhookStoreTest, DeadLettersAdvanceCursorListRetryDelete) {
  CreateCrumb("a");
  Webhook hook = MakeHook();
  Webhook other_owner = MakeHook("other");
  CreateCrumb("b");
  CreateCrumb("c");
  auto first = store_->DeadLetterAndAdvance(Letter(hook, 2));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(store_->GetWebhook("default", hook.id)->cursor, 2);
  auto second = store_->DeadLetterAndAdvance(Letter(hook, 3));
  ASSERT_TRUE(second.ok());
  ASSERT_TRUE(store_->DeadLetterAndAdvance(Letter(other_owner, 3)).ok());

  auto page = store_->ListDeadLetters("default", std::nullopt, "", 1);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->items.size(), 1u);
  EXPECT_EQ(page->items[0].id, first->id);
  EXPECT_EQ(page->items[0].payload, R"({"seq":2})");
  EXPECT_EQ(page->items[0].last_status, std::optional<int64_t>(500));
  ASSERT_TRUE(page->next_cursor.has_value());
  auto rest = store_->ListDeadLetters("default", std::nullopt, *page->next_cursor, 10);
  ASSERT_EQ(rest->items.size(), 1u);
  EXPECT_EQ(rest->items[0].id, second->id);
  EXPECT_FALSE(rest->next_cursor.has_value());
  EXPECT_EQ(store_->ListDeadLetters("default", hook.id, "", 10)->items.size(), 2u);
  EXPECT_EQ(store_->ListDeadLetters("default", other_owner.id, "", 10)->items.size(), 0u);
  EXPECT_EQ(store_->ListDeadLetters("other", std::nullopt, "", 10)->items.size(), 1u);

  auto retried = store_->RecordDeadLetterAttempt("default", first->id, std::nullopt, "connection refused");
  ASSERT_TRUE(retried.ok());
  EXPECT_EQ(retried->attempts, 7);
  EXPECT_FALSE(retried->last_status.has_value());
  EXPECT_EQ(store_->GetDeadLetter("default", first->id)->last_error, "connection refused");
  EXPECT_EQ(store_->GetDeadLetter("other", first->id).status().code(), StatusCode::kNotFound);

  EXPECT_EQ(store_->DeleteDeadLetter("other", first->id).code(), StatusCode::kNotFound);
  EXPECT_TRUE(store_->DeleteDeadLetter("default", first->id).ok());
  EXPECT_EQ(store_->GetDeadLetter("default", first->id).status().code(), StatusCode::kNotFound);

  // Deleting the webhook takes its dead letters with it; a dead letter for it then fails.
  ASSERT_TRUE(store_->DeleteWebhook("default", hook.id).ok());
  EXPECT_EQ(store_->GetDeadLetter("default", second->id).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->DeadLetterAndAdvance(Letter(hook, 3)).status().code(), StatusCode::kNotFound);
}

TEST_F(SqliteWebhookStoreTest, ConsumerCursorsPersistWithoutEvents) {
  EXPECT_FALSE(store_->LoadCursor("tool:echo").value().has_value());
  ASSERT_TRUE(store_->SaveCursor("tool:echo", 7).ok());
  ASSERT_TRUE(store_->SaveCursor("tool:sleep", 3).ok());
  ASSERT_TRUE(store_->SaveCursor("tool:echo", 9).ok());
  EXPECT_EQ(store_->Stats().value().last_event_seq, 0);  // cursor writes are not events
  Reopen();
  EXPECT_EQ(store_->LoadCursor("tool:echo").value(), std::optional<int64_t>(9));
  EXPECT_EQ(store_->LoadCursor("tool:sleep").value(), std::optional<int64_t>(3));
  ASSERT_TRUE(store_->DeleteCursor("tool:echo").ok());
  ASSERT_TRUE(store_->DeleteCursor("tool:none").ok());
  EXPECT_FALSE(store_->LoadCursor("tool:echo").value().has_value());
}

}  // namespace
}  // namespace cairn::store
