#include "exec/llm/chat_json.h"

#include <boost/json/array.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>
#include <charconv>
#include <cmath>
#include <optional>

#include "base/json_util.h"

namespace cairn::exec::llm {
namespace json = boost::json;
namespace {

std::string_view View(const json::string& s) { return {s.data(), s.size()}; }

// The member `key` of `obj` as a string: nullopt-like empty view and false when it is absent or
// null, an error when it is something else.
Status GetString(const json::object& obj, std::string_view key, const std::string& where, std::string* out,
                 bool* present = nullptr) {
  if (present != nullptr) *present = false;
  const json::value* v = obj.if_contains(key);
  if (v == nullptr || v->is_null()) return Status::Ok();
  if (!v->is_string()) {
    return Status::InvalidArgument(where + "." + std::string(key) + " must be a string, not " +
                                   std::string(JsonKindName(*v)));
  }
  *out = std::string(View(v->get_string()));
  if (present != nullptr) *present = true;
  return Status::Ok();
}

// A JSON number (or numeric string) as an int64; nullopt for anything else.
std::optional<int64_t> ToInt64(const json::value& v) {
  if (v.is_int64()) return v.get_int64();
  if (v.is_uint64()) {
    if (v.get_uint64() > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<int64_t>(v.get_uint64());
  }
  if (v.is_double()) {
    double d = v.get_double();
    if (std::isfinite(d) && d >= -9e18 && d <= 9e18) return static_cast<int64_t>(d);
    return std::nullopt;
  }
  if (v.is_string()) {
    std::string_view s = View(v.get_string());
    int64_t n = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
    if (ec == std::errc() && end == s.data() + s.size() && !s.empty()) return n;
  }
  return std::nullopt;
}

Result<std::string> ContentFromJson(const json::value& v, const std::string& where) {
  if (v.is_string()) return std::string(View(v.get_string()));
  if (!v.is_array()) return Status::InvalidArgument(where + ".content must be a string, an array of parts or null");
  std::string out;
  for (const json::value& part : v.get_array()) {
    const json::object* p = part.if_object();
    const json::value* text = p != nullptr ? p->if_contains("text") : nullptr;
    if (text == nullptr || !text->is_string()) {
      return Status::InvalidArgument(where + ".content parts must be {type: \"text\", text} objects");
    }
    out += View(text->get_string());
  }
  return out;
}

Result<ToolCallRequest> ToolCallFromJson(const json::value& v, const std::string& where) {
  const json::object* obj = v.if_object();
  if (obj == nullptr) return Status::InvalidArgument(where + " must be an object");
  ToolCallRequest call;
  CAIRN_RETURN_IF_ERROR(GetString(*obj, "id", where, &call.id));
  std::string type;
  CAIRN_RETURN_IF_ERROR(GetString(*obj, "type", where, &type));
  if (!type.empty() && type != "function") return Status::InvalidArgument(where + ".type must be \"function\"");
  const json::value* fn = obj->if_contains("function");
  if (fn == nullptr || !fn->is_object()) return Status::InvalidArgument(where + ".function must be an object");
  const json::object& f = fn->get_object();
  CAIRN_RETURN_IF_ERROR(GetString(f, "name", where + ".function", &call.name));
  const json::value* args = f.if_contains("arguments");
  if (args != nullptr && args->is_string()) {
    call.arguments = std::string(View(args->get_string()));
  } else if (args != nullptr && args->is_object()) {
    call.arguments = json::serialize(*args);  // some servers send the arguments as an object
  } else if (args != nullptr && !args->is_null()) {
    return Status::InvalidArgument(where + ".function.arguments must be a string");
  }
  return call;
}

int HttpCodeOf(const json::object& error) {
  for (std::string_view key : {"code", "status"}) {
    if (const json::value* v = error.if_contains(key); v != nullptr) {
      if (std::optional<int64_t> n = ToInt64(*v); n && *n >= 100 && *n <= 599) return static_cast<int>(*n);
      if (v->is_string()) {  // OpenAI's symbolic codes
        std::string_view s = View(v->get_string());
        if (s == "invalid_api_key") return 401;
        if (s == "model_not_found") return 404;
        if (s == "context_length_exceeded" || s == "invalid_request_error") return 400;
        if (s == "rate_limit_exceeded") return 429;
      }
    }
  }
  return 0;
}

std::string Clean(std::string_view text, size_t max_chars) {
  std::string out;
  bool cut = text.size() > max_chars;
  if (cut) {
    size_t end = max_chars;
    // Back off to the start of a UTF-8 sequence so the cut never splits a character.
    while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
    text = text.substr(0, end);
  }
  out.reserve(text.size() + 3);
  for (char c : text) out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? ' ' : c;
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (cut) out += "…";
  return out;
}

}  // namespace

json::object MessageToJson(const ChatMessage& message) {
  json::object out;
  out["role"] = message.role;
  if (message.has_content) {
    out["content"] = message.content;
  } else {
    out["content"] = nullptr;
  }
  if (!message.tool_calls.empty()) {
    json::array calls;
    for (const ToolCallRequest& call : message.tool_calls) {
      json::object fn;
      fn["name"] = call.name;
      fn["arguments"] = call.arguments;
      json::object c;
      c["id"] = call.id;
      c["type"] = "function";
      c["function"] = std::move(fn);
      calls.push_back(std::move(c));
    }
    out["tool_calls"] = std::move(calls);
  }
  if (!message.tool_call_id.empty()) out["tool_call_id"] = message.tool_call_id;
  return out;
}

Result<ChatMessage> MessageFromJson(const json::value& value) {
  const json::object* obj = value.if_object();
  if (obj == nullptr) return Status::InvalidArgument("message must be an object, not " + std::string(JsonKindName(value)));
  ChatMessage message;
  CAIRN_RETURN_IF_ERROR(GetString(*obj, "role", "message", &message.role));
  if (message.role.empty()) return Status::InvalidArgument("message.role is missing");
  const json::value* content = obj->if_contains("content");
  if (content == nullptr || content->is_null()) {
    message.has_content = false;
  } else {
    CAIRN_ASSIGN_OR_RETURN(message.content, ContentFromJson(*content, "message"));
  }
  if (const json::value* calls = obj->if_contains("tool_calls"); calls != nullptr && !calls->is_null()) {
    if (!calls->is_array()) return Status::InvalidArgument("message.tool_calls must be an array");
    size_t i = 0;
    for (const json::value& call : calls->get_array()) {
      CAIRN_ASSIGN_OR_RETURN(ToolCallRequest parsed,
                             ToolCallFromJson(call, "message.tool_calls[" + std::to_string(i++) + "]"));
      message.tool_calls.push_back(std::move(parsed));
    }
  }
  CAIRN_RETURN_IF_ERROR(GetString(*obj, "tool_call_id", "message", &message.tool_call_id));
  return message;
}

json::object RequestToJson(const ChatRequest& request) {
  json::object out;
  out["model"] = request.model;
  json::array messages;
  messages.reserve(request.messages.size());
  for (const ChatMessage& m : request.messages) messages.push_back(MessageToJson(m));
  out["messages"] = std::move(messages);
  if (!request.tools.empty()) {
    json::array tools;
    for (const ToolSpec& tool : request.tools) {
      json::object fn;
      fn["name"] = tool.name;
      fn["description"] = tool.description;
      fn["parameters"] = tool.parameters;
      json::object t;
      t["type"] = "function";
      t["function"] = std::move(fn);
      tools.push_back(std::move(t));
    }
    out["tools"] = std::move(tools);
  }
  if (!request.tool_choice.is_null()) out["tool_choice"] = request.tool_choice;
  if (request.temperature) out["temperature"] = *request.temperature;
  if (request.max_tokens) out["max_tokens"] = *request.max_tokens;
  if (!request.response_format.is_null()) out["response_format"] = request.response_format;
  out["stream"] = request.stream;
  if (request.stream) out["stream_options"] = json::object{{"include_usage", true}};
  return out;
}

Usage UsageFromJson(const json::value& usage) {
  const json::object* u = usage.if_object();
  if (u == nullptr) return {};
  auto number = [u](std::string_view key) -> int64_t {
    const json::value* v = u->if_contains(key);
    return v != nullptr ? ToInt64(*v).value_or(0) : 0;
  };
  return {number("prompt_tokens"), number("completion_tokens"), number("total_tokens")};
}

Status EndpointError(const json::value& error) {
  std::string text;
  int code = 0;
  if (const json::object* obj = error.if_object()) {
    code = HttpCodeOf(*obj);
    const json::value* msg = obj->if_contains("message");
    text = msg != nullptr && msg->is_string() ? Clean(View(msg->get_string()), 500) : Clean(json::serialize(error), 300);
  } else if (error.is_string()) {
    text = Clean(View(error.get_string()), 500);
  } else {
    text = Clean(json::serialize(error), 300);
  }
  std::string message = "endpoint reported an error: " + (text.empty() ? std::string("(no message)") : text);
  if (code == 400 || code == 404 || code == 422) return Status::InvalidArgument(std::move(message));
  if (code == 401 || code == 403) return Status::FailedPrecondition(std::move(message));
  return Status::Unavailable(std::move(message));
}

std::string ErrorBodyText(std::string_view body, size_t max_chars) {
  Result<json::value> parsed = ParseJson(body, kMaxReplyJsonDepth);
  if (parsed.ok() && parsed->is_object()) {
    const json::object& obj = parsed->get_object();
    const json::value* candidates[] = {nullptr, obj.if_contains("error"), obj.if_contains("message"),
                                       obj.if_contains("detail")};
    if (candidates[1] != nullptr && candidates[1]->is_object()) {
      candidates[0] = candidates[1]->get_object().if_contains("message");
    }
    for (const json::value* v : candidates) {
      if (v != nullptr && v->is_string() && !v->get_string().empty()) return Clean(View(v->get_string()), max_chars);
    }
  }
  std::string_view trimmed = body;
  while (!trimmed.empty() && (trimmed.back() == '\n' || trimmed.back() == '\r' || trimmed.back() == ' ')) {
    trimmed.remove_suffix(1);
  }
  return Clean(trimmed, max_chars);
}

Result<ChatResponse> ParseCompletion(std::string_view body) {
  Result<json::value> parsed = ParseJson(body, kMaxReplyJsonDepth);
  if (!parsed.ok()) return Status::Internal("reply is not JSON: " + parsed.status().message());
  const json::object* obj = parsed->if_object();
  if (obj == nullptr) return Status::Internal("reply is not a chat completion: a JSON " + std::string(JsonKindName(*parsed)));
  if (const json::value* error = obj->if_contains("error"); error != nullptr && !error->is_null()) {
    return EndpointError(*error);
  }
  const json::value* choices = obj->if_contains("choices");
  if (choices == nullptr || !choices->is_array() || choices->get_array().empty()) {
    return Status::Internal("reply is not a chat completion: no choices");
  }
  const json::object* choice = choices->get_array()[0].if_object();
  const json::value* message = choice != nullptr ? choice->if_contains("message") : nullptr;
  if (message == nullptr || !message->is_object()) {
    return Status::Internal("reply is not a chat completion: choices[0] has no message");
  }
  ChatResponse response;
  // The role is implied; some servers leave it out of the reply.
  json::value with_role = *message;
  if (!with_role.get_object().contains("role")) with_role.get_object()["role"] = "assistant";
  Result<ChatMessage> reply = MessageFromJson(with_role);
  if (!reply.ok()) return Status::Internal("reply is not a chat completion: " + reply.status().message());
  response.message = std::move(reply).value();
  Status status = GetString(*choice, "finish_reason", "choices[0]", &response.finish_reason);
  if (status.ok()) status = GetString(*obj, "model", "reply", &response.model);
  if (!status.ok()) return Status::Internal("reply is not a chat completion: " + status.message());
  if (const json::value* usage = obj->if_contains("usage"); usage != nullptr) response.usage = UsageFromJson(*usage);
  return response;
}

}  // namespace cairn::exec::llm
