#include "app/search_setup.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "base/log.h"
#include "search/hashing_embedder.h"
#include "search/openai_embedder.h"

namespace cairn::app {

namespace {

constexpr std::string_view kBuiltinPrefix = "builtin/hash-";
constexpr size_t kMinBuiltinDimension = 8;
constexpr size_t kMaxBuiltinDimension = 4096;  // the longest qvec a search takes

}  // namespace

Result<std::unique_ptr<search::Embedder>> MakeEmbedder(const Settings& settings,
                                                       const std::vector<exec::llm::ProviderConfig>& providers) {
  const std::string choice = settings.GetString("embedder");
  if (choice == "none") return std::unique_ptr<search::Embedder>();
  if (choice == "builtin") return std::unique_ptr<search::Embedder>(std::make_unique<search::HashingEmbedder>());
  return MakeNamedEmbedder(choice, settings, providers);
}

Result<std::unique_ptr<search::Embedder>> MakeNamedEmbedder(const std::string& choice, const Settings& settings,
                                                            const std::vector<exec::llm::ProviderConfig>& providers) {
  if (choice.starts_with(kBuiltinPrefix)) {
    const std::string digits = choice.substr(kBuiltinPrefix.size());
    size_t dimension = 0;
    const bool number = !digits.empty() && digits.size() <= 4 &&
                        std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (number) dimension = std::stoul(digits);
    if (!number || dimension < kMinBuiltinDimension || dimension > kMaxBuiltinDimension) {
      return Status(StatusCode::kInvalidArgument,
                    "embedder: builtin/hash-N takes a dimension N from " + std::to_string(kMinBuiltinDimension) +
                        " to " + std::to_string(kMaxBuiltinDimension) + ", got '" + choice + "'",
                    "embedder");
    }
    return std::unique_ptr<search::Embedder>(std::make_unique<search::HashingEmbedder>(dimension));
  }
  const size_t slash = choice.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == choice.size()) {
    return Status(StatusCode::kInvalidArgument,
                  "embedder: must be builtin, builtin/hash-N, none or provider/model (e.g. openai/text-embedding-3-small), got '" +
                      choice + "'",
                  "embedder");
  }
  const std::string provider = choice.substr(0, slash);
  search::OpenAiEmbedderOptions options;
  options.name = choice;
  options.model = choice.substr(slash + 1);
  options.timeout = std::chrono::milliseconds(settings.GetInt("embed_timeout_ms"));
  bool found = false;
  for (const auto& config : providers) {
    if (config.name != provider) continue;
    found = true;
    options.base_url = config.base_url;
    if (provider == "custom") {
      options.api_key = settings.GetString("llm_api_key");
    } else if (!config.api_key_env.empty()) {
      const char* key = std::getenv(config.api_key_env.c_str());
      if (key == nullptr || *key == '\0') {
        return Status::FailedPrecondition("embedder " + choice + " needs an API key: set " + config.api_key_env);
      }
      options.api_key = key;
    }
  }
  if (!found) {
    std::string names;
    for (const auto& config : providers) names += (names.empty() ? "" : ", ") + config.name;
    return Status(StatusCode::kInvalidArgument,
                  "embedder: no LLM provider is named '" + provider + "' (configured: " + names + ")", "embedder");
  }
  return std::unique_ptr<search::Embedder>(std::make_unique<search::OpenAiEmbedder>(std::move(options)));
}

Result<std::unique_ptr<search::EmbeddingModels>> StartVectorSearch(
    const Settings& settings, const std::vector<exec::llm::ProviderConfig>& providers,
    std::vector<std::string> embed_schemas, store::Store& records, store::VectorStore& vectors,
    store::CursorStore& cursors, bus::EventBus& bus, MetricsRegistry& metrics) {
  CAIRN_ASSIGN_OR_RETURN(std::unique_ptr<search::Embedder> embedder, MakeEmbedder(settings, providers));
  if (!embedder) return std::unique_ptr<search::EmbeddingModels>();
  search::EmbeddingModelsOptions options;
  options.worker.schemas = std::move(embed_schemas);
  options.worker.batch_size = static_cast<size_t>(settings.GetInt("embed_batch_size"));
  options.index = settings.GetString("vector_index");
  if (options.index != "hnsw" && options.index != "exact") {
    return Status(StatusCode::kInvalidArgument, "vector_index: must be hnsw or exact, got '" + options.index + "'",
                  "vector_index");
  }
  options.hnsw.directory = (std::filesystem::path(settings.GetString("data_dir")) / "vector-index").string();
  options.hnsw.min_vectors = static_cast<size_t>(settings.GetInt("hnsw_min_vectors"));
  auto make_embedder = [&settings, providers](const std::string& model) {
    return MakeNamedEmbedder(model, settings, providers);
  };
  auto models = std::make_unique<search::EmbeddingModels>(records, vectors, cursors, bus, std::move(embedder),
                                                           make_embedder, std::move(options), &metrics);
  CAIRN_RETURN_IF_ERROR(models->Start());
  CAIRN_LOG_INFO("vector search with {} (embedder)", models->Statuses().front().embedding.model);
  return models;
}

}  // namespace cairn::app
