// OpenAiProvider: LlmProvider over the OpenAI-compatible chat-completions HTTP API (through
// net::HttpConnection, net/http_fetch.h).
//
// POSTs RequestToJson(request) to `<base_url>/chat/completions`. With request.stream the reply is
// read as server-sent events through a StreamAssembler (content deltas go to
// CallOptions::on_delta as they arrive); otherwise it is parsed with ParseCompletion. A server
// that answers a streaming request with an application/json completion is accepted too (on_delta
// then sees the whole content once).
//
// Time limits: connect_timeout for the connection; request_timeout for a whole non-streaming
// request; a stream has no overall limit but fails once no byte arrived for stream_idle_timeout
// (counted from the request, so it also bounds the wait for the first byte). Cancellation and
// idleness are checked every 20 ms.
//
// Retries: connection errors, timeouts, 408, 429, 5xx and errors reported inside a stream before
// any content, up to max_attempts HTTP attempts, waiting jitter(min(base_backoff * 2^(n-1),
// max_backoff)) before attempt n+1, or Retry-After (whole seconds) capped at max_backoff when the
// server sends one. Once a content delta has reached on_delta a call is never retried (the caller
// has shown it): a failure after that is kUnavailable. Errors follow LlmProvider::Complete; the
// messages name the provider and base URL and say what to check. API keys never appear in
// messages or logs (a key echoed in an error body is masked).
//
// The endpoint is the operator's: any address may be reached (no outbound policy) and the
// environment's proxies are used, except for loopback.
//
// Thread-safe: Complete may run on many threads at once (one connection per attempt, from a pool
// of kept-alive connections).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "exec/llm/llm_provider.h"
#include "net/operator_endpoint.h"

namespace cairn::exec::llm {

struct OpenAiOptions {
  std::string name = "openai";                        // in messages and logs
  std::string base_url = "https://api.openai.com/v1";  // a trailing slash is fine
  std::string api_key;                                 // empty: no Authorization header
  // Where the key comes from, for messages only ("check the API key (OPENAI_API_KEY)").
  std::string api_key_env;

  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds request_timeout{120'000};     // a whole non-streaming request
  std::chrono::milliseconds stream_idle_timeout{60'000};  // streaming: no bytes for this long
  int max_attempts = 4;
  std::chrono::milliseconds base_backoff{500};
  std::chrono::milliseconds max_backoff{20'000};
  size_t max_response_bytes = 8 << 20;  // a non-streaming body; the assembled reply of a stream

  // Maps the exponential backoff ceiling to the wait actually used (not applied to Retry-After).
  // Default: uniformly random in [ceiling/2, ceiling].
  std::function<std::chrono::milliseconds(std::chrono::milliseconds ceiling)> jitter;
  // Waits between attempts. Default: sleeps in slices of at most 20 ms, returning early when the
  // call is cancelled. Tests replace it to record the waits and not wait at all.
  std::function<void(std::chrono::milliseconds wait, const std::atomic<bool>* cancelled)> sleep;
};

class OpenAiProvider final : public LlmProvider {
 public:
  explicit OpenAiProvider(OpenAiOptions options);

  Result<ChatResponse> Complete(const ChatRequest& request, const CallOptions& options) override;

  const OpenAiOptions& options() const { return options_; }
  // `<base_url>/chat/completions`, with any trailing slashes of base_url removed first.
  const std::string& endpoint() const { return endpoint_->url(); }

 private:
  struct Attempt;
  Attempt Perform(const std::string& body, const std::string& model, bool stream, const CallOptions& options) const;
  std::string Describe() const;  // "openai (https://api.openai.com/v1)"

  OpenAiOptions options_;
  // The URL, the key and its redaction, and the connections of finished calls (keep-alive).
  std::shared_ptr<net::OperatorEndpoint> endpoint_;
};

}  // namespace cairn::exec::llm
