// The LLM providers of `cairn serve`, from its settings (llm_* in docs/config.md).
#pragma once

#include <memory>

#include "base/settings.h"
#include "base/status.h"
#include "exec/agents/agent_executor.h"
#include "exec/llm/provider_registry.h"

namespace cairn::app {

// The registry described by the settings, with keys read from the process environment.
// kInvalidArgument for a malformed provider list, base URL or default provider.
Result<std::unique_ptr<exec::llm::ProviderRegistry>> MakeProviderRegistry(const Settings& settings);

// How agents resolve their model names through `registry` (which must outlive the resolver).
exec::ModelResolver ResolverFor(const exec::llm::ProviderRegistry& registry);

}  // namespace cairn::app
