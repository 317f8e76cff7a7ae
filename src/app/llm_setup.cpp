#include "app/llm_setup.h"

#include <cstdlib>

namespace cairn::app {

Result<std::unique_ptr<exec::llm::ProviderRegistry>> MakeProviderRegistry(const Settings& settings) {
  exec::llm::RegistryOptions options;
  CAIRN_ASSIGN_OR_RETURN(options.providers, exec::llm::ParseProviderList(settings.GetString("llm_providers")));
  options.custom_base_url = settings.GetString("llm_base_url");
  options.custom_api_key = settings.GetString("llm_api_key");
  options.custom_default_model = settings.GetString("llm_model");
  options.default_provider = settings.GetString("llm_default_provider");
  options.client.request_timeout = std::chrono::milliseconds(settings.GetInt("llm_request_timeout_ms"));
  options.client.stream_idle_timeout = std::chrono::milliseconds(settings.GetInt("llm_stream_idle_timeout_ms"));
  options.client.max_attempts = static_cast<int>(settings.GetInt("llm_max_attempts"));
  options.client.base_backoff = std::chrono::milliseconds(settings.GetInt("llm_backoff_base_ms"));
  return exec::llm::ProviderRegistry::Create(std::move(options), [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (!value) return std::nullopt;
    return std::string(value);
  });
}

exec::ModelResolver ResolverFor(const exec::llm::ProviderRegistry& registry) {
  return [&registry](const std::string& model, bool own_key) -> Result<exec::ModelTarget> {
    CAIRN_ASSIGN_OR_RETURN(exec::llm::ResolvedModel resolved, registry.Resolve(model, own_key));
    return exec::ModelTarget{resolved.provider, resolved.provider_name, resolved.model, resolved.api_key_secret};
  };
}

}  // namespace cairn::app
