// The VectorStore contract (store/vector_store.h) on both backends.
#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <string>
#include <vector>

#include "base/clock.h"
#include "store/vector_store.h"
#include "support/search_backends.h"

namespace cairn::store {
namespace {

using test_support::SearchBackend;

constexpr int64_t kStart = 1'795'225'252'000'000;
constexpr int64_t kSecond = 1'000'000;

class VectorStoreTest : public ::testing::TestWithParam<SearchBackend> {
 protected:
  void SetUp() override { ASSERT_TRUE(backends_.Open(GetParam(), clock_)); }

  Store& store() { return backends_.store(); }
  VectorStore& vectors() { return backends_.vectors(); }

  model::Breadcrumb Create(std::string title, const std::string& owner = "default",
                           std::optional<std::string> schema = std::nullopt, std::optional<int64_t> ttl = std::nullopt) {
    model::BreadcrumbDraft d;
    d.title = std::move(title);
    d.schema_name = std::move(schema);
    d.ttl_micros = ttl;
    auto created = store().Create(model::WriteContext{owner, "alice"}, d, "");
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return created.ok() ? created->breadcrumb : model::Breadcrumb{};
  }
  // id → values, of `owner`'s vectors of model "m" that pass `filters`.
  std::map<std::string, std::vector<float>> Scan(const std::string& owner = "default", TextSearchQuery filters = {}) {
    std::map<std::string, std::vector<float>> seen;
    Status status = vectors().ScanVectors(owner, "m", filters, [&](std::string_view id, const float* v, size_t n) {
      seen[std::string(id)] = std::vector<float>(v, v + n);
    });
    EXPECT_TRUE(status.ok()) << status.ToString();
    return seen;
  }

