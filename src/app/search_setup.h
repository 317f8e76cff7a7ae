// The embedders and vector search of `cairn serve`, from its settings (embed_* in docs/config.md, docs/search.md).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/settings.h"
#include "base/status.h"
#include "exec/llm/provider_registry.h"
#include "search/embedder.h"
#include "search/embedding_models.h"

namespace cairn::app {

// `embedder`: "builtin" (HashingEmbedder of 384 dimensions), "none" (nullptr: vector search off), or
// a name MakeNamedEmbedder takes.
Result<std::unique_ptr<search::Embedder>> MakeEmbedder(const Settings& settings,
                                                       const std::vector<exec::llm::ProviderConfig>& providers);

// The embedder of a model name — what vectors are stored under, so the embedder of a previous model
// can be built again (search::EmbeddingModels): "builtin/hash-N" (HashingEmbedder of N dimensions,
// 8 to 4096), or "provider/model": the provider one of `providers` (llm_providers, and "custom"
// from llm_base_url) whose base URL and key (read from its api_key_env now; llm_api_key for
// custom) an OpenAiEmbedder uses. kInvalidArgument naming the setting `embedder` for an unknown
// provider, a missing model or a bad dimension; kFailedPrecondition when the provider's key
// variable is not set.
Result<std::unique_ptr<search::Embedder>> MakeNamedEmbedder(const std::string& name, const Settings& settings,
                                                            const std::vector<exec::llm::ProviderConfig>& providers);

// Vector search of `cairn serve` from its settings (embedder, embed_batch_size, vector_index,
// hnsw_min_vectors, data_dir) and `embed_schemas` (the setting's list): null with `embedder none`;
// otherwise started, the previous model serving while the configured one catches up.
Result<std::unique_ptr<search::EmbeddingModels>> StartVectorSearch(
    const Settings& settings, const std::vector<exec::llm::ProviderConfig>& providers,
    std::vector<std::string> embed_schemas, store::Store& records,
    store::VectorStore& vectors, store::CursorStore& cursors, bus::EventBus& bus, MetricsRegistry& metrics);

}  // namespace cairn::app
