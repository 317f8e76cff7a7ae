// The embedder of `cairn serve`, from its settings (embed_* in docs/config.md, docs/search.md).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/settings.h"
#include "base/status.h"
#include "exec/llm/provider_registry.h"
#include "search/embedder.h"

namespace cairn::app {

// `embedder`: "builtin" (HashingEmbedder), "none" (nullptr: vector search off), or
// "provider/model", the provider one of `providers` (llm_providers, and "custom" from
// llm_base_url) whose base URL and key (read from its api_key_env now; llm_api_key for custom)
// an OpenAiEmbedder uses. kInvalidArgument naming the setting for an unknown provider or a
// missing model; kFailedPrecondition when the provider's key variable is not set.
Result<std::unique_ptr<search::Embedder>> MakeEmbedder(const Settings& settings,
                                                       const std::vector<exec::llm::ProviderConfig>& providers);

}  // namespace cairn::app
