// HnswIndex on its own, and HnswVectorSearch over a real SqliteStore fed by the embedding worker.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include <boost/json/parse.hpp>

#include "search/embedding_worker.h"
#include "search/hashing_embedder.h"
#include "search/hnsw_index.h"
#include "search/hnsw_vector_search.h"
#include "search/search_test_helpers.h"
#include "support/sqlite_store.h"
#include "support/temp_dir.h"

namespace cairn::search {
namespace {

constexpr auto kDeadline = std::chrono::seconds(20);

std::vector<std::vector<float>> RandomVectors(size_t count, size_t dimension, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0, 1);
  std::vector<std::vector<float>> out(count, std::vector<float>(dimension));
  for (auto& v : out) {
    for (float& x : v) x = normal(rng);
  }
  return out;
}

std::vector<uint64_t> BruteForce(const std::vector<std::vector<float>>& vectors, const std::vector<float>& query,
                                 size_t k) {
  std::vector<std::pair<double, uint64_t>> scored;
  for (size_t i = 0; i < vectors.size(); ++i) {
    scored.emplace_back(-Cosine(vectors[i].data(), query.data(), query.size()), i);
  }
  std::partial_sort(scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(k), scored.end());
  std::vector<uint64_t> labels;
  for (size_t i = 0; i < k; ++i) labels.push_back(scored[i].second);
  return labels;
}

TEST(HnswIndexTest, FindsWhatBruteForceFinds) {
  const auto vectors = RandomVectors(1000, 16, 1);
  HnswIndex index(16, HnswOptions{});
  for (size_t i = 0; i < vectors.size(); ++i) ASSERT_TRUE(index.Add(i, vectors[i].data()).ok());
  EXPECT_EQ(index.size(), 1000u);
  size_t found = 0;
  const auto queries = RandomVectors(50, 16, 2);
  for (const auto& q : queries) {
    auto exact = BruteForce(vectors, q, 10);
    auto hits = index.Search(q.data(), 10);
    ASSERT_EQ(hits.size(), 10u);
    EXPECT_GE(hits[0].second, hits[9].second);  // best first
    std::set<uint64_t> truth(exact.begin(), exact.end());
    for (const auto& hit : hits) found += truth.count(hit.first);
  }
  EXPECT_GE(static_cast<double>(found) / (50 * 10), 0.9);
}

TEST(HnswIndexTest, RemoveReplaceAndSaveLoad) {
  const auto vectors = RandomVectors(300, 8, 3);
  HnswIndex index(8, HnswOptions{});
  for (size_t i = 0; i < vectors.size(); ++i) ASSERT_TRUE(index.Add(i, vectors[i].data()).ok());
  EXPECT_EQ(index.Search(vectors[7].data(), 1).at(0).first, 7u);
  EXPECT_NEAR(index.Search(vectors[7].data(), 1).at(0).second, 1.0, 1e-4);
  index.Remove(7);
  EXPECT_EQ(index.size(), 299u);
  EXPECT_NE(index.Search(vectors[7].data(), 1).at(0).first, 7u);
  ASSERT_TRUE(index.Add(7, vectors[8].data()).ok());  // back, with label 8's direction
  EXPECT_EQ(index.size(), 300u);
  std::vector<float> zeros(8, 0.0f);
  EXPECT_FALSE(index.Add(900, zeros.data()).ok());

  test_support::TempDir dir;
  const std::string path = dir.path() + "/index.hnsw";
  ASSERT_TRUE(index.Save(path).ok());
  auto loaded = HnswIndex::Load(path, 8, HnswOptions{});
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ((*loaded)->size(), 300u);
  for (size_t i : {0u, 50u, 299u}) {
    EXPECT_EQ((*loaded)->Search(vectors[i].data(), 3), index.Search(vectors[i].data(), 3));
  }
}

class HnswVectorSearchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(store_.Open(clock_));
    ASSERT_TRUE(test_support::StartLocalBus(*store_, bus_));
  }
  void TearDown() override {
    StopWorker();
    if (bus_) bus_->Stop();
  }
  HnswSearchOptions Options() {
    HnswSearchOptions options;
    options.directory = dir_.path() + "/hnsw";
    options.min_vectors = 1;
    return options;
  }
  void StartWorker(HnswVectorSearch& index) {
    EmbeddingWorkerOptions options;
    options.on_stored = [&index](const auto& writes, const auto& removals) { index.OnStored(writes, removals); };
    worker_ = std::make_unique<EmbeddingWorker>(*store_, *store_, *store_, *bus_, embedder_, options, nullptr);
    worker_->Start();
  }
  void StopWorker() {
    if (worker_) worker_->Stop();
    worker_.reset();
  }
  model::Breadcrumb Create(std::string title, std::optional<std::string> schema = std::nullopt) {
    model::BreadcrumbDraft d;
    d.title = std::move(title);
    d.schema_name = std::move(schema);
    auto created = store_->Create(model::WriteContext{}, d, "");
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return created.ok() ? created->breadcrumb : model::Breadcrumb{};
  }
  void CatchUp() { ASSERT_TRUE(test_helpers::CaughtUp(*store_, *worker_, kDeadline)); }
  std::vector<std::string> Nearest(VectorSearch& search, const std::string& text, store::TextSearchQuery query = {}) {
    return test_helpers::NearestTitles(search, text, std::move(query), 3);
  }
  void CreateCorpus() {
    for (const char* title : {"ferry timetable lisbon", "harbour cranes rotterdam", "mountain hut booking",
                              "tram line lisbon", "cheese market gouda", "ski pass prices"}) {
      Create(title, "note.v1");
    }
    Create("ferry tickets", "other.v1");
  }

  test_support::TempDir dir_;
  ManualClock clock_{1'795'225'252'000'000};
  test_support::TempSqliteStore store_;
  std::unique_ptr<bus::LocalEventBus> bus_;
  HashingEmbedder embedder_;
  std::unique_ptr<EmbeddingWorker> worker_;
};

