#include "search/exact_vector_search.h"

#include <algorithm>
#include <queue>

#include "store/search_words.h"

namespace cairn::search {

Result<std::vector<float>> QueryVector(Embedder& embedder, const store::TextSearchQuery& query,
                                       const std::optional<std::vector<float>>& vector) {
  CAIRN_RETURN_IF_ERROR(store::CheckSearchLimit(query.limit));
  if (vector) {
    const size_t dimension = embedder.dimension();
    if (dimension != 0 && vector->size() != dimension) {
      return Status(StatusCode::kInvalidArgument,
                    "qvec: has " + std::to_string(vector->size()) + " numbers; the vectors of " + embedder.model() +
                        " have " + std::to_string(dimension),
                    "qvec");
    }
    return *vector;
  }
  if (query.text.empty()) return Status(StatusCode::kInvalidArgument, "q: is required (or give qvec)", "q");
  if (query.text.size() > store::kMaxSearchQueryBytes) {
    return Status(StatusCode::kInvalidArgument,
                  "q: is longer than " + std::to_string(store::kMaxSearchQueryBytes) + " bytes", "q");
  }
  CAIRN_ASSIGN_OR_RETURN(auto embedded, embedder.Embed({query.text}));
  return std::move(embedded.front());
}

Result<std::vector<store::TextHit>> ExactVectorSearch::SearchVector(const std::string& owner_id,
                                                                    const store::TextSearchQuery& query,
                                                                    const std::optional<std::vector<float>>& vector) {
  CAIRN_ASSIGN_OR_RETURN(std::vector<float> probe, QueryVector(embedder_, query, vector));
  // A min-heap of the best so far: its top is the worst kept, replaced by anything better.
  using Scored = std::pair<double, std::string>;
  auto worse = [](const Scored& a, const Scored& b) { return a.first > b.first; };
  std::priority_queue<Scored, std::vector<Scored>, decltype(worse)> best(worse);
  CAIRN_RETURN_IF_ERROR(vectors_.ScanVectors(
      owner_id, embedder_.model(), query, [&](std::string_view id, const float* values, size_t dimension) {
        if (dimension != probe.size()) return;  // written under another dimension of the same name
        double score = Cosine(probe.data(), values, dimension);
        if (best.size() < query.limit) {
          best.emplace(score, std::string(id));
        } else if (score > best.top().first) {
          best.pop();
          best.emplace(score, std::string(id));
        }
      }));
  std::vector<Scored> ranked;
  while (!best.empty()) {
    ranked.push_back(best.top());
    best.pop();
  }
  std::reverse(ranked.begin(), ranked.end());
  std::vector<store::TextHit> hits;
  for (auto& [score, id] : ranked) {
    auto record = records_.GetShared(owner_id, id);
    if (!record.ok()) {
      if (record.status().code() == StatusCode::kNotFound) continue;  // deleted or expired since the scan
      return record.status();
    }
    store::TextHit hit;
    hit.breadcrumb = **record;
    hit.score = score;
    hits.push_back(std::move(hit));
  }
  return hits;
}

}  // namespace cairn::search
