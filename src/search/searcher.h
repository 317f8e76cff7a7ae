// Searcher: one search over a tenant's breadcrumbs, by text, by vector or both (docs/search.md).
//
// - kText: the store's full-text index (store/text_index.h), BM25.
// - kVector: exact cosine similarity between the query's vector (the caller's own `vector`, or
//   the embedding of `text` by the configured embedder) and the stored vectors of the records.
// - kHybrid: both lists fused by reciprocal rank (score = sum of 1 / (60 + rank)).
// Filters (schema, tags, path prefix) and the limit apply to every mode; expired records never
// show. Without a vector index (vector search off) kVector and kHybrid are kInvalidArgument
// naming "mode". Thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "store/text_index.h"

namespace cairn::search {

class VectorSearch;

enum class Mode { kText, kVector, kHybrid };
std::optional<Mode> ParseMode(std::string_view name);
std::string_view ModeName(Mode mode);

struct SearchRequest {
  Mode mode = Mode::kText;
  store::TextSearchQuery query;              // the text, the filters, the limit, snippets
  std::optional<std::vector<float>> vector;  // the caller's query vector (qvec), for kVector and kHybrid
};

using SearchHit = store::TextHit;

// The constant of reciprocal rank fusion (Cormack et al.): dampens the weight of the top ranks.
inline constexpr double kRrfK = 60;

class Searcher {
 public:
  // `vectors` may be null: vector search is off.
  Searcher(store::TextIndex& text, VectorSearch* vectors) : text_(text), vectors_(vectors) {}

  // The mode used when a request names none: hybrid when vectors are on, else text.
  Mode default_mode() const { return vectors_ ? Mode::kHybrid : Mode::kText; }

  Result<std::vector<SearchHit>> Search(const std::string& owner_id, const SearchRequest& request) const;

  // What serves vector queries; null when vector search is off.
  const VectorSearch* vectors() const { return vectors_; }

 private:
  store::TextIndex& text_;
  VectorSearch* vectors_;
};

// Reciprocal rank fusion of ranked lists (best first), keyed by record id: the first `limit` by
// fused score; each hit keeps the first list's snippet it had.
std::vector<SearchHit> FuseByRank(const std::vector<std::vector<SearchHit>>& lists, size_t limit);

}  // namespace cairn::search
