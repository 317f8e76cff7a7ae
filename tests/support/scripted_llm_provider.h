// ScriptedLlmProvider: an in-process LlmProvider (exec/llm/llm_provider.h) that answers each
// Complete from a script, in order, and records every request. For unit tests of the agent loop:
// no HTTP, no node.
//
//   ScriptedLlmProvider llm;
//   llm.Reply(ToolCallReply({{"c1", "echo", R"({"x":1})"}})).Reply(AnswerReply("done"));
//   ... run ...
//   EXPECT_EQ(llm.requests().size(), 2u);
//
// A call beyond the script fails with kInternal ("the script has no reply for call N"), so a test
// that expects no further model call sees one as a failure.
#pragma once

#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "exec/llm/llm_provider.h"

namespace cairn::test_support {

// A final answer: `content`, finish_reason "stop", `usage` tokens.
exec::llm::ChatResponse AnswerReply(std::string content, exec::llm::Usage usage = {10, 5, 15});
// Tool calls: an assistant message without content, finish_reason "tool_calls".
exec::llm::ChatResponse ToolCallReply(std::vector<exec::llm::ToolCallRequest> calls,
                                      exec::llm::Usage usage = {10, 5, 15});

class ScriptedLlmProvider final : public exec::llm::LlmProvider {
 public:
  // The next call returns `reply`; `then` (if set) runs on the calling thread just before it
  // returns (e.g. to cancel the run at that moment).
  ScriptedLlmProvider& Reply(exec::llm::ChatResponse reply, std::function<void()> then = {});
  // The next call fails with `status` (an endpoint error as OpenAiProvider reports it).
  ScriptedLlmProvider& Fail(Status status);

  Result<exec::llm::ChatResponse> Complete(const exec::llm::ChatRequest& request,
                                           const exec::llm::CallOptions& options) override;

  std::vector<exec::llm::ChatRequest> requests() const;
  size_t calls() const;
  // Script entries not used yet.
  size_t remaining() const;

 private:
  mutable std::mutex mu_;
  struct Entry {
    Result<exec::llm::ChatResponse> result;
    std::function<void()> then;
  };
  std::deque<Entry> script_;
  std::vector<exec::llm::ChatRequest> requests_;
};

}  // namespace cairn::test_support
