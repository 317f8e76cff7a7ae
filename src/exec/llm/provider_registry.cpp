#include "exec/llm/provider_registry.h"

#include <algorithm>
#include <boost/json/value.hpp>
#include <set>
#include <utility>

#include "base/json_util.h"
#include "model/secret_ref.h"

namespace cairn::exec::llm {
namespace json = boost::json;
namespace {

constexpr std::string_view kCustom = "custom";
constexpr size_t kMaxNameLength = 64;

bool ValidName(std::string_view name) {
  return !name.empty() && name.size() <= kMaxNameLength && std::all_of(name.begin(), name.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
         });
}

bool ValidEnvName(std::string_view name) {
  if (name.empty() || (name.front() >= '0' && name.front() <= '9')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// An absolute http(s) URL with a host and nothing curl could misread (spaces, controls).
bool ValidBaseUrl(std::string_view url) {
  std::string lower(url.substr(0, 8));
  for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  size_t scheme = lower.starts_with("http://") ? 7 : lower.starts_with("https://") ? 8 : 0;
  if (scheme == 0 || url.size() == scheme || url[scheme] == '/' || url[scheme] == ':') return false;
  return std::all_of(url.begin(), url.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

std::string EntryName(size_t i, std::string_view name) {
  std::string out = "providers[" + std::to_string(i) + "]";
  if (!name.empty()) out += " (" + std::string(name) + ")";
  return out;
}

}  // namespace

Result<std::vector<ProviderConfig>> ParseProviderList(std::string_view text) {
  Result<json::value> parsed = ParseJson(text, 8);
  if (!parsed.ok()) return Status::InvalidArgument("provider list: " + parsed.status().message());
  if (!parsed->is_array()) return Status::InvalidArgument("provider list must be a JSON array of objects");
  std::vector<ProviderConfig> out;
  std::set<std::string, std::less<>> names;
  size_t i = 0;
  for (const json::value& item : parsed->get_array()) {
    const json::object* obj = item.if_object();
    if (obj == nullptr) return Status::InvalidArgument(EntryName(i, "") + " must be an object");
    ProviderConfig config;
    const json::value* name_value = obj->if_contains("name");
    if (name_value != nullptr && name_value->is_string()) config.name = std::string(name_value->get_string());
    const std::string where = EntryName(i, config.name);
    for (const auto& member : *obj) {
      std::string_view key = member.key();
      std::string* target = key == "name"            ? &config.name
                            : key == "base_url"      ? &config.base_url
                            : key == "api_key_env"   ? &config.api_key_env
                            : key == "default_model" ? &config.default_model
                            : key == "api_key_secret" ? &config.api_key_secret
                                                     : nullptr;
      if (target == nullptr) {
        return Status::InvalidArgument(where + ": unknown member '" + std::string(key) +
                                       "' (expected name, base_url, api_key_env, api_key_secret, default_model)");
      }
      if (!member.value().is_string()) return Status::InvalidArgument(where + ": " + std::string(key) + " must be a string");
      *target = std::string(member.value().get_string());
    }
    if (!ValidName(config.name)) {
      return Status::InvalidArgument(where + ": name must be 1-64 characters of a-z, 0-9, '_' and '-'");
    }
    if (names.contains(config.name)) return Status::InvalidArgument(where + ": name '" + config.name + "' is used twice");
    if (!ValidBaseUrl(config.base_url)) {
      return Status::InvalidArgument(where + ": base_url must be an http:// or https:// URL, not '" + config.base_url + "'");
    }
    if (!config.api_key_env.empty() && !ValidEnvName(config.api_key_env)) {
      return Status::InvalidArgument(where + ": api_key_env must be an environment variable name, not '" +
                                     config.api_key_env + "'");
    }
    if (!config.api_key_secret.empty() && !model::IsValidSecretName(config.api_key_secret)) {
      return Status::InvalidArgument(where + ": api_key_secret must be a secret name (1-128 of A-Z a-z 0-9 _ . -), not '" +
                                     config.api_key_secret + "'");
    }
    names.insert(config.name);
    out.push_back(std::move(config));
    ++i;
  }
  return out;
}

std::string DefaultProviderList() {
  return R"([{"name":"openai","base_url":"https://api.openai.com/v1","api_key_env":"OPENAI_API_KEY",)"
         R"("default_model":"gpt-4o-mini"},)"
         R"({"name":"openrouter","base_url":"https://openrouter.ai/api/v1","api_key_env":"OPENROUTER_API_KEY",)"
         R"("default_model":"openai/gpt-4o-mini"},)"
         R"({"name":"ollama","base_url":"http://localhost:11434/v1","api_key_env":"","default_model":"llama3.2"}])";
}

Result<std::unique_ptr<ProviderRegistry>> ProviderRegistry::Create(RegistryOptions options, Getenv getenv) {
  std::unique_ptr<ProviderRegistry> registry(new ProviderRegistry());
  auto add = [&registry, &options](ProviderConfig config, std::string key, std::string key_hint) -> Status {
    if (registry->by_name_.contains(config.name)) {
      return Status::InvalidArgument("LLM provider '" + config.name + "' is configured twice");
    }
    OpenAiOptions client = options.client;
    client.name = config.name;
    client.base_url = config.base_url;
    client.api_key = std::move(key);
    client.api_key_env = std::move(key_hint);
    Entry entry;
    entry.has_key = !client.api_key.empty();
    entry.config = std::move(config);
    entry.provider = std::make_unique<OpenAiProvider>(std::move(client));
    registry->by_name_.emplace(entry.config.name, registry->entries_.size());
    registry->entries_.push_back(std::move(entry));
    return Status::Ok();
  };
  for (ProviderConfig& config : options.providers) {
    std::string key;
    if (!config.api_key_env.empty() && getenv) key = getenv(config.api_key_env).value_or("");
    std::string hint = config.api_key_env;
    CAIRN_RETURN_IF_ERROR(add(std::move(config), std::move(key), std::move(hint)));
  }
  if (!options.custom_base_url.empty()) {
    if (!ValidBaseUrl(options.custom_base_url)) {
      return Status::InvalidArgument("CAIRN_LLM_BASE_URL must be an http:// or https:// URL, not '" +
                                     options.custom_base_url + "'");
    }
    if (registry->by_name_.contains(kCustom)) {
      return Status::InvalidArgument("a provider named 'custom' cannot be configured together with CAIRN_LLM_BASE_URL");
    }
    ProviderConfig custom{std::string(kCustom), options.custom_base_url, "", options.custom_default_model};
    CAIRN_RETURN_IF_ERROR(add(std::move(custom), options.custom_api_key, "CAIRN_LLM_API_KEY"));
    registry->default_ = kCustom;
  } else if (!options.default_provider.empty()) {
    if (!registry->by_name_.contains(options.default_provider)) {
      std::string known;
      for (const Entry& e : registry->entries_) known += (known.empty() ? "" : ", ") + e.config.name;
      return Status::InvalidArgument("default LLM provider '" + options.default_provider + "' is not configured (known: " +
                                     (known.empty() ? "none" : known) + ")");
    }
    registry->default_ = options.default_provider;
  } else {
    for (const Entry& e : registry->entries_) {
      if ((!e.config.api_key_env.empty() && e.has_key) || !e.config.api_key_secret.empty()) {
        registry->default_ = e.config.name;
        break;
      }
    }
  }
  return registry;
}

Result<ResolvedModel> ProviderRegistry::Resolve(std::string_view model, bool own_key) const {
  const Entry* entry = nullptr;
  std::string_view name = model;
  if (size_t slash = model.find('/'); slash != std::string_view::npos) {
    if (auto it = by_name_.find(model.substr(0, slash)); it != by_name_.end()) {
      entry = &entries_[it->second];
      name = model.substr(slash + 1);
    }
  }
  if (entry == nullptr) {
    if (default_.empty()) {
      return Status::FailedPrecondition(
          "no LLM provider is configured: set CAIRN_LLM_BASE_URL (and CAIRN_LLM_API_KEY) for any OpenAI-compatible "
          "endpoint, or OPENAI_API_KEY / OPENROUTER_API_KEY, or name a provider in the model (ollama/llama3.2)");
    }
    entry = &entries_[by_name_.find(default_)->second];
  }
  const ProviderConfig& config = entry->config;
  if (!own_key && config.api_key_secret.empty() && !config.api_key_env.empty() && !entry->has_key) {
    return Status::FailedPrecondition("provider " + config.name + " needs an API key: set " + config.api_key_env);
  }
  ResolvedModel out;
  out.provider = entry->provider.get();
  out.provider_name = config.name;
  out.api_key_secret = config.api_key_secret;
  out.model = name.empty() ? config.default_model : std::string(name);
  if (out.model.empty()) {
    return Status::InvalidArgument("no model given and provider " + config.name +
                                   " has no default model: name one (e.g. " + config.name + "/<model>)");
  }
  return out;
}

std::string ProviderRegistry::Describe() const {
  std::string out = "LLM providers:";
  for (const Entry& e : entries_) {
    const ProviderConfig& c = e.config;
    out += (&e == &entries_.front() ? " " : ", ") + c.name + " (" + c.base_url + ", ";
    if (!c.api_key_secret.empty()) {
      out += "key from each tenant's secret " + c.api_key_secret;
    } else if (c.name == kCustom && c.api_key_env.empty()) {
      out += e.has_key ? "key given" : "no key";
    } else if (c.api_key_env.empty()) {
      out += "no key needed";
    } else {
      out += c.api_key_env + (e.has_key ? " set" : " not set");
    }
    if (!c.default_model.empty()) out += ", default model " + c.default_model;
    out += ")";
  }
  if (entries_.empty()) out += " none";
  out += "; default: " + (default_.empty() ? std::string("none") : default_);
  return out;
}

std::vector<ProviderConfig> ProviderRegistry::providers() const {
  std::vector<ProviderConfig> out;
  for (const Entry& e : entries_) out.push_back(e.config);
  return out;
}

}  // namespace cairn::exec::llm
