#include "exec/mcp/mcp_manager.h"

#include <optional>

#include "base/log.h"
#include "exec/mcp/mcp_server_runner.h"
#include "exec/mcp/tool_materializer.h"
#include "model/reserved.h"

namespace cairn::exec::mcp {
namespace json = boost::json;

namespace {

constexpr size_t kReadBatch = 256;
constexpr int64_t kWakeLag = 4096;

bool IsServerEvent(const model::Event& event) {
  return event.schema_name && *event.schema_name == model::kMcpServerSchema;
}

}  // namespace

McpManager::McpManager(store::Store& store, bus::EventBus& bus, McpManagerOptions options)
    : store_(store), bus_(bus), options_(std::move(options)) {}

McpManager::~McpManager() { Stop(); }

bool McpManager::started() const {
  std::lock_guard lock(mu_);
  return started_ && !stop_;
}

Status McpManager::Start(const std::vector<std::string>& tenants) {
  {
    std::lock_guard lock(mu_);
    started_ = true;
  }
  const int64_t start_seq = bus_.LastSeq();
  subscription_ = bus_.SubscribeWhen(
      [this] {
        std::lock_guard lock(mu_);
        woken_ = true;
        cv_.notify_all();
      },
      [](const model::Event& event) { return IsServerEvent(event); }, kWakeLag);
  std::vector<std::string> owners = tenants;
  if (owners.empty()) owners.push_back(std::string(model::kDefaultTenant));
  for (const std::string& owner : owners) {
    model::BreadcrumbQuery query;
    query.schema_name = std::string(model::kMcpServerSchema);
    query.include_context = true;
    query.limit = 200;
    std::vector<std::string> names;
    while (true) {
      CAIRN_ASSIGN_OR_RETURN(store::Page page, store_.List(owner, query));
      for (const auto& crumb : page.items) {
        Connect(owner, crumb.id, crumb.context);
        auto def = model::ParseMcpServerDefinition(crumb.context, options_.limits);
        if (def.ok()) names.push_back(def->name);
      }
      if (!page.next_cursor) break;
      query.cursor = page.next_cursor;
    }
    if (Status removed = RemoveToolsOfOtherServers(store_, owner, names); !removed.ok()) {
      CAIRN_LOG_WARN("MCP: cannot remove the tools of removed servers of tenant {}: {}", owner, removed.message());
    }
  }
  thread_ = std::thread([this, start_seq] { Loop(start_seq); });
  return Status::Ok();
}

void McpManager::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stop_ && !thread_.joinable() && by_name_.empty()) return;
    stop_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
  subscription_.reset();
  std::map<ServerKey, std::shared_ptr<McpServerRunner>> runners;
  {
    std::lock_guard lock(mu_);
    runners.swap(by_name_);
    name_of_id_.clear();
  }
  for (auto& [name, runner] : runners) runner->Stop();
}

void McpManager::Loop(int64_t after) {
  while (true) {
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stop_ || woken_; });
      if (stop_) return;
      woken_ = false;
    }
    while (true) {
      auto events = bus_.Read(after, kReadBatch);
      if (!events.ok()) {
        CAIRN_LOG_WARN("MCP: cannot read events: {}", events.status().message());
        break;
      }
      if (events->empty()) break;
      for (const auto& event : *events) {
        after = event->seq;
        if (IsServerEvent(*event)) Apply(*event);
      }
    }
  }
}

void McpManager::Apply(const model::Event& event) {
  if (event.type == "breadcrumb.deleted") {
    Disconnect(event.breadcrumb_id, true);
    return;
  }
  // The event may carry no context (over the event size limit): the record is the truth.
  auto crumb = store_.Get(event.owner_id, event.breadcrumb_id);
  if (!crumb.ok()) {
    Disconnect(event.breadcrumb_id, true);
    return;
  }
  if (crumb->version != event.version) return;  // a later event brings the newer version
  Connect(event.owner_id, crumb->id, crumb->context);
}

void McpManager::Connect(const std::string& owner, const std::string& id, const json::value& context) {
  auto def = model::ParseMcpServerDefinition(context, options_.limits);
  if (!def.ok()) {
    CAIRN_LOG_WARN("MCP server record {} cannot be used: {}", id, def.status().message());
    return;
  }
  std::optional<ServerKey> old_key;
  {
    std::lock_guard lock(mu_);
    auto it = name_of_id_.find(id);
    if (it != name_of_id_.end()) old_key = it->second;
  }
  // A renamed server's tools go; an unchanged name keeps its records for the new runner to sync.
  if (old_key) Disconnect(id, old_key->second != def->name);
  auto runner = std::make_shared<McpServerRunner>(owner, *def, store_, options_);
  {
    std::lock_guard lock(mu_);
    if (stop_) return;
    name_of_id_[id] = ServerKey{owner, def->name};
    by_name_[ServerKey{owner, def->name}] = runner;
  }
  runner->Start();
}

void McpManager::Disconnect(const std::string& id, bool remove_tools) {
  std::shared_ptr<McpServerRunner> runner;
  ServerKey key;
  {
    std::lock_guard lock(mu_);
    auto it = name_of_id_.find(id);
    if (it == name_of_id_.end()) return;
    key = it->second;
    name_of_id_.erase(it);
    auto found = by_name_.find(key);
    if (found != by_name_.end()) {
      runner = found->second;
      by_name_.erase(found);
    }
  }
  if (runner) runner->Stop();
  if (remove_tools) {
    if (Status removed = RemoveTools(store_, key.first, key.second); !removed.ok()) {
      CAIRN_LOG_WARN("MCP server {} of tenant {}: cannot remove its tools: {}", key.second, key.first, removed.message());
    }
  }
}

Result<json::value> McpManager::CallTool(const std::string& server, const std::string& tool, const ToolCall& call) {
  std::shared_ptr<McpServerRunner> runner;
  {
    std::lock_guard lock(mu_);
    auto it = by_name_.find(ServerKey{call.trigger.owner_id, server});
    if (it != by_name_.end()) runner = it->second;
  }
  if (!runner) return Status::Unavailable("there is no MCP server named '" + server + "' (list them: cairn mcp list)");
  return runner->Call(tool, call);
}

std::vector<McpServerState> McpManager::Servers(const std::string& owner) const {
  std::vector<std::shared_ptr<McpServerRunner>> runners;
  {
    std::lock_guard lock(mu_);
    for (const auto& [key, runner] : by_name_) {
      if (key.first == owner) runners.push_back(runner);
    }
  }
  std::vector<McpServerState> states;
  for (const auto& runner : runners) states.push_back(runner->State());
  return states;
}

}  // namespace cairn::exec::mcp
