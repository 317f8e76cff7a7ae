// EmbeddingModels: the embedding models of a server and which one serves vector queries — the
// configured model and, after a change of model, the previous one until the configured one has
// caught up (docs/search.md, "Changing the model").
//
// At Start, the models that have vectors in the store are looked at:
// - one of them other than the configured model with a stored cursor (the highest, when several)
//   is the previous model. When `make_embedder` can build its embedder (queries must be embedded
//   with it), it serves vector queries and its worker keeps following writes, while the
//   configured model's worker embeds everything in the background (fills in every record, then
//   follows the log). Otherwise the configured model serves at once.
// - Once the configured model's worker has gone through the log (EmbeddingWorkerOptions::
//   on_caught_up), it serves: the previous model's worker stops, its cursor is deleted — from then
//   on its vectors are leftovers — then its index (in memory and the files saved in the data dir)
//   and its vectors, `delete_batch` at a time. Models found without a cursor (what a crash left
//   of an earlier retirement) and models whose embedder cannot be built are deleted then too.
// Crash safety follows from the store alone: a model's stored cursor is written with its vectors,
// and deleted before them; so after a kill -9 at any point the next Start finds the same previous
// model serving (or leftovers to delete), and the configured model's worker resumes from its
// cursor or fills in what is missing. Nothing is lost; at most work is repeated.
// Thread-safe: searches and statuses run concurrently with the switch.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/metrics.h"
#include "bus/event_bus.h"
#include "search/embedder.h"
#include "search/embedding_worker.h"
#include "search/hnsw_vector_search.h"
#include "search/vector_search.h"
#include "store/cursor_store.h"
#include "store/store.h"
#include "store/vector_store.h"

namespace cairn::search {

struct EmbeddingModelsOptions {
  EmbeddingWorkerOptions worker;  // for every model; on_stored and on_caught_up are set here
  std::string index = "hnsw";     // "hnsw" (an HnswVectorSearch per model) or "exact"
  HnswSearchOptions hnsw;         // its directory is also where a retired model's saved indexes are deleted
  size_t delete_batch = 10000;    // vectors of a retired model deleted per transaction
};

// One model in GET /search/status.
struct ModelStatus {
  EmbeddingStatus embedding;
  bool serving = false;  // vector queries use this model's vectors
  VectorIndexStatus index;
};

class EmbeddingModels final : public VectorSearch {
 public:
  // Builds the embedder of a model that has vectors in the store (the previous model), by name.
  using EmbedderFactory = std::function<Result<std::unique_ptr<Embedder>>(const std::string& model)>;

  // The stores and the bus must outlive this; `metrics` may be null. `options.index` must be "hnsw"
  // or "exact".
  EmbeddingModels(store::Store& records, store::VectorStore& vectors, store::CursorStore& cursors, bus::EventBus& bus,
                  std::unique_ptr<Embedder> configured, EmbedderFactory make_embedder, EmbeddingModelsOptions options,
                  MetricsRegistry* metrics);
  ~EmbeddingModels() override;

  // Finds the previous model, if any, and starts the workers. Called once.
  Status Start();
  // Stops the workers (a retirement in progress stops between two batches and goes on at the next
  // Start), then saves the indexes. Idempotent.
  void Stop();

  // By the serving model.
  Result<std::vector<store::TextHit>> SearchVector(const std::string& owner_id, const store::TextSearchQuery& query,
                                                   const std::optional<std::vector<float>>& vector) override;
  VectorIndexStatus IndexStatus() const override;

  // The configured model first, then the previous one while it is not retired.
  std::vector<ModelStatus> Statuses() const;
  std::string serving_model() const;

  // The configured model's worker (tests and benchmarks wait on it).
  EmbeddingWorker& worker();

 private:
  struct Model;

  std::unique_ptr<Model> MakeModel(std::unique_ptr<Embedder> embedder, bool configured);
  ModelStatus StatusOf(const Model& model) const;
  // On the configured model's worker thread: it serves now; the others are retired.
  void ConfiguredCaughtUp();
  // Deletes `model`'s cursor, saved indexes and vectors (`index`: its in-memory index, may be null).
  void Retire(const std::string& model, HnswVectorSearch* index);

  store::Store& records_;
  store::VectorStore& vectors_;
  store::CursorStore& cursors_;
  bus::EventBus& bus_;
  EmbedderFactory make_embedder_;
  EmbeddingModelsOptions options_;
  MetricsRegistry* metrics_;

  std::unique_ptr<Model> configured_;
  std::unique_ptr<Model> previous_;      // kept until destruction: searches in flight may use it
  std::vector<std::string> leftovers_;   // retired when the configured model catches up
  std::atomic<Model*> serving_{nullptr};
  std::atomic<bool> previous_retired_{false};
  std::atomic<bool> stopping_{false};
};

}  // namespace cairn::search
