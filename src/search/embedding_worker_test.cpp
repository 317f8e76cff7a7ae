// EmbeddingWorker and ExactVectorSearch over a real SqliteStore and the in-process bus.
#include "search/embedding_worker.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include "model/reserved.h"
#include "search/exact_vector_search.h"
#include "search/hashing_embedder.h"
#include "search/search_test_helpers.h"
#include "support/sqlite_store.h"

namespace cairn::search {
namespace {

constexpr auto kDeadline = std::chrono::seconds(20);

// The built-in embedder that fails its first `failures` calls with `code`.
class FlakyEmbedder final : public Embedder {
 public:
  FlakyEmbedder(int failures, StatusCode code) : failures_(failures), code_(code) {}
  const std::string& model() const override { return inner_.model(); }
  size_t dimension() const override { return inner_.dimension(); }
  Result<std::vector<std::vector<float>>> Embed(const std::vector<std::string>& texts) override {
    ++calls;
    if (failures_-- > 0) return Status(code_, "embedding endpoint says no");
    return inner_.Embed(texts);
  }
  std::atomic<int> calls{0};

 private:
  HashingEmbedder inner_;
  std::atomic<int> failures_;
  StatusCode code_;
};

class EmbeddingWorkerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(store_.Open(clock_));
    ASSERT_TRUE(test_support::StartLocalBus(*store_, bus_));
  }
  void TearDown() override {
    if (worker_) worker_->Stop();
    worker_.reset();
    if (bus_) bus_->Stop();
  }
  void StartWorker(Embedder& embedder, EmbeddingWorkerOptions options = {}) {
    options.backoff_base = std::chrono::milliseconds(1);
    options.backoff_max = std::chrono::milliseconds(4);
    worker_ = std::make_unique<EmbeddingWorker>(*store_, *store_, *store_, *bus_, embedder, options, nullptr);
    worker_->Start();
  }
  model::Breadcrumb Create(std::string title, std::string_view context = "{}",
                           std::optional<std::string> schema = std::nullopt) {
    model::BreadcrumbDraft d;
    d.title = std::move(title);
    d.context = boost::json::parse(context);
    d.schema_name = std::move(schema);
    auto created = store_->Create(model::WriteContext{}, d, "");
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return created.ok() ? created->breadcrumb : model::Breadcrumb{};
  }
  void CatchUp() { ASSERT_TRUE(test_helpers::CaughtUp(*store_, *worker_, kDeadline)); }
  std::vector<std::string> Nearest(Embedder& embedder, const std::string& text, store::TextSearchQuery query = {}) {
    ExactVectorSearch search(*store_, *store_, embedder);
    return test_helpers::NearestTitles(search, text, std::move(query), 10);
  }
  int64_t Vectors(const Embedder& embedder) { return store_->CountVectors(embedder.model()).value(); }