TEST_F(HnswVectorSearchTest, AgreesWithTheExactScanAndFollowsTheWorker) {
  HnswVectorSearch index(*store_, *store_, embedder_, Options());
  ExactVectorSearch exact(*store_, *store_, embedder_);
  StartWorker(index);
  CreateCorpus();
  CatchUp();
  EXPECT_EQ(Nearest(index, "lisbon ferry"), Nearest(exact, "lisbon ferry"));
  EXPECT_EQ(index.IndexStatus().builds, 1);
  EXPECT_EQ(index.IndexStatus().indexed_vectors, 7u);
  // Written after the build: reaches the index through the worker.
  Create("rotterdam harbour tour", "note.v1");
  CatchUp();
  EXPECT_EQ(Nearest(index, "rotterdam harbour").at(0), "rotterdam harbour tour");
  EXPECT_EQ(index.IndexStatus().builds, 1);
  EXPECT_EQ(index.IndexStatus().indexed_vectors, 8u);
}

TEST_F(HnswVectorSearchTest, FiltersApplyAndDeletedRecordsAreNotFound) {
  HnswVectorSearch index(*store_, *store_, embedder_, Options());
  StartWorker(index);
  CreateCorpus();
  auto doomed = Create("ferry ferry ferry", "note.v1");
  CatchUp();
  store::TextSearchQuery notes;
  notes.schema_name = "note.v1";
  auto found = Nearest(index, "ferry", notes);
  ASSERT_FALSE(found.empty());
  EXPECT_EQ(found.at(0), "ferry ferry ferry");
  for (const auto& title : found) EXPECT_NE(title, "ferry tickets");  // other.v1
  ASSERT_TRUE(store_->Delete(model::WriteContext{}, doomed.id, std::nullopt).ok());
  found = Nearest(index, "ferry", notes);
  for (const auto& title : found) EXPECT_NE(title, "ferry ferry ferry");
  store::TextSearchQuery other;
  other.schema_name = "other.v1";
  EXPECT_EQ(Nearest(index, "ferry", other), std::vector<std::string>{"ferry tickets"});
}

TEST_F(HnswVectorSearchTest, SavedIndexIsLoadedWhenFreshAndRebuiltWhenStaleOrCorrupt) {
  {
    HnswVectorSearch index(*store_, *store_, embedder_, Options());
    StartWorker(index);
    CreateCorpus();
    CatchUp();
    ASSERT_FALSE(Nearest(index, "gouda").empty());
    StopWorker();
    ASSERT_TRUE(index.Save().ok());
  }
  {
    HnswVectorSearch index(*store_, *store_, embedder_, Options());
    EXPECT_EQ(Nearest(index, "gouda cheese").at(0), "cheese market gouda");
    EXPECT_EQ(index.IndexStatus().loads, 1);
    EXPECT_EQ(index.IndexStatus().builds, 0);
  }
  // Corrupt the saved graph: the checksum no longer matches, the index is rebuilt from SQLite.
  for (const auto& entry : std::filesystem::directory_iterator(dir_.path() + "/hnsw")) {
    if (entry.path().extension() != ".hnsw") continue;
    std::fstream file(entry.path(), std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(100);
    file.write("garbage!", 8);
  }
  {
    HnswVectorSearch index(*store_, *store_, embedder_, Options());
    EXPECT_EQ(Nearest(index, "gouda cheese").at(0), "cheese market gouda");
    EXPECT_EQ(index.IndexStatus().loads, 0);
    EXPECT_EQ(index.IndexStatus().builds, 1);
    ASSERT_TRUE(index.Save().ok());
  }
  // Vectors written while no index followed them: the saved one is stale.
  {
    HnswVectorSearch unrelated(*store_, *store_, embedder_, Options());
    StartWorker(unrelated);
    Create("gouda cheese shop opening hours", "note.v1");
    CatchUp();
    StopWorker();
  }
  HnswVectorSearch index(*store_, *store_, embedder_, Options());
  EXPECT_EQ(Nearest(index, "gouda cheese shop").at(0), "gouda cheese shop opening hours");
  EXPECT_EQ(index.IndexStatus().builds, 1);
  EXPECT_EQ(index.IndexStatus().loads, 0);
}

TEST_F(HnswVectorSearchTest, SmallTenantsAreScannedExactly) {
  HnswSearchOptions options = Options();
  options.min_vectors = 100;
  HnswVectorSearch index(*store_, *store_, embedder_, options);
  StartWorker(index);
  CreateCorpus();
  CatchUp();
  EXPECT_EQ(Nearest(index, "ski pass").at(0), "ski pass prices");
  EXPECT_EQ(index.IndexStatus().indexes, 0u);
  EXPECT_EQ(index.IndexStatus().builds, 0);
}

}  // namespace
}  // namespace cairn::search
