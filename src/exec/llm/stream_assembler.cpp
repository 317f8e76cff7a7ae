#include "exec/llm/stream_assembler.h"

#include <boost/json/serialize.hpp>
#include <optional>
#include <utility>

#include "base/json_util.h"
#include "exec/llm/chat_json.h"

namespace cairn::exec::llm {
namespace json = boost::json;
namespace {

std::string_view View(const json::string& s) { return {s.data(), s.size()}; }

// The string member `key` of `obj`, or "" when it is absent, null or not a string.
std::string_view StringMember(const json::object& obj, std::string_view key) {
  const json::value* v = obj.if_contains(key);
  return v != nullptr && v->is_string() ? View(v->get_string()) : std::string_view();
}

}  // namespace

StreamAssembler::StreamAssembler(std::function<void(std::string_view)> on_delta, StreamLimits limits)
    : on_delta_(std::move(on_delta)), limits_(limits), parser_(limits.max_line_bytes) {}

Status StreamAssembler::Fail(Status status) {
  error_ = status;
  return status;
}

namespace {

// The parser fails only on a frame over its bound.
Status ParserError(size_t max_line_bytes) {
  return Status::Internal("stream event longer than " + std::to_string(max_line_bytes) + " bytes");
}

}  // namespace

Status StreamAssembler::Feed(std::string_view bytes) {
  if (!error_.ok()) return error_;
  if (done_) return Status::Ok();
  Status parsed = parser_.Feed(bytes);
  CAIRN_RETURN_IF_ERROR(TakeEvents());  // the events completed before a parse error still count
  if (!parsed.ok() && !done_) return Fail(ParserError(limits_.max_line_bytes));
  return Status::Ok();
}

Status StreamAssembler::TakeEvents() {
  while (!done_) {
    std::optional<net::SseEvent> event = parser_.Next();
    if (!event) break;
    if (event->data == "[DONE]") {
      done_ = true;
      break;
    }
    if (Status status = ProcessChunk(event->data); !status.ok()) return Fail(std::move(status));
  }
  return Status::Ok();
}

Status StreamAssembler::Grow(size_t bytes) {
  assembled_ += bytes;
  if (assembled_ > limits_.max_assembled_bytes) {
    return Status::Internal("streamed reply larger than " + std::to_string(limits_.max_assembled_bytes) + " bytes");
  }
  return Status::Ok();
}

Status StreamAssembler::ProcessChunk(std::string_view data) {
  Result<json::value> parsed = ParseJson(data, kMaxReplyJsonDepth);
  if (!parsed.ok()) return Status::Internal("stream chunk is not JSON: " + parsed.status().message());
  const json::object* chunk = parsed->if_object();
  if (chunk == nullptr) return Status::Internal("stream chunk is not an object but a " + std::string(JsonKindName(*parsed)));
  ++chunks_;
  if (const json::value* error = chunk->if_contains("error"); error != nullptr && !error->is_null()) {
    return EndpointError(*error);
  }
  if (std::string_view model = StringMember(*chunk, "model"); !model.empty()) model_ = model;
  if (const json::value* usage = chunk->if_contains("usage"); usage != nullptr && usage->is_object()) {
    usage_ = UsageFromJson(*usage);
  }
  const json::value* choices = chunk->if_contains("choices");
  if (choices == nullptr || !choices->is_array() || choices->get_array().empty()) return Status::Ok();
  const json::object* choice = choices->get_array()[0].if_object();
  if (choice == nullptr) return Status::Ok();
  if (std::string_view reason = StringMember(*choice, "finish_reason"); !reason.empty()) finish_reason_ = reason;
  const json::value* delta_value = choice->if_contains("delta");
  const json::object* delta = delta_value != nullptr ? delta_value->if_object() : nullptr;
  if (delta == nullptr) return Status::Ok();

  if (std::string_view content = StringMember(*delta, "content"); !content.empty()) {
    CAIRN_RETURN_IF_ERROR(Grow(content.size()));
    content_.append(content);
    delivered_ = true;
    if (on_delta_) on_delta_(content);
  }
  const json::value* calls = delta->if_contains("tool_calls");
  if (calls == nullptr || !calls->is_array()) return Status::Ok();
  for (const json::value& call_value : calls->get_array()) {
    const json::object* call = call_value.if_object();
    if (call == nullptr) continue;
    std::string_view id = StringMember(*call, "id");
    int64_t index = 0;
    if (const json::value* i = call->if_contains("index"); i != nullptr && i->is_int64()) {
      index = i->get_int64();
    } else if (i != nullptr && i->is_uint64()) {
      return Status::Internal("stream chunk has a tool call index out of range");
    } else if (!tool_calls_.empty()) {
      // No index (some servers): a new id starts a new call, anything else continues the last one.
      auto last = std::prev(tool_calls_.end());
      index = !id.empty() && id != last->second.id ? last->first + 1 : last->first;
    }
    auto it = tool_calls_.find(index);
    if (it == tool_calls_.end()) {
      if (tool_calls_.size() >= limits_.max_tool_calls) {
        return Status::Internal("streamed reply has more than " + std::to_string(limits_.max_tool_calls) + " tool calls");
      }
      it = tool_calls_.emplace(index, ToolCallRequest{}).first;
    }
    ToolCallRequest& target = it->second;
    if (!id.empty() && target.id.empty()) {
      CAIRN_RETURN_IF_ERROR(Grow(id.size()));
      target.id = id;
    }
    const json::value* fn_value = call->if_contains("function");
    const json::object* fn = fn_value != nullptr ? fn_value->if_object() : nullptr;
    if (fn == nullptr) continue;
    if (std::string_view name = StringMember(*fn, "name"); !name.empty() && target.name.empty()) {
      CAIRN_RETURN_IF_ERROR(Grow(name.size()));
      target.name = name;
    }
    if (const json::value* args = fn->if_contains("arguments"); args != nullptr && args->is_string()) {
      CAIRN_RETURN_IF_ERROR(Grow(args->get_string().size()));
      target.arguments.append(View(args->get_string()));
    } else if (args != nullptr && args->is_object()) {
      std::string text = json::serialize(*args);  // some servers send the arguments whole, as an object
      CAIRN_RETURN_IF_ERROR(Grow(text.size()));
      target.arguments.append(text);
    }
  }
  return Status::Ok();
}

Result<ChatResponse> StreamAssembler::Finish() {
  if (!error_.ok()) return error_;
  if (!done_) {
    // A last event without its blank line (or its line end) still counts.
    Status parsed = parser_.End();
    CAIRN_RETURN_IF_ERROR(TakeEvents());
    if (!parsed.ok() && !done_) return Fail(ParserError(limits_.max_line_bytes));
  }
  if (chunks_ == 0) return Fail(Status::Internal("stream ended without any chunk"));
  if (!done_ && finish_reason_.empty()) {
    return Fail(Status::Unavailable("stream ended before the reply was complete (no finish_reason and no [DONE])"));
  }
  ChatResponse response;
  response.message.role = "assistant";
  response.message.content = std::move(content_);
  for (auto& [index, call] : tool_calls_) response.message.tool_calls.push_back(std::move(call));
  response.message.has_content = !response.message.content.empty() || response.message.tool_calls.empty();
  response.finish_reason = std::move(finish_reason_);
  response.usage = usage_;
  response.model = std::move(model_);
  return response;
}

}  // namespace cairn::exec::llm
