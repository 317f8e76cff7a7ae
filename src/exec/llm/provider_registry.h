// ProviderRegistry: the configured LLM endpoints and how a model name picks one.
//
// Every provider is an OpenAI-compatible endpoint (OpenAiProvider). The list comes from a setting
// holding a JSON array (ParseProviderList; DefaultProviderList() is the built-in one), plus an
// optional "custom" endpoint given by base URL alone. A model name "provider/model" picks a
// provider by name; any other name goes to the default provider.
//
// API keys are read once, at Create, from the environment variables the entries name. Key values
// never appear in Describe(), in messages or in logs.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "exec/llm/llm_provider.h"
#include "exec/llm/openai_provider.h"

namespace cairn::exec::llm {

struct ProviderConfig {
  std::string name;           // [a-z0-9_-]+, unique
  std::string base_url;       // http:// or https://, e.g. "https://api.openai.com/v1"
  std::string api_key_env;    // the variable holding its key; empty: the endpoint needs no key
  std::string default_model;  // used when a call names no model (may be empty)
  // The name of the secret (POST /secrets) holding the key, looked up in the calling agent's
  // tenant at each call; each tenant brings its own key. Used instead of api_key_env.
  std::string api_key_secret = {};
};

// Parses a JSON array of {name, base_url, api_key_env, api_key_secret, default_model} (name and
// base_url required, the others optional strings; no other members). kInvalidArgument naming the
// entry ("providers[1] (openrouter): base_url must be an http:// or https:// URL") for malformed
// JSON, a bad name or URL, a duplicate name, an api_key_env that is not a variable name, an
// api_key_secret that is not a secret name.
Result<std::vector<ProviderConfig>> ParseProviderList(std::string_view json);

// The built-in list: openai (https://api.openai.com/v1, OPENAI_API_KEY, gpt-4o-mini), openrouter
// (https://openrouter.ai/api/v1, OPENROUTER_API_KEY, openai/gpt-4o-mini), ollama
// (http://localhost:11434/v1, no key, llama3.2).
std::string DefaultProviderList();

struct RegistryOptions {
  std::vector<ProviderConfig> providers;
  // Non-empty: adds a provider named "custom" with this base URL and key (the key may be empty)
  // that becomes the default provider.
  std::string custom_base_url;
  std::string custom_api_key;
  std::string custom_default_model;
  // Without custom: the default provider's name; empty: the first provider whose key variable is
  // set (one that needs no key is never chosen implicitly).
  std::string default_provider;
  // Timing and retries for every provider; its name, base_url, api_key and api_key_env are
  // ignored (each provider sets its own).
  OpenAiOptions client;
};

struct ResolvedModel {
  LlmProvider* provider = nullptr;  // owned by the registry
  std::string provider_name;
  std::string model;  // as the endpoint knows it
  std::string api_key_secret = {};  // the provider's api_key_secret: the caller resolves it per call
};

class ProviderRegistry {
 public:
  using Getenv = std::function<std::optional<std::string>(const std::string&)>;

  // Builds one OpenAiProvider per entry, with the key read through `getenv` (an empty value
  // counts as unset). kInvalidArgument: a bad custom_base_url, a provider already named "custom"
  // next to a custom_base_url, a default_provider that names no configured provider, duplicate
  // names. Having no default provider at all is fine (Resolve then explains what to set).
  static Result<std::unique_ptr<ProviderRegistry>> Create(RegistryOptions options, Getenv getenv);

  // Picks the provider and model for `model`:
  //   "name/rest" where `name` is a configured provider: that provider, model "rest"
  //     ("openrouter/google/gemini-2.0-flash-exp:free" → openrouter, "google/gemini-2.0-flash-exp:free");
  //   anything else: the default provider, the whole string;
  //   an empty model (or "name/"): the provider's default_model.
  // Errors: kFailedPrecondition when the provider needs a key that is not set ("provider openai
  // needs an API key: set OPENAI_API_KEY") or there is no default provider (the message says how
  // to configure one); kInvalidArgument when no model is given and the provider has no default.
  // `own_key`: the caller brings its own key (an agent's api_key), so none need be configured.
  Result<ResolvedModel> Resolve(std::string_view model, bool own_key = false) const;

  // One line for the start-up log: each provider with its base URL and whether its key is set,
  // and the default. Never includes key values.
  std::string Describe() const;

  // The default provider's name; empty when there is none.
  const std::string& default_provider() const { return default_; }
  // The configured providers, in order ("custom" last).
  std::vector<ProviderConfig> providers() const;

 private:
  struct Entry {
    ProviderConfig config;
    bool has_key = false;
    std::unique_ptr<OpenAiProvider> provider;
  };
  ProviderRegistry() = default;

  std::vector<Entry> entries_;
  std::map<std::string, size_t, std::less<>> by_name_;
  std::string default_;
};

}  // namespace cairn::exec::llm