  ManualClock clock_{1'795'225'252'000'000};
  test_support::TempSqliteStore store_{"cairn-embedding-worker-test"};
  std::unique_ptr<bus::LocalEventBus> bus_;
  // Embedders outlive the worker (members before it, so destroyed after it).
  HashingEmbedder embedder_;
  HashingEmbedder small_embedder_{64};
  FlakyEmbedder flaky_{3, StatusCode::kUnavailable};
  FlakyEmbedder refusing_{1000, StatusCode::kInternal};
  std::unique_ptr<EmbeddingWorker> worker_;
};

TEST(EmbedsSchemaTest, GlobsAndReservedSchemas) {
  EXPECT_TRUE(EmbedsSchema({"*"}, std::nullopt));
  EXPECT_TRUE(EmbedsSchema({"*"}, "note.v1"));
  EXPECT_FALSE(EmbedsSchema({"*"}, "agent.snapshot.v1"));
  EXPECT_FALSE(EmbedsSchema({"agent.*"}, "agent.session.message.v1"));
  EXPECT_TRUE(EmbedsSchema({"agent.session.message.v1"}, "agent.session.message.v1"));
  EXPECT_TRUE(EmbedsSchema({"note.*", "task.v?"}, "note.v2"));
  EXPECT_FALSE(EmbedsSchema({"note.*"}, "task.v1"));
  EXPECT_FALSE(EmbedsSchema({"note.*"}, std::nullopt));
  EXPECT_TRUE(EmbedsSchema({"*.v1"}, "a.b.v1"));
  EXPECT_FALSE(EmbedsSchema({}, "note.v1"));
  EXPECT_FALSE(EmbedsSchema({"*"}, "auth.key.v1"));
  EXPECT_FALSE(EmbedsSchema({"auth.*"}, "auth.secret.v1"));
}

TEST_F(EmbeddingWorkerTest, CairnsOwnRecordsAreNeverEmbeddedWhateverTheGlobs) {
  EmbeddingWorkerOptions everything;
  everything.schemas = {"*", "auth.secret.v1", "auth.key.v1"};
  StartWorker(embedder_, everything);
  for (std::string_view schema : {"auth.secret.v1", "auth.key.v1", "note.v1"}) {
    model::BreadcrumbDraft d;
    d.title = "sealed";
    d.context = boost::json::parse(R"({"text":"key material"})");
    d.schema_name = std::string(schema);
    model::WriteContext system;
    system.owner_id = std::string(model::kSystemOwner);
    ASSERT_TRUE(store_->Create(system, d, "").ok());
  }
  Create("a tenant's note", R"({"text":"key material"})", "note.v1");
  CatchUp();
  EXPECT_EQ(Vectors(embedder_), 1);
}

TEST_F(EmbeddingWorkerTest, EmbedsWritesAndFindsTheNearest) {
  HashingEmbedder& embedder = embedder_;
  StartWorker(embedder);
  Create("harbour lights", R"({"text":"boats in the Lisbon harbour at night"})", "note.v1");
  Create("tax forms", R"({"text":"quarterly filing deadlines"})", "note.v1");
  Create("lisbon trip", R"({"text":"trams and the harbour"})", "task.v1");
  Create("snapshot", R"({"text":"lisbon harbour"})", "agent.snapshot.v1");
  CatchUp();
  EXPECT_EQ(Vectors(embedder), 3);
  auto nearest = Nearest(embedder, "Lisbon harbour boats");
  ASSERT_EQ(nearest.size(), 3u);
  EXPECT_EQ(nearest[0], "harbour lights");
  EXPECT_EQ(nearest[2], "tax forms");
  store::TextSearchQuery tasks;
  tasks.schema_name = "task.v1";
  EXPECT_EQ(Nearest(embedder, "Lisbon harbour boats", tasks), std::vector<std::string>{"lisbon trip"});
  EXPECT_EQ(worker_->GetStatus().backlog, 0);
}

TEST_F(EmbeddingWorkerTest, UpdatesReplaceVectorsAndDeletesOrExcludedSchemasRemoveThem) {
  HashingEmbedder& embedder = embedder_;
  StartWorker(embedder);
  model::Breadcrumb a = Create("first", R"({"text":"penguins on the ice"})");
  model::Breadcrumb b = Create("second", R"({"text":"desert camels"})");
  CatchUp();
  model::BreadcrumbPatch patch;
  patch.context = {true, boost::json::parse(R"({"text":"camels and sand dunes"})")};
  ASSERT_TRUE(store_->Update(model::WriteContext{}, a.id, patch, std::nullopt).ok());
  CatchUp();
  EXPECT_EQ(Nearest(embedder, "camels sand dunes").front(), "first");
  model::BreadcrumbPatch hide;
  hide.schema_name = {true, std::string("agent.snapshot.v1")};
  ASSERT_TRUE(store_->Update(model::WriteContext{}, a.id, hide, std::nullopt).ok());
  ASSERT_TRUE(store_->Delete(model::WriteContext{}, b.id, std::nullopt).ok());
  CatchUp();
  EXPECT_EQ(Vectors(embedder), 0);
}

TEST_F(EmbeddingWorkerTest, FillsInRecordsWrittenBeforeTheModelThenResumesFromItsCursor) {
  Create("old one", R"({"text":"written before any embedder"})");
  Create("old two", R"({"text":"also before"})");
  HashingEmbedder& embedder = embedder_;
  StartWorker(embedder);
  CatchUp();
  EXPECT_EQ(Vectors(embedder), 2);
  worker_->Stop();
  Create("while stopped", R"({"text":"nobody was embedding"})");
  HashingEmbedder& other_dimension = small_embedder_;  // another model: fills in on its own
  StartWorker(embedder);
  CatchUp();
  EXPECT_EQ(Vectors(embedder), 3);
  worker_->Stop();
  StartWorker(other_dimension);
  CatchUp();
  EXPECT_EQ(Vectors(other_dimension), 3);
  EXPECT_EQ(Vectors(embedder), 3);
}

TEST_F(EmbeddingWorkerTest, TransientFailuresAreRetriedUntilTheyPass) {
  FlakyEmbedder& embedder = flaky_;
  StartWorker(embedder);
  CatchUp();
  Create("kept", R"({"text":"must not be lost"})");
  CatchUp();
  EXPECT_EQ(Vectors(embedder), 1);
  EXPECT_GE(embedder.calls.load(), 4);
  EXPECT_EQ(worker_->GetStatus().failed_batches, 0);
  EXPECT_EQ(worker_->GetStatus().last_error, "");
}

TEST_F(EmbeddingWorkerTest, APermanentFailureSkipsTheBatchAfterItsAttempts) {
  FlakyEmbedder& embedder = refusing_;
  EmbeddingWorkerOptions options;
  options.max_attempts = 2;
  StartWorker(embedder, options);
  CatchUp();  // past the start-up fill, so the record goes through the event path only once
  Create("poison", R"({"text":"the endpoint refuses this"})");
  CatchUp();
  EXPECT_EQ(Vectors(embedder), 0);
  EmbeddingStatus status = worker_->GetStatus();
  EXPECT_EQ(status.failed_batches, 1);
  EXPECT_EQ(status.last_error, "embedding endpoint says no");
  EXPECT_EQ(status.backlog, 0);
}

TEST_F(EmbeddingWorkerTest, AQueryVectorMustHaveTheModelsDimension) {
  HashingEmbedder embedder;
  ExactVectorSearch search(*store_, *store_, embedder);
  store::TextSearchQuery query;
  auto refused = search.SearchVector("default", query, std::vector<float>{1, 2, 3});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().field(), "qvec");
  EXPECT_EQ(search.SearchVector("default", query, std::nullopt).status().field(), "q");
  EXPECT_TRUE(search.SearchVector("default", query, std::vector<float>(384, 0.5f)).ok());
}

}  // namespace
}  // namespace cairn::search
