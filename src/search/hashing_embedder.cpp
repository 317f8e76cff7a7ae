#include "search/hashing_embedder.h"

#include <cmath>

#include "store/text_index.h"

namespace cairn::search {
namespace {

// Words and fragments weigh differently: a shared word says more than a shared trigram.
constexpr float kWordWeight = 1.0f;
constexpr float kTrigramWeight = 0.5f;

uint64_t Fnv1a(std::string_view bytes, uint64_t seed) {
  uint64_t hash = 14695981039346656037ULL ^ seed;
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  return hash;
}

}  // namespace

HashingEmbedder::HashingEmbedder(size_t dimension)
    : dimension_(dimension == 0 ? kDefaultDimension : dimension),
      model_("builtin/hash-" + std::to_string(dimension_)) {}

std::vector<float> HashingEmbedder::EmbedOne(std::string_view text) const {
  std::vector<float> v(dimension_, 0.0f);
  auto add = [&](std::string_view feature, uint64_t seed, float weight) {
    uint64_t hash = Fnv1a(feature, seed);
    v[hash % dimension_] += (hash >> 63) != 0 ? -weight : weight;
  };
  text = text.substr(0, kMaxTextBytes);
  std::string word;
  for (size_t i = 0; i <= text.size(); ++i) {
    const auto c = i < text.size() ? static_cast<unsigned char>(text[i]) : 0;
    if (i < text.size() && store::IsSearchWordByte(c)) {
      word.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : static_cast<char>(c));
      continue;
    }
    if (word.empty()) continue;
    add(word, 1, kWordWeight);
    const std::string bounded = "^" + word + "$";
    for (size_t j = 0; j + 3 <= bounded.size(); ++j) add(std::string_view(bounded).substr(j, 3), 2, kTrigramWeight);
    word.clear();
  }
  Normalize(v);
  return v;
}

Result<std::vector<std::vector<float>>> HashingEmbedder::Embed(const std::vector<std::string>& texts) {
  if (texts.empty() || texts.size() > kMaxEmbedBatch) {
    return Status::InvalidArgument("embed 1 to " + std::to_string(kMaxEmbedBatch) + " texts at a time");
  }
  std::vector<std::vector<float>> out;
  out.reserve(texts.size());
  for (const std::string& text : texts) out.push_back(EmbedOne(text));
  return out;
}

}  // namespace cairn::search
