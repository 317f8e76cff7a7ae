// LlmProvider: one chat-completions call to a language model (DESIGN.md §5, docs/agents.md).
//
// The seam between the agent loop and a model endpoint. The one real implementation speaks the
// OpenAI-compatible chat-completions protocol (openai_provider.h), which OpenAI, OpenRouter,
// Ollama, vLLM and llama.cpp's server all accept. Tests use the same implementation against mock
// servers, and the agent loop's unit tests an in-process scripted provider (tests/support);
// nothing else implements this interface in the product.
#pragma once

#include <atomic>
#include <boost/json/value.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace cairn::exec::llm {

// A tool call the model asked for. `arguments` is the JSON text exactly as the model produced
// it (it may be invalid JSON: the agent loop reports that back to the model).
struct ToolCallRequest {
  std::string id;
  std::string name;
  std::string arguments;

  bool operator==(const ToolCallRequest&) const = default;
};

// One chat message. role: "system" | "user" | "assistant" | "tool".
struct ChatMessage {
  std::string role;
  std::string content;                      // "" with has_content false: JSON null (assistant tool calls)
  bool has_content = true;
  std::vector<ToolCallRequest> tool_calls;  // assistant only
  std::string tool_call_id;                 // tool only

  bool operator==(const ChatMessage&) const = default;
};

// A tool offered to the model: name, description and a JSON Schema for its arguments.
struct ToolSpec {
  std::string name;
  std::string description;
  boost::json::value parameters;  // an object schema
};

struct ChatRequest {
  std::string model;  // the model name as the endpoint knows it (no provider prefix)
  std::vector<ChatMessage> messages;
  std::vector<ToolSpec> tools;          // omitted from the request when empty
  boost::json::value tool_choice;       // null: omitted; "auto" | "none" | "required" | object
  std::optional<double> temperature;
  std::optional<int64_t> max_tokens;
  boost::json::value response_format;   // null: omitted; e.g. {"type":"json_object"}
  bool stream = true;                   // stream: true, with stream_options.include_usage
};

struct Usage {
  int64_t prompt = 0;
  int64_t completion = 0;
  int64_t total = 0;
};

struct ChatResponse {
  ChatMessage message;        // the assistant's reply: content and/or tool_calls, assembled
  std::string finish_reason;  // "stop", "tool_calls", "length", ... ("" when the endpoint sent none)
  Usage usage;                // zeros when the endpoint reported none
  std::string model;          // as reported by the endpoint
  int attempts = 1;           // HTTP attempts made (retries + 1)
};

struct CallOptions {
  // Checked while waiting (between retries, while reading a stream): when it becomes true the
  // call returns kUnavailable("cancelled") promptly, aborting a transfer in progress.
  const std::atomic<bool>* cancelled = nullptr;
  // With stream: called with each content delta as it arrives (on the calling thread).
  std::function<void(std::string_view delta)> on_delta;
  // This call's API key instead of the provider's (a tenant's secret, resolved for this call);
  // masked in every message like the provider's own. `api_key_source` names where it came from,
  // for messages ("secret OPENAI_KEY of tenant acme").
  std::optional<std::string> api_key = std::nullopt;
  std::string api_key_source = {};
};

class LlmProvider {
 public:
  virtual ~LlmProvider() = default;
  // Sends `request` and returns the assembled reply. Errors (the message always says what to
  // check, naming the provider and base URL):
  //   kInvalidArgument     400/404/422 from the endpoint (bad request or unknown model), not retried
  //   kFailedPrecondition  401/403 (missing or wrong API key), not retried
  //   kUnavailable         connection errors, timeouts, 429 and 5xx after the retries ran out;
  //                        cancellation
  //   kInternal            a reply that is not a chat completion
  virtual Result<ChatResponse> Complete(const ChatRequest& request, const CallOptions& options) = 0;
};

}  // namespace cairn::exec::llm
