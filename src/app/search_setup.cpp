#include "app/search_setup.h"

#include <chrono>
#include <cstdlib>

#include "search/hashing_embedder.h"
#include "search/openai_embedder.h"

namespace cairn::app {

Result<std::unique_ptr<search::Embedder>> MakeEmbedder(const Settings& settings,
                                                       const std::vector<exec::llm::ProviderConfig>& providers) {
  const std::string choice = settings.GetString("embedder");
  if (choice == "none") return std::unique_ptr<search::Embedder>();
  if (choice == "builtin") return std::unique_ptr<search::Embedder>(std::make_unique<search::HashingEmbedder>());
  const size_t slash = choice.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == choice.size()) {
    return Status(StatusCode::kInvalidArgument,
                  "embedder: must be builtin, none or provider/model (e.g. openai/text-embedding-3-small), got '" +
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

}  // namespace cairn::app
