// HashingEmbedder: the built-in embedder, offline and deterministic. Each word and each
// character trigram of a word (with word boundaries) is hashed (FNV-1a) to one of `dimension`
// buckets with a sign; the sums are scaled to unit length. Texts that share words or word
// fragments get similar vectors, so it finds "nearby" spellings and shared vocabulary; it knows
// nothing of meaning (no synonyms, no other languages): it is lexical, not semantic. The same
// text gives the same vector on every machine and every run.
#pragma once

#include <string>

#include "search/embedder.h"

namespace cairn::search {

class HashingEmbedder final : public Embedder {
 public:
  static constexpr size_t kDefaultDimension = 384;
  // Reads at most this many bytes of each text.
  static constexpr size_t kMaxTextBytes = 64 * 1024;

  explicit HashingEmbedder(size_t dimension = kDefaultDimension);

  const std::string& model() const override { return model_; }
  size_t dimension() const override { return dimension_; }
  Result<std::vector<std::vector<float>>> Embed(const std::vector<std::string>& texts) override;

  // One text's vector.
  std::vector<float> EmbedOne(std::string_view text) const;

 private:
  size_t dimension_;
  std::string model_;
};

}  // namespace cairn::search
