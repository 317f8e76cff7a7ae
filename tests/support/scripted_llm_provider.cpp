#include "support/scripted_llm_provider.h"

namespace cairn::test_support {

namespace llm = exec::llm;

llm::ChatResponse AnswerReply(std::string content, llm::Usage usage) {
  llm::ChatResponse reply;
  reply.message = llm::ChatMessage{"assistant", std::move(content), true, {}, ""};
  reply.finish_reason = "stop";
  reply.usage = usage;
  reply.model = "scripted-model";
  return reply;
}

llm::ChatResponse ToolCallReply(std::vector<llm::ToolCallRequest> calls, llm::Usage usage) {
  llm::ChatResponse reply;
  reply.message = llm::ChatMessage{"assistant", "", false, std::move(calls), ""};
  reply.finish_reason = "tool_calls";
  reply.usage = usage;
  reply.model = "scripted-model";
  return reply;
}

ScriptedLlmProvider& ScriptedLlmProvider::Reply(llm::ChatResponse reply, std::function<void()> then) {
  std::lock_guard lock(mu_);
  script_.push_back(Entry{std::move(reply), std::move(then)});
  return *this;
}

ScriptedLlmProvider& ScriptedLlmProvider::Fail(Status status) {
  std::lock_guard lock(mu_);
  script_.push_back(Entry{std::move(status), {}});
  return *this;
}

Result<llm::ChatResponse> ScriptedLlmProvider::Complete(const llm::ChatRequest& request, const llm::CallOptions& options) {
  Entry next{Status::Internal(""), {}};
  {
    std::lock_guard lock(mu_);
    requests_.push_back(request);
    if (script_.empty()) {
      return Status::Internal("the script has no reply for call " + std::to_string(requests_.size()));
    }
    next = std::move(script_.front());
    script_.pop_front();
  }
  // A streamed answer arrives as deltas, as from a real endpoint: two pieces.
  if (next.result.ok() && request.stream && options.on_delta && !next.result->message.content.empty()) {
    const std::string& content = next.result->message.content;
    size_t half = content.size() / 2;
    if (half > 0) options.on_delta(std::string_view(content).substr(0, half));
    options.on_delta(std::string_view(content).substr(half));
  }
  if (next.then) next.then();
  return std::move(next.result);
}

std::vector<llm::ChatRequest> ScriptedLlmProvider::requests() const {
  std::lock_guard lock(mu_);
  return requests_;
}

size_t ScriptedLlmProvider::calls() const {
  std::lock_guard lock(mu_);
  return requests_.size();
}

size_t ScriptedLlmProvider::remaining() const {
  std::lock_guard lock(mu_);
  return script_.size();
}

}  // namespace cairn::test_support
