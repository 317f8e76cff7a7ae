#include "search/searcher.h"

#include <algorithm>
#include <unordered_map>

#include "search/vector_search.h"

namespace cairn::search {

std::optional<Mode> ParseMode(std::string_view name) {
  if (name == "text") return Mode::kText;
  if (name == "vector") return Mode::kVector;
  if (name == "hybrid") return Mode::kHybrid;
  return std::nullopt;
}

std::string_view ModeName(Mode mode) {
  switch (mode) {
    case Mode::kText: return "text";
    case Mode::kVector: return "vector";
    case Mode::kHybrid: return "hybrid";
  }
  return "text";
}

std::vector<SearchHit> FuseByRank(const std::vector<std::vector<SearchHit>>& lists, size_t limit) {
  std::unordered_map<std::string, size_t> index;  // id → position in `fused`
  std::vector<SearchHit> fused;
  for (const auto& list : lists) {
    for (size_t rank = 0; rank < list.size(); ++rank) {
      const SearchHit& hit = list[rank];
      double share = 1.0 / (kRrfK + static_cast<double>(rank + 1));
      auto [it, inserted] = index.emplace(hit.breadcrumb.id, fused.size());
      if (inserted) {
        fused.push_back(hit);
        fused.back().score = share;
        continue;
      }
      SearchHit& seen = fused[it->second];
      seen.score += share;
      if (seen.snippet.empty()) seen.snippet = hit.snippet;
    }
  }
  std::stable_sort(fused.begin(), fused.end(), [](const SearchHit& a, const SearchHit& b) { return a.score > b.score; });
  if (fused.size() > limit) fused.resize(limit);
  return fused;
}

Result<std::vector<SearchHit>> Searcher::Search(const std::string& owner_id, const SearchRequest& request) const {
  if (request.mode == Mode::kText) {
    if (request.vector) return Status(StatusCode::kInvalidArgument, "qvec: is for mode vector or hybrid", "qvec");
    return text_.SearchText(owner_id, request.query);
  }
  if (!vectors_) {
    return Status(StatusCode::kInvalidArgument,
                  "mode: vector search is off on this server (--embedder none); use mode=text", "mode");
  }
  if (request.mode == Mode::kVector) return vectors_->SearchVector(owner_id, request.query, request.vector);
  // Hybrid: each list is fetched deeper than the page so that fusion can reorder across them.
  store::TextSearchQuery deeper = request.query;
  deeper.limit = std::min(store::kMaxSearchLimit, request.query.limit * 2);
  std::vector<std::vector<SearchHit>> lists;
  if (!request.query.text.empty()) {
    CAIRN_ASSIGN_OR_RETURN(auto text_hits, text_.SearchText(owner_id, deeper));
    lists.push_back(std::move(text_hits));
  }
  CAIRN_ASSIGN_OR_RETURN(auto vector_hits, vectors_->SearchVector(owner_id, deeper, request.vector));
  lists.push_back(std::move(vector_hits));
  return FuseByRank(lists, request.query.limit);
}

}  // namespace cairn::search