  ManualClock clock_{kStart};
  test_support::SearchBackends backends_{"cairn-vector-store-test"};
};

TEST_P(VectorStoreTest, PutScanAndTheCursorCommitTogether) {
  model::Breadcrumb a = Create("a");
  model::Breadcrumb b = Create("b", "other");
  ASSERT_TRUE(vectors().PutVectors("m", {{"default", a.id, 1, {0.5f, -1.25f}}, {"other", b.id, 1, {1, 2}}}, {},
                                   "search.embed:m", 7).ok());
  EXPECT_EQ(Scan(), (std::map<std::string, std::vector<float>>{{a.id, {0.5f, -1.25f}}}));
  EXPECT_EQ(Scan("other").size(), 1u);
  EXPECT_EQ(backends_.cursors().LoadCursor("search.embed:m").value(), std::optional<int64_t>(7));
  EXPECT_EQ(vectors().CountVectors("m").value(), 2);
  EXPECT_EQ(vectors().CountVectors("n").value(), 0);
}

TEST_P(VectorStoreTest, ModelsAreListedAndDeletedABoundedBatchAtATime) {
  EXPECT_TRUE(vectors().VectorModels().value().empty());
  std::vector<VectorWrite> writes;
  for (int i = 0; i < 5; ++i) writes.push_back({"default", Create("r" + std::to_string(i)).id, 1, {1, 0}});
  model::Breadcrumb other = Create("o", "other");
  ASSERT_TRUE(vectors().PutVectors("old", writes, {}, "", 0).ok());
  ASSERT_TRUE(vectors().PutVectors("old", {{"other", other.id, 1, {0, 1}}}, {}, "", 0).ok());
  ASSERT_TRUE(vectors().PutVectors("new", {writes.front()}, {}, "", 0).ok());
  EXPECT_EQ(vectors().VectorModels().value(), (std::vector<std::string>{"new", "old"}));
  EXPECT_EQ(vectors().DeleteVectors("old", 4).value(), 4);
  EXPECT_EQ(vectors().CountVectors("old").value(), 2);
  EXPECT_EQ(vectors().DeleteVectors("old", 4).value(), 2);
  EXPECT_EQ(vectors().DeleteVectors("old", 4).value(), 0);
  EXPECT_EQ(vectors().CountVectors("new").value(), 1);  // another model's vectors stay
  EXPECT_EQ(vectors().VectorModels().value(), std::vector<std::string>{"new"});
}

TEST_P(VectorStoreTest, AnOlderVersionNeverReplacesANewerOneAndRemovalsDelete) {
  model::Breadcrumb a = Create("a");
  ASSERT_TRUE(vectors().PutVectors("m", {{"default", a.id, 3, {3}}}, {}, "", 0).ok());
  ASSERT_TRUE(vectors().PutVectors("m", {{"default", a.id, 2, {2}}}, {}, "", 0).ok());
  EXPECT_EQ(Scan()[a.id], std::vector<float>{3});
  ASSERT_TRUE(vectors().PutVectors("m", {{"default", a.id, 4, {4}}}, {}, "", 0).ok());
  EXPECT_EQ(Scan()[a.id], std::vector<float>{4});
  ASSERT_TRUE(vectors().PutVectors("m", {}, {{"default", a.id}}, "", 0).ok());
  EXPECT_TRUE(Scan().empty());
}

TEST_P(VectorStoreTest, DeletedExpiredAndFilteredRecordsAreNotScanned) {
  model::Breadcrumb keep = Create("keep", "default", "note.v1");
  model::Breadcrumb gone = Create("gone");
  model::Breadcrumb brief = Create("brief", "default", std::nullopt, kStart + kSecond);
  ASSERT_TRUE(vectors().PutVectors("m", {{"default", keep.id, 1, {1}}, {"default", gone.id, 1, {1}},
                                         {"default", brief.id, 1, {1}}}, {}, "", 0).ok());
  ASSERT_TRUE(store().Delete(model::WriteContext{}, gone.id, std::nullopt).ok());
  EXPECT_EQ(vectors().CountVectors("m").value(), 2);  // the delete took its vector with it
  clock_.Advance(2 * kSecond);
  EXPECT_EQ(Scan().size(), 1u);
  TextSearchQuery tasks;
  tasks.schema_name = "task.v1";
  EXPECT_TRUE(Scan("default", tasks).empty());
  // A vector for a record deleted before the write is not stored.
  ASSERT_TRUE(vectors().PutVectors("m", {{"default", gone.id, 2, {1}}}, {}, "", 0).ok());
  ASSERT_TRUE(store().SweepExpired().ok());
  EXPECT_EQ(vectors().CountVectors("m").value(), 1);
}

// The reader's rights (model/access.h) apply to scans: a private record is its creator's.
TEST_P(VectorStoreTest, ScansApplyTheReadersRights) {
  model::Breadcrumb shared = Create("shared");
  model::BreadcrumbDraft draft;
  draft.title = "hidden";
  draft.visibility = "private";
  auto hidden = store().Create(model::WriteContext{"default", "alice"}, draft, "");
  ASSERT_TRUE(hidden.ok()) << hidden.status().ToString();
  ASSERT_TRUE(vectors().PutVectors("m", {{"default", shared.id, 1, {1}}, {"default", hidden->breadcrumb.id, 1, {2}}},
                                   {}, "", 0).ok());
  TextSearchQuery filters;
  filters.reader = model::AccessScope{"mallory", {"reader"}};
  EXPECT_EQ(Scan("default", filters), (std::map<std::string, std::vector<float>>{{shared.id, {1}}}));
  filters.reader = model::AccessScope{"alice", {"reader"}};
  EXPECT_EQ(Scan("default", filters).size(), 2u);
}

TEST_P(VectorStoreTest, MissingVectorsPagesThroughRecordsWithoutOne) {
  model::Breadcrumb a = Create("a");
  model::Breadcrumb b = Create("b", "other");
  model::Breadcrumb c = Create("c");
  ASSERT_TRUE(vectors().PutVectors("m", {{"other", b.id, 1, {1}}}, {}, "", 0).ok());
  auto first = vectors().MissingVectors("m", 0, 1);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->size(), 1u);
  EXPECT_EQ((*first)[0].breadcrumb_id, a.id);
  auto rest = vectors().MissingVectors("m", (*first)[0].rid, 10);
  ASSERT_TRUE(rest.ok());
  ASSERT_EQ(rest->size(), 1u);
  EXPECT_EQ((*rest)[0].breadcrumb_id, c.id);
  EXPECT_EQ(vectors().MissingVectors("n", 0, 10).value().size(), 3u);
}

TEST_P(VectorStoreTest, TheFingerprintChangesWithEveryWriteAndRemoval) {
  model::Breadcrumb a = Create("a");
  model::Breadcrumb b = Create("b");
  EXPECT_EQ(vectors().FingerprintVectors("default", "m").value(), VectorFingerprint{});
  ASSERT_TRUE(vectors().PutVectors("m", {{"default", a.id, 2, {1}}, {"default", b.id, 3, {1}}}, {}, "", 0).ok());
  EXPECT_EQ(vectors().FingerprintVectors("default", "m").value(), (VectorFingerprint{2, 5, kStart}));
  clock_.Advance(kSecond);
  ASSERT_TRUE(vectors().PutVectors("m", {{"default", a.id, 4, {2}}}, {}, "", 0).ok());
  EXPECT_EQ(vectors().FingerprintVectors("default", "m").value(), (VectorFingerprint{2, 7, kStart + kSecond}));
  ASSERT_TRUE(vectors().PutVectors("m", {}, {{"default", b.id}}, "", 0).ok());
  EXPECT_EQ(vectors().FingerprintVectors("default", "m").value(), (VectorFingerprint{1, 4, kStart + kSecond}));
  EXPECT_EQ(vectors().FingerprintVectors("other", "m").value(), VectorFingerprint{});
  EXPECT_EQ(vectors().FingerprintVectors("default", "n").value(), VectorFingerprint{});
}

// Every float reads back as it was written (extremes, subnormals, infinities), and a scan sees
// every vector of a tenant however many there are.
TEST_P(VectorStoreTest, ValuesReadBackExactlyAndLargeScansSeeEveryVector) {
  const float tiny = 1e-45f;  // the smallest subnormal
  const std::vector<float> extremes = {0.1f, 1.0f / 3, -0.0f, tiny, 3.4028235e38f, -1.17549435e-38f,
                                       std::numeric_limits<float>::infinity()};
  std::vector<WriteOp> ops;
  for (int i = 0; i < 700; ++i) {
    model::BreadcrumbDraft draft;
    draft.title = "r" + std::to_string(i);
    ops.push_back(WriteOp::Create(std::move(draft)));
  }
  auto created = store().Apply(model::WriteContext{"default", "alice"}, ops);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  std::vector<VectorWrite> writes;
  for (size_t i = 0; i < created->size(); ++i) {
    std::vector<float> values = extremes;
    values.push_back(static_cast<float>(i) / 7);
    writes.push_back({"default", (*created)[i].breadcrumb.id, 1, std::move(values)});
  }
  ASSERT_TRUE(vectors().PutVectors("m", writes, {}, "", 0).ok());
  auto seen = Scan();
  ASSERT_EQ(seen.size(), writes.size());
  for (const VectorWrite& w : writes) EXPECT_EQ(seen[w.breadcrumb_id], w.values) << w.breadcrumb_id;
}

INSTANTIATE_TEST_SUITE_P(Backends, VectorStoreTest, test_support::kSearchBackends, test_support::SearchBackendName);

}  // namespace
}  // namespace cairn::store
