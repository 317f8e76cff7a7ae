#include "exec/mcp/mcp_client.h"

#include <algorithm>

#include "base/log.h"

namespace cairn::exec::mcp {
namespace json = boost::json;

namespace {

constexpr auto kCancelPoll = std::chrono::milliseconds(20);
constexpr auto kNotifyTimeout = std::chrono::milliseconds(5000);

std::string StringAt(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : "";
}

std::string ErrorText(const json::value& error) {
  if (!error.is_object()) return "an error without details";
  std::string message = StringAt(error.as_object(), "message");
  const json::value* code = error.as_object().if_contains("code");
  if (code && code->is_int64()) message += " (" + std::to_string(code->as_int64()) + ")";
  return message;
}

}  // namespace

McpClient::McpClient(std::unique_ptr<McpTransport> transport) : transport_(std::move(transport)) {}

McpClient::~McpClient() { Close(); }

Status McpClient::Connect(std::chrono::milliseconds timeout) {
  CAIRN_RETURN_IF_ERROR(transport_->Open([this](json::value message) { HandleMessage(std::move(message)); },
                                         [this](const std::string& why) { HandleClosed(why); }));
  json::object params{
      {"protocolVersion", kProtocolVersions[0]},
      {"capabilities", json::object{}},
      {"clientInfo", json::object{{"name", "cairn"}, {"version", "0.1"}}},
  };
  CAIRN_ASSIGN_OR_RETURN(json::value result, Request("initialize", std::move(params), timeout, nullptr));
  if (!result.is_object()) return Status::Unavailable("the MCP server answered initialize without a result object");
  std::string version = StringAt(result.as_object(), "protocolVersion");
  bool known = std::any_of(std::begin(kProtocolVersions), std::end(kProtocolVersions),
                           [&](const char* v) { return version == v; });
  if (!known) {
    return Status(StatusCode::kFailedPrecondition, "the MCP server speaks protocol version '" + version +
                                                       "'; cairn speaks 2025-11-25, 2025-06-18 and 2025-03-26");
  }
  {
    std::lock_guard lock(mu_);
    protocol_version_ = version;
    if (const json::value* info = result.as_object().if_contains("serverInfo"); info && info->is_object()) {
      server_info_ = info->as_object();
    }
  }
  transport_->SetProtocolVersion(version);
  CAIRN_RETURN_IF_ERROR(Notify("notifications/initialized", {}));
  transport_->Listen();
  return Status::Ok();
}

Result<std::vector<McpTool>> McpClient::ListTools(std::chrono::milliseconds timeout, size_t max_tools) {
  std::vector<McpTool> tools;
  std::string cursor;
  for (int page = 0; page < 100; ++page) {
    json::object params;
    if (!cursor.empty()) params["cursor"] = cursor;
    CAIRN_ASSIGN_OR_RETURN(json::value result, Request("tools/list", std::move(params), timeout, nullptr));
    const json::value* list = result.is_object() ? result.as_object().if_contains("tools") : nullptr;
    if (!list || !list->is_array()) return Status::Unavailable("the MCP server answered tools/list without tools");
    for (const json::value& item : list->as_array()) {
      if (!item.is_object()) continue;
      const json::object& o = item.as_object();
      McpTool tool;
      tool.name = StringAt(o, "name");
      if (tool.name.empty()) continue;
      tool.title = StringAt(o, "title");
      tool.description = StringAt(o, "description");
      const json::value* input = o.if_contains("inputSchema");
      tool.input_schema = input && input->is_object() ? *input : json::value(json::object{{"type", "object"}});
      if (const json::value* output = o.if_contains("outputSchema"); output && output->is_object()) {
        tool.output_schema = *output;
      }
      if (tools.size() >= max_tools) {
        return Status::ResourceExhausted("the MCP server lists more than " + std::to_string(max_tools) + " tools");
      }
      tools.push_back(std::move(tool));
    }
    cursor = StringAt(result.as_object(), "nextCursor");
    if (cursor.empty()) return tools;
  }
  return Status::ResourceExhausted("the MCP server's tools/list did not end after 100 pages");
}

Result<json::object> McpClient::CallTool(const std::string& name, const json::value& arguments,
                                         std::chrono::milliseconds timeout, const std::atomic<bool>* cancel,
                                         ProgressCallback progress) {
  json::object params{{"name", name}, {"arguments", arguments.is_object() ? arguments : json::object{}}};
  CAIRN_ASSIGN_OR_RETURN(json::value result, Request("tools/call", std::move(params), timeout, cancel, std::move(progress)));
  if (!result.is_object()) return Status::Unavailable("the MCP server answered tools/call without a result object");
  return std::move(result.as_object());
}

Result<json::value> McpClient::Request(const std::string& method, json::object params,
                                       std::chrono::milliseconds timeout, const std::atomic<bool>* cancel,
                                       ProgressCallback progress) {
  auto pending = std::make_shared<Pending>();
  pending->progress = std::move(progress);
  // On every way out (after the lock below is released): no progress callback from now on.
  struct FinishProgress {
    Pending& pending;
    ~FinishProgress() {
      std::lock_guard lock(pending.progress_mu);
      pending.finished = true;
    }
  } finish_progress{*pending};
  int64_t id;
  {
    std::lock_guard lock(mu_);
    if (closed_) return Status::Unavailable("the MCP connection is closed: " + close_reason_);
    id = next_id_++;
    pending_[id] = pending;
  }
  if (pending->progress) params["_meta"] = json::object{{"progressToken", id}};
  json::object message{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto forget = [&] {
    std::lock_guard lock(mu_);
    pending_.erase(id);
  };
  auto cancelled_text = [&](const std::string& reason) {
    (void)Notify("notifications/cancelled", json::object{{"requestId", id}, {"reason", reason}});
  };
  Status sent = transport_->Send(message, timeout, cancel);
  std::unique_lock lock(mu_);
  if (!sent.ok() && !pending->done) {
    pending_.erase(id);
    lock.unlock();
    const bool was_cancelled = cancel != nullptr && cancel->load();
    const bool timed_out = std::chrono::steady_clock::now() >= deadline;
    if (was_cancelled || timed_out) cancelled_text(was_cancelled ? "cancelled by cairn" : "timed out");
    if (was_cancelled) return Status::Unavailable(method + " cancelled");
    if (timed_out) return Status::Unavailable(method + " timed out after " + std::to_string(timeout.count()) + " ms");
    return sent;
  }
  while (!pending->done && !closed_) {
    if (cancel != nullptr && cancel->load()) break;
    if (std::chrono::steady_clock::now() >= deadline) break;
    auto wake = std::min(deadline, std::chrono::steady_clock::now() + kCancelPoll);
    cv_.wait_until(lock, cancel != nullptr ? wake : deadline);
  }
  if (!pending->done) {
    pending_.erase(id);
    const bool was_closed = closed_;
    const std::string reason = close_reason_;
    lock.unlock();
    if (was_closed) return Status::Unavailable("the MCP connection closed during " + method + ": " + reason);
    const bool was_cancelled = cancel != nullptr && cancel->load();
    cancelled_text(was_cancelled ? "cancelled by cairn" : "timed out");
    if (was_cancelled) return Status::Unavailable(method + " cancelled");
    return Status::Unavailable(method + " timed out after " + std::to_string(timeout.count()) + " ms");
  }
  lock.unlock();
  forget();
  const json::object& response = pending->response.as_object();
  if (const json::value* error = response.if_contains("error")) {
    return Status::Unavailable(method + " failed: " + ErrorText(*error));
  }
  const json::value* result = response.if_contains("result");
  return result ? *result : json::value(json::object{});
}

Status McpClient::Notify(const std::string& method, json::object params) {
  json::object message{{"jsonrpc", "2.0"}, {"method", method}};
  if (!params.empty()) message["params"] = std::move(params);
  return transport_->Send(message, kNotifyTimeout, nullptr);
}

void McpClient::HandleMessage(json::value message) {
  if (!message.is_object()) return;
  json::object& o = message.as_object();
  const json::value* id = o.if_contains("id");
  std::string method = StringAt(o, "method");
  if (method.empty()) {  // a response
    if (!id || !id->is_int64()) return;
    std::lock_guard lock(mu_);
    auto it = pending_.find(id->as_int64());
    if (it == pending_.end()) return;  // timed out or cancelled meanwhile
    it->second->response = std::move(message);
    it->second->done = true;
    cv_.notify_all();
    return;
  }
  if (id) {  // a request from the server
    json::object reply{{"jsonrpc", "2.0"}, {"id", *id}};
    if (method == "ping") {
      reply["result"] = json::object{};
    } else {
      reply["error"] = json::object{{"code", -32601}, {"message", "cairn does not offer " + method}};
    }
    (void)transport_->Send(reply, kNotifyTimeout, nullptr);
    return;
  }
  if (method == "notifications/tools/list_changed") {
    if (on_tools_changed_) on_tools_changed_();
  } else if (method == "notifications/progress") {
    const json::value* params = o.if_contains("params");
    if (!params || !params->is_object()) return;
    const json::value* token = params->as_object().if_contains("progressToken");
    if (!token || !token->is_int64()) return;
    std::shared_ptr<Pending> pending;
    {
      std::lock_guard lock(mu_);
      auto it = pending_.find(token->as_int64());
      if (it != pending_.end()) pending = it->second;
    }
    if (!pending || !pending->progress) return;
    std::lock_guard lock(pending->progress_mu);
    if (!pending->finished) pending->progress(params->as_object());
  }
}

void McpClient::HandleClosed(const std::string& why) {
  {
    std::lock_guard lock(mu_);
    if (closed_) return;
    closed_ = true;
    close_reason_ = why;
    cv_.notify_all();
  }
  if (on_closed_) on_closed_(why);
}

std::string McpClient::protocol_version() const {
  std::lock_guard lock(mu_);
  return protocol_version_;
}

json::object McpClient::server_info() const {
  std::lock_guard lock(mu_);
  return server_info_;
}

bool McpClient::closed() const {
  std::lock_guard lock(mu_);
  return closed_;
}

std::string McpClient::close_reason() const {
  std::lock_guard lock(mu_);
  return close_reason_;
}

void McpClient::Close() {
  if (close_called_.exchange(true)) return;
  transport_->Close();
  std::lock_guard lock(mu_);
  closed_ = true;
  if (close_reason_.empty()) close_reason_ = "closed by cairn";
  cv_.notify_all();
}

Result<json::value> MapCallResult(const json::object& result) {
  json::array content;
  std::string text;
  if (const json::value* items = result.if_contains("content"); items && items->is_array()) {
    content = items->as_array();
    for (const json::value& item : content) {
      if (!item.is_object() || StringAt(item.as_object(), "type") != "text") continue;
      if (!text.empty()) text += "\n";
      text += StringAt(item.as_object(), "text");
    }
  }
  const json::value* is_error = result.if_contains("isError");
  if (is_error && is_error->is_bool() && is_error->as_bool()) {
    return Status::Internal(text.empty() ? "the MCP tool reported an error" : text);
  }
  json::object output{{"content", std::move(content)}, {"text", text}};
  if (const json::value* structured = result.if_contains("structuredContent"); structured && !structured->is_null()) {
    output["structured"] = *structured;
  }
  return json::value(std::move(output));
}

}  // namespace cairn::exec::mcp
