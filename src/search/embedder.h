// Embedder: texts to vectors, the seam between vector search and whatever computes embeddings
// (the built-in HashingEmbedder, an OpenAI-compatible endpoint: OpenAiEmbedder).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "base/status.h"

namespace cairn::search {

// Most texts one Embed call takes; callers batch within it.
inline constexpr size_t kMaxEmbedBatch = 256;

class Embedder {
 public:
  virtual ~Embedder() = default;

  // The name vectors are stored under, e.g. "builtin/hash-384" or "openai/text-embedding-3-small":
  // vectors of different models are never compared.
  virtual const std::string& model() const = 0;

  // The length of the vectors, or 0 while it is not known yet (a remote model before its first
  // answer).
  virtual size_t dimension() const = 0;

  // One vector per text, in order, all of dimension(). 1 to kMaxEmbedBatch texts. Errors:
  // kUnavailable for what may pass (connection, timeout, 429, 5xx), others for what will not.
  // Thread-safe.
  virtual Result<std::vector<std::vector<float>>> Embed(const std::vector<std::string>& texts) = 0;
};

// Cosine similarity of two vectors of length `n` (0 when either is all zeros).
double Cosine(const float* a, const float* b, size_t n);

// Scales `v` to unit length (left as is when all zeros).
void Normalize(std::vector<float>& v);

}  // namespace cairn::search
