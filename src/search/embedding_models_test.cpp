// EmbeddingModels over a real SqliteStore and the in-process bus: a change of model, the previous
// model serving until the new one caught up, then its vectors, cursor and saved index deleted.
#include "search/embedding_models.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <filesystem>
#include <fstream>
#include <thread>

#include "search/hashing_embedder.h"
#include "search/search_test_helpers.h"
#include "support/sqlite_store.h"
#include "support/temp_dir.h"

namespace cairn::search {
namespace {

constexpr auto kDeadline = std::chrono::seconds(20);

// The built-in embedder of `dimension`, answering kUnavailable (retried by the worker) while shut.
class GatedEmbedder final : public Embedder {
 public:
  explicit GatedEmbedder(size_t dimension) : inner_(dimension) {}
  const std::string& model() const override { return inner_.model(); }
  size_t dimension() const override { return inner_.dimension(); }
  Result<std::vector<std::vector<float>>> Embed(const std::vector<std::string>& texts) override {
    if (!open.load()) {
      ++refused;
      return Status::Unavailable("gate shut");
    }
    return inner_.Embed(texts);
  }
  std::atomic<bool> open{true};
  std::atomic<int> refused{0};

 private:
  HashingEmbedder inner_;
};

class EmbeddingModelsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(store_.Open(clock_));
    ASSERT_TRUE(test_support::StartLocalBus(*store_, bus_));
  }
  void TearDown() override {
    models_.reset();
    if (bus_) bus_->Stop();
  }
  // Starts models with `configured`; a previous model is built by its name (builtin/hash-N) unless
  // `unbuildable`.
  void StartModels(std::unique_ptr<Embedder> configured, bool unbuildable = false) {
    EmbeddingModelsOptions options;
    options.worker.backoff_base = std::chrono::milliseconds(1);
    options.worker.backoff_max = std::chrono::milliseconds(4);
    options.hnsw.directory = index_dir_.path();
    options.hnsw.min_vectors = 1;
    options.delete_batch = 2;  // several transactions
    auto factory = [unbuildable](const std::string& model) -> Result<std::unique_ptr<Embedder>> {
      if (unbuildable) return Status::FailedPrecondition("no key");
      return std::unique_ptr<Embedder>(std::make_unique<HashingEmbedder>(std::stoul(model.substr(13))));
    };
    models_ = std::make_unique<EmbeddingModels>(*store_, *store_, *store_, *bus_, std::move(configured), factory,
                                                options, nullptr);
    ASSERT_TRUE(models_->Start().ok());
  }
  model::Breadcrumb Create(std::string title, std::string_view context) {
    model::BreadcrumbDraft d;
    d.title = std::move(title);
    d.context = boost::json::parse(context);
    auto created = store_->Create(model::WriteContext{}, d, "");
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return created.ok() ? created->breadcrumb : model::Breadcrumb{};
  }
  std::vector<std::string> Nearest(const std::string& text) {
    return test_helpers::NearestTitles(*models_, text, {}, 1);
  }
  // Waits (with a deadline) until only the configured model is left, serving.
  ::testing::AssertionResult Switched() {
    const auto until = std::chrono::steady_clock::now() + kDeadline;
    while (std::chrono::steady_clock::now() < until) {
      if (models_->Statuses().size() == 1 && models_->Statuses().front().serving) return ::testing::AssertionSuccess();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));  // a poll, with a deadline
    }
    return ::testing::AssertionFailure() << "still serving " << models_->serving_model();
  }
  size_t SavedIndexes(const std::string& model) {
    size_t n = 0;
    for (const auto& entry : std::filesystem::directory_iterator(index_dir_.path())) {
      std::ifstream in(entry.path());
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (entry.path().extension() == ".json" && text.find("\"model\":\"" + model + "\"") != std::string::npos) n++;
    }
    return n;
  }
  std::optional<int64_t> Cursor(const std::string& model) {
    return store_->LoadCursor(EmbeddingWorker::ConsumerFor(model)).value();
  }

  ManualClock clock_{1'795'225'252'000'000};
  test_support::TempSqliteStore store_{"cairn-embedding-models-test"};
  test_support::TempDir index_dir_{"cairn-embedding-models-index"};
  std::unique_ptr<bus::LocalEventBus> bus_;
  std::unique_ptr<EmbeddingModels> models_;
};

