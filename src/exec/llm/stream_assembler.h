// StreamAssembler: turns the server-sent events of a streaming chat completion back into one
// ChatResponse, delivering content deltas as they arrive.
//
// Fed the raw response body in pieces of any size (a piece may end anywhere, inside a line or a
// UTF-8 character); the result does not depend on where the pieces were cut. The events are read
// by net::SseParser (net/sse_parser.h, the SSE rules are there): the data of each event is one
// chunk, comments and the other fields (event, id, retry) are ignored, and "data: [DONE]" ends the
// stream: everything after it is ignored.
//
// Each event is one chunk: {"model", "choices": [{"delta": {"content", "tool_calls": [{"index",
// "id", "function": {"name", "arguments"}}]}, "finish_reason"}], "usage"}. Content pieces are
// concatenated (on_delta sees each non-empty piece); tool calls are assembled by `index` (the id
// and name come in the first delta of an index, argument pieces are concatenated); the latest
// finish_reason, usage (it may come in a chunk with empty choices) and model win.
//
// Not thread-safe; one instance per response.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "base/status.h"
#include "exec/llm/llm_provider.h"
#include "net/sse_parser.h"

namespace cairn::exec::llm {

struct StreamLimits {
  size_t max_line_bytes = 4 << 20;       // one line, and the data of one event
  size_t max_assembled_bytes = 8 << 20;  // content + tool-call ids, names and arguments
  size_t max_tool_calls = 256;
};

class StreamAssembler {
 public:
  explicit StreamAssembler(std::function<void(std::string_view delta)> on_delta = {}, StreamLimits limits = {});

  // Consumes the next bytes of the body. Errors (after one, the assembler is spent: every later
  // call returns the same error):
  //   kInternal     a line or event over max_line_bytes, a reply over max_assembled_bytes or
  //                 max_tool_calls, an event whose data is not a JSON object;
  //   EndpointError (chat_json.h) for a chunk with an `error` member.
  Status Feed(std::string_view bytes);

  // Ends the body: a last line without its line end and a last event without its blank line are
  // still processed. Returns the assembled reply (role "assistant"; content null when there is
  // none and there are tool calls). kUnavailable when the stream ended before it was complete (no
  // [DONE] and no finish_reason); kInternal when it held no chunk at all. Call it once.
  Result<ChatResponse> Finish();

  // Whether "data: [DONE]" was seen.
  bool done() const { return done_; }
  // Whether any content delta was delivered to on_delta (after that a call must not be retried).
  bool delivered_content() const { return delivered_; }

 private:
  Status Fail(Status status);
  Status TakeEvents();  // processes the events the parser completed, up to [DONE]
  Status ProcessChunk(std::string_view data);
  Status Grow(size_t bytes);

  std::function<void(std::string_view)> on_delta_;
  StreamLimits limits_;
  Status error_;
  net::SseParser parser_;
  bool done_ = false;
  bool delivered_ = false;
  size_t chunks_ = 0;
  size_t assembled_ = 0;
  std::string content_;
  std::map<int64_t, ToolCallRequest> tool_calls_;  // by index
  std::string finish_reason_;
  Usage usage_;
  std::string model_;
};

}  // namespace cairn::exec::llm
