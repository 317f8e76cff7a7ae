// OpenAiEmbedder: embeddings from an OpenAI-compatible `POST {base_url}/embeddings` (OpenAI,
// Ollama, vLLM, llama.cpp, ...), through net::OperatorEndpoint like the LLM providers (the same
// request building, connection pool and API-key redaction of every error text). One attempt per
// call: the embedding worker retries what may pass (kUnavailable).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "net/operator_endpoint.h"
#include "search/embedder.h"

namespace cairn::search {

struct OpenAiEmbedderOptions {
  std::string name;      // the stored model name, "provider/model"
  std::string base_url;  // e.g. "https://api.openai.com/v1"
  std::string api_key;   // sent as a Bearer token when not empty; never logged
  std::string model;     // as the endpoint knows it, e.g. "text-embedding-3-small"
  std::chrono::milliseconds timeout{60000};
  size_t max_response_bytes = 64u << 20;
};

class OpenAiEmbedder final : public Embedder {
 public:
  explicit OpenAiEmbedder(OpenAiEmbedderOptions options);
  ~OpenAiEmbedder() override;

  const std::string& model() const override { return options_.name; }
  size_t dimension() const override { return dimension_.load(); }
  // kUnavailable: no connection, a timeout, 408, 429 or 5xx; kInternal: another status or an
  // answer that is not a list of equally long vectors, one per text.
  Result<std::vector<std::vector<float>>> Embed(const std::vector<std::string>& texts) override;

 private:
  OpenAiEmbedderOptions options_;
  std::unique_ptr<net::OperatorEndpoint> endpoint_;
  std::atomic<size_t> dimension_{0};
};

}  // namespace cairn::search
