#include "search/embedding_models.h"

#include <algorithm>
#include <optional>

#include "base/log.h"

namespace cairn::search {

struct EmbeddingModels::Model {
  std::unique_ptr<Embedder> embedder;
  std::unique_ptr<VectorSearch> search;
  HnswVectorSearch* hnsw = nullptr;  // `search`, when it is an index
  std::unique_ptr<EmbeddingWorker> worker;
};

EmbeddingModels::EmbeddingModels(store::Store& records, store::VectorStore& vectors, store::CursorStore& cursors,
                                 bus::EventBus& bus, std::unique_ptr<Embedder> configured,
                                 EmbedderFactory make_embedder, EmbeddingModelsOptions options,
                                 MetricsRegistry* metrics)
    : records_(records), vectors_(vectors), cursors_(cursors), bus_(bus), make_embedder_(std::move(make_embedder)),
      options_(std::move(options)), metrics_(metrics) {
  configured_ = MakeModel(std::move(configured), true);
  serving_ = configured_.get();
}

EmbeddingModels::~EmbeddingModels() { Stop(); }

std::unique_ptr<EmbeddingModels::Model> EmbeddingModels::MakeModel(std::unique_ptr<Embedder> embedder,
                                                                  bool configured) {
  auto model = std::make_unique<Model>();
  model->embedder = std::move(embedder);
  EmbeddingWorkerOptions worker = options_.worker;
  if (options_.index == "hnsw") {
    auto index = std::make_unique<HnswVectorSearch>(vectors_, records_, *model->embedder, options_.hnsw);
    model->hnsw = index.get();
    worker.on_stored = [index = model->hnsw](const auto& writes, const auto& removals) {
      index->OnStored(writes, removals);
    };
    model->search = std::move(index);
  } else {
    model->search = std::make_unique<ExactVectorSearch>(vectors_, records_, *model->embedder);
  }
  if (configured) worker.on_caught_up = [this] { ConfiguredCaughtUp(); };
  model->worker = std::make_unique<EmbeddingWorker>(records_, vectors_, cursors_, bus_, *model->embedder,
                                                    std::move(worker), metrics_);
  return model;
}

Status EmbeddingModels::Start() {
  const std::string& configured = configured_->embedder->model();
  CAIRN_ASSIGN_OR_RETURN(std::vector<std::string> models, vectors_.VectorModels());
  // The previous model: another one whose cursor is stored (its vectors are whole), the most
  // advanced when a change of model was itself interrupted by another.
  std::optional<std::pair<int64_t, std::string>> previous;
  for (const std::string& model : models) {
    if (model == configured) continue;
    CAIRN_ASSIGN_OR_RETURN(std::optional<int64_t> cursor, cursors_.LoadCursor(EmbeddingWorker::ConsumerFor(model)));
    if (!cursor) {
      leftovers_.push_back(model);
    } else if (!previous || *cursor > previous->first) {
      if (previous) leftovers_.push_back(previous->second);
      previous.emplace(*cursor, model);
    } else {
      leftovers_.push_back(model);
    }
  }
  if (previous) {
    auto embedder = make_embedder_ ? make_embedder_(previous->second)
                                   : Result<std::unique_ptr<Embedder>>(Status::Unavailable("no embedder factory"));
    if (embedder.ok() && *embedder) {
      previous_ = MakeModel(std::move(embedder).value(), false);
      serving_ = previous_.get();
      previous_->worker->Start();
      CAIRN_LOG_INFO("search: {} serves vector queries while {} embeds every record", previous->second, configured);
    } else {
      CAIRN_LOG_WARN("search: the previous model {} cannot embed queries ({}): {} serves at once, with the records it "
                     "has embedded so far",
                     previous->second, embedder.ok() ? "no embedder" : embedder.status().message(), configured);
      leftovers_.push_back(previous->second);
    }
  }
  if (!previous_) previous_retired_ = true;
  configured_->worker->Start();
  return Status::Ok();
}

void EmbeddingModels::ConfiguredCaughtUp() {
  const std::string& configured = configured_->embedder->model();
  if (previous_ && !previous_retired_.load()) {
    serving_ = configured_.get();
    CAIRN_LOG_INFO("search: {} has embedded every record and serves vector queries; retiring {}", configured,
                   previous_->embedder->model());
    previous_->worker->Stop();  // its last cursor is stored before Retire deletes it
    if (stopping_.load()) return;  // retired at the next start
    Retire(previous_->embedder->model(), previous_->hnsw);
    previous_retired_ = true;  // listed (not serving) until its vectors are gone
  }
  for (const std::string& model : leftovers_) {
    if (stopping_.load()) return;
    Retire(model, nullptr);
  }
}

void EmbeddingModels::Retire(const std::string& model, HnswVectorSearch* index) {
  // The cursor first: once it is gone the vectors are leftovers, whatever happens next.
  if (Status deleted = cursors_.DeleteCursor(EmbeddingWorker::ConsumerFor(model)); !deleted.ok()) {
    CAIRN_LOG_WARN("search: retiring {} failed (tried again at the next start): {}", model, deleted.message());
    return;
  }
  if (index) {
    index->Drop();
  } else if (!options_.hnsw.directory.empty()) {
    HnswVectorSearch::RemoveSaved(options_.hnsw.directory, model);
  }
  int64_t total = 0;
  while (!stopping_.load()) {
    auto deleted = vectors_.DeleteVectors(model, std::max<size_t>(options_.delete_batch, 1));
    if (!deleted.ok()) {
      CAIRN_LOG_WARN("search: deleting the vectors of {} failed (the rest go at the next start): {}", model,
                     deleted.status().message());
      return;
    }
    if (*deleted == 0) break;
    total += *deleted;
  }
  CAIRN_LOG_INFO("search: deleted {} vectors of the retired model {}", total, model);
}

void EmbeddingModels::Stop() {
  if (stopping_.exchange(true)) return;
  configured_->worker->Stop();
  if (previous_) previous_->worker->Stop();
  // After the workers: nothing writes vectors any more.
  for (Model* model : {configured_.get(), previous_.get()}) {
    if (model == nullptr || model->hnsw == nullptr) continue;
    if (Status saved = model->hnsw->Save(); !saved.ok()) {
      CAIRN_LOG_WARN("search: the {} vector index not saved: {}", model->embedder->model(), saved.message());
    }
  }
}

Result<std::vector<store::TextHit>> EmbeddingModels::SearchVector(const std::string& owner_id,
                                                                  const store::TextSearchQuery& query,
                                                                  const std::optional<std::vector<float>>& vector) {
  return serving_.load()->search->SearchVector(owner_id, query, vector);
}

VectorIndexStatus EmbeddingModels::IndexStatus() const { return serving_.load()->search->IndexStatus(); }

ModelStatus EmbeddingModels::StatusOf(const Model& model) const {
  ModelStatus status;
  status.embedding = model.worker->GetStatus();
  status.serving = serving_.load() == &model;
  status.index = model.search->IndexStatus();
  return status;
}

std::vector<ModelStatus> EmbeddingModels::Statuses() const {
  std::vector<ModelStatus> out{StatusOf(*configured_)};
  if (previous_ && !previous_retired_.load()) out.push_back(StatusOf(*previous_));
  return out;
}

EmbeddingWorker& EmbeddingModels::worker() { return *configured_->worker; }

std::string EmbeddingModels::serving_model() const { return serving_.load()->embedder->model(); }

}  // namespace cairn::search
