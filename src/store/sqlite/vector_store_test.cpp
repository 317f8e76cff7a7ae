// SqliteStore as a VectorStore (store/vector_store.h).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "base/clock.h"
#include "store/vector_store.h"
#include "support/sqlite_store.h"

namespace cairn::store::sqlite {
namespace {

constexpr int64_t kStart = 1'795'225'252'000'000;
constexpr int64_t kSecond = 1'000'000;

class VectorStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(store_.Open(clock_)); }

  model::Breadcrumb Create(std::string title, const std::string& owner = "default",
                           std::optional<std::string> schema = std::nullopt, std::optional<int64_t> ttl = std::nullopt) {
    model::BreadcrumbDraft d;
    d.title = std::move(title);
    d.schema_name = std::move(schema);
    d.ttl_micros = ttl;
    auto created = store_->Create(model::WriteContext{owner, "alice"}, d, "");
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return created.ok() ? created->breadcrumb : model::Breadcrumb{};
  }
  // id → values, of `owner`'s vectors of model "m" that pass `filters`.
  std::map<std::string, std::vector<float>> Scan(const std::string& owner = "default", TextSearchQuery filters = {}) {
    std::map<std::string, std::vector<float>> seen;
    Status status = store_->ScanVectors(owner, "m", filters, [&](std::string_view id, const float* v, size_t n) {
      seen[std::string(id)] = std::vector<float>(v, v + n);
    });
    EXPECT_TRUE(status.ok()) << status.ToString();
    return seen;
  }

  ManualClock clock_{kStart};
  test_support::TempSqliteStore store_{"cairn-vector-store-test"};
};

TEST_F(VectorStoreTest, PutScanAndTheCursorCommitTogether) {
  model::Breadcrumb a = Create("a");
  model::Breadcrumb b = Create("b", "other");
  ASSERT_TRUE(store_->PutVectors("m", {{"default", a.id, 1, {0.5f, -1.25f}}, {"other", b.id, 1, {1, 2}}}, {},
                                 "search.embed:m", 7).ok());
  EXPECT_EQ(Scan(), (std::map<std::string, std::vector<float>>{{a.id, {0.5f, -1.25f}}}));
  EXPECT_EQ(Scan("other").size(), 1u);
  EXPECT_EQ(store_->LoadCursor("search.embed:m").value(), std::optional<int64_t>(7));
  EXPECT_EQ(store_->CountVectors("m").value(), 2);
  EXPECT_EQ(store_->CountVectors("n").value(), 0);
}

TEST_F(VectorStoreTest, ModelsAreListedAndDeletedABoundedBatchAtATime) {
  EXPECT_TRUE(store_->VectorModels().value().empty());
  std::vector<VectorWrite> writes;
  for (int i = 0; i < 5; ++i) writes.push_back({"default", Create("r" + std::to_string(i)).id, 1, {1, 0}});
  model::Breadcrumb other = Create("o", "other");
  ASSERT_TRUE(store_->PutVectors("old", writes, {}, "", 0).ok());
  ASSERT_TRUE(store_->PutVectors("old", {{"other", other.id, 1, {0, 1}}}, {}, "", 0).ok());
  ASSERT_TRUE(store_->PutVectors("new", {writes.front()}, {}, "", 0).ok());
  EXPECT_EQ(store_->VectorModels().value(), (std::vector<std::string>{"new", "old"}));
  EXPECT_EQ(store_->DeleteVectors("old", 4).value(), 4);
  EXPECT_EQ(store_->CountVectors("old").value(), 2);
  EXPECT_EQ(store_->DeleteVectors("old", 4).value(), 2);
  EXPECT_EQ(store_->DeleteVectors("old", 4).value(), 0);
  EXPECT_EQ(store_->CountVectors("new").value(), 1);  // another model's vectors stay
  EXPECT_EQ(store_->VectorModels().value(), std::vector<std::string>{"new"});
}

TEST_F(VectorStoreTest, AnOlderVersionNeverReplacesANewerOneAndRemovalsDelete) {
  model::Breadcrumb a = Create("a");
  ASSERT_TRUE(store_->PutVectors("m", {{"default", a.id, 3, {3}}}, {}, "", 0).ok());
  ASSERT_TRUE(store_->PutVectors("m", {{"default", a.id, 2, {2}}}, {}, "", 0).ok());
  EXPECT_EQ(Scan()[a.id], std::vector<float>{3});
  ASSERT_TRUE(store_->PutVectors("m", {{"default", a.id, 4, {4}}}, {}, "", 0).ok());
  EXPECT_EQ(Scan()[a.id], std::vector<float>{4});
  ASSERT_TRUE(store_->PutVectors("m", {}, {{"default", a.id}}, "", 0).ok());
  EXPECT_TRUE(Scan().empty());
}

TEST_F(VectorStoreTest, DeletedExpiredAndFilteredRecordsAreNotScanned) {
  model::Breadcrumb keep = Create("keep", "default", "note.v1");
  model::Breadcrumb gone = Create("gone");
  model::Breadcrumb brief = Create("brief", "default", std::nullopt, kStart + kSecond);
  ASSERT_TRUE(store_->PutVectors("m", {{"default", keep.id, 1, {1}}, {"default", gone.id, 1, {1}},
                                       {"default", brief.id, 1, {1}}}, {}, "", 0).ok());
  ASSERT_TRUE(store_->Delete(model::WriteContext{}, gone.id, std::nullopt).ok());
  EXPECT_EQ(store_->CountVectors("m").value(), 2);  // the delete took its vector with it
  clock_.Advance(2 * kSecond);
  EXPECT_EQ(Scan().size(), 1u);
  TextSearchQuery tasks;
  tasks.schema_name = "task.v1";
  EXPECT_TRUE(Scan("default", tasks).empty());
  // A vector for a record deleted before the write is not stored.
  ASSERT_TRUE(store_->PutVectors("m", {{"default", gone.id, 2, {1}}}, {}, "", 0).ok());
  ASSERT_TRUE(store_->SweepExpired().ok());
  EXPECT_EQ(store_->CountVectors("m").value(), 1);
}

TEST_F(VectorStoreTest, MissingVectorsPagesThroughRecordsWithoutOne) {
  model::Breadcrumb a = Create("a");
  model::Breadcrumb b = Create("b", "other");
  model::Breadcrumb c = Create("c");
  ASSERT_TRUE(store_->PutVectors("m", {{"other", b.id, 1, {1}}}, {}, "", 0).ok());
  auto first = store_->MissingVectors("m", 0, 1);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->size(), 1u);
  EXPECT_EQ((*first)[0].breadcrumb_id, a.id);
  auto rest = store_->MissingVectors("m", (*first)[0].rid, 10);
  ASSERT_TRUE(rest.ok());
  ASSERT_EQ(rest->size(), 1u);
  EXPECT_EQ((*rest)[0].breadcrumb_id, c.id);
  EXPECT_EQ(store_->MissingVectors("n", 0, 10).value().size(), 3u);
}

}  // namespace
}  // namespace cairn::store::sqlite
