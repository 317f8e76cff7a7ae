// The built-in tools (docs/executors.md): echo, sleep, http_request, breadcrumb_create,
// breadcrumb_get, breadcrumb_query, breadcrumb_update, wait_for and search. Each is registered as a
// tool.v1 definition at first start (runtime "builtin"), so it can be listed, changed (timeout,
// concurrency, selectors) or deleted like any other tool.
#pragma once

#include <boost/json/object.hpp>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "bus/event_bus.h"
#include "exec/tools/process_sandbox.h"
#include "exec/tools/tool.h"
#include "model/limits.h"
#include "model/secret_ref.h"
#include "net/outbound_policy.h"
#include "search/searcher.h"
#include "store/store.h"

namespace cairn::exec {

struct BuiltinToolOptions {
  std::vector<std::string> http_allow_list;  // http_request: see net::UrlAllowed (empty: nothing allowed)
  // Where http_request and http tools may connect (net/outbound_policy.h), on top of the
  // allow-list; null is the default policy.
  std::shared_ptr<const net::OutboundPolicy> outbound_policy;
  size_t http_max_response_bytes = 1 << 20;
  model::Limits limits;                      // breadcrumb_* tools validate like the HTTP API;
                                             // process tools' env follows limits.tool_env
  ProcessToolOptions process;                // process tools (MakeTool): tool user, run directories
  std::shared_ptr<McpToolCaller> mcp;        // mcp tools (MakeTool); null: they answer unavailable
  const search::Searcher* searcher = nullptr;  // the search tool's; null: it answers kUnavailable
  // The value of secret `name` of `tenant` (auth::SecretStore::Resolve), for process tools'
  // secret_env and http tools' secret headers; null: no secrets (a tool naming one fails saying so).
  model::SecretResolver resolve_secret;
};

struct BuiltinToolDeps {
  store::Store& store;
  bus::EventBus& bus;
  const Clock& clock;
  BuiltinToolOptions options;
};

// The tool.v1 contexts registered at first start, one per built-in tool.
std::vector<boost::json::object> BuiltinToolDefinitions();

bool IsBuiltinTool(std::string_view name);

// The implementation of built-in `name`, or null when there is none. `deps` must outlive it.
std::unique_ptr<Tool> MakeBuiltinTool(std::string_view name, const BuiltinToolDeps& deps);

// Implementations in their own files.
std::unique_ptr<Tool> MakeHttpRequestTool(const BuiltinToolDeps& deps);
std::unique_ptr<Tool> MakeWaitForTool(const BuiltinToolDeps& deps);
std::unique_ptr<Tool> MakeBreadcrumbTool(std::string_view name, const BuiltinToolDeps& deps);
std::unique_ptr<Tool> MakeSearchTool(const BuiltinToolDeps& deps);

// Waits on `cancelled` for up to `duration`; returns false when cancelled first.
bool SleepUnlessCancelled(const std::atomic<bool>& cancelled, std::chrono::milliseconds duration);

}  // namespace cairn::exec