TEST_F(EmbeddingModelsTest, ThePreviousModelServesUntilTheNewOneCaughtUpThenItIsDeleted) {
  StartModels(std::make_unique<HashingEmbedder>(384));
  Create("harbour lights", R"({"text":"boats in the Lisbon harbour"})");
  Create("tax forms", R"({"text":"quarterly filing deadlines"})");
  ASSERT_TRUE(test_helpers::CaughtUp(*store_, models_->worker(), kDeadline));
  EXPECT_EQ(Nearest("lisbon boats"), std::vector<std::string>{"harbour lights"});  // builds the index
  models_.reset();  // saves it
  ASSERT_EQ(SavedIndexes("builtin/hash-384"), 1u);

  // Another model, whose embedder refuses for now: the previous one serves and follows writes.
  auto gated = std::make_unique<GatedEmbedder>(64);
  GatedEmbedder& gate = *gated;
  gate.open = false;
  StartModels(std::move(gated));
  std::vector<ModelStatus> during = models_->Statuses();
  ASSERT_EQ(during.size(), 2u);
  EXPECT_EQ(during[0].embedding.model, "builtin/hash-64");
  EXPECT_FALSE(during[0].serving);
  EXPECT_GT(during[0].embedding.backlog, 0);
  EXPECT_EQ(during[1].embedding.model, "builtin/hash-384");
  EXPECT_TRUE(during[1].serving);
  EXPECT_EQ(models_->serving_model(), "builtin/hash-384");
  EXPECT_EQ(Nearest("quarterly filing"), std::vector<std::string>{"tax forms"});
  Create("ferry times", R"({"text":"cacilhas ferry schedule"})");
  const int64_t last = store_->Stats().value().last_event_seq;
  const auto until = std::chrono::steady_clock::now() + kDeadline;
  while (models_->Statuses().back().embedding.cursor < last && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the previous model's worker, polled with a deadline
  }
  EXPECT_EQ(Nearest("cacilhas ferry"), std::vector<std::string>{"ferry times"});
  EXPECT_GT(gate.refused.load(), 0);
  EXPECT_EQ(store_->CountVectors("builtin/hash-64").value(), 0);

  // The gate opens: the new model catches up, serves, and the previous one is gone.
  gate.open = true;
  ASSERT_TRUE(Switched());
  EXPECT_EQ(models_->serving_model(), "builtin/hash-64");
  EXPECT_EQ(store_->CountVectors("builtin/hash-64").value(), 3);
  EXPECT_EQ(store_->CountVectors("builtin/hash-384").value(), 0);
  EXPECT_EQ(Cursor("builtin/hash-384"), std::nullopt);
  EXPECT_EQ(SavedIndexes("builtin/hash-384"), 0u);
  EXPECT_EQ(store_->VectorModels().value(), std::vector<std::string>{"builtin/hash-64"});
  EXPECT_EQ(Nearest("cacilhas ferry"), std::vector<std::string>{"ferry times"});
  EXPECT_EQ(Nearest("lisbon boats"), std::vector<std::string>{"harbour lights"});
}

TEST_F(EmbeddingModelsTest, LeftoversAndAPreviousModelThatCannotEmbedAreDeleted) {
  StartModels(std::make_unique<HashingEmbedder>(32));
  model::Breadcrumb a = Create("alpha", R"({"text":"first"})");
  ASSERT_TRUE(test_helpers::CaughtUp(*store_, models_->worker(), kDeadline));
  models_.reset();
  // What a crash in the middle of an earlier retirement leaves: vectors without a cursor.
  ASSERT_TRUE(store_->PutVectors("builtin/hash-16", {{"default", a.id, 1, std::vector<float>(16, 0.25f)}}, {}, "", 0).ok());

  // The previous model (hash-32) cannot be built: the configured one serves at once.
  StartModels(std::make_unique<HashingEmbedder>(48), /*unbuildable=*/true);
  EXPECT_EQ(models_->serving_model(), "builtin/hash-48");
  ASSERT_TRUE(Switched());
  ASSERT_TRUE(test_helpers::CaughtUp(*store_, models_->worker(), kDeadline));
  const auto until = std::chrono::steady_clock::now() + kDeadline;
  while (store_->VectorModels().value().size() > 1 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the retirement, polled with a deadline
  }
  EXPECT_EQ(store_->VectorModels().value(), std::vector<std::string>{"builtin/hash-48"});
  EXPECT_EQ(Cursor("builtin/hash-32"), std::nullopt);
  EXPECT_EQ(Nearest("alpha first"), std::vector<std::string>{"alpha"});
}

}  // namespace
}  // namespace cairn::search
