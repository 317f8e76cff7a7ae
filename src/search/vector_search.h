// VectorSearch: the nearest records to a query vector, within a tenant and the query's filters.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "store/text_index.h"

namespace cairn::search {

// What serves vector queries (GET /search/status): "exact" (a scan) or "hnsw" with its figures.
struct VectorIndexStatus {
  std::string kind = "exact";
  size_t indexes = 0;           // tenants with an index in memory
  size_t indexed_vectors = 0;   // live vectors in them
  int64_t builds = 0;           // indexes built from the stored vectors
  int64_t loads = 0;            // indexes loaded from their saved files
  int64_t exact_fallbacks = 0;  // filtered searches that went to the exact scan
};

class VectorSearch {
 public:
  virtual ~VectorSearch() = default;

  virtual VectorIndexStatus IndexStatus() const { return {}; }

  // The `query.limit` records most similar (cosine, best first; score in [-1, 1]) to `vector`,
  // or, without one, to the embedding of `query.text`. Records without a vector yet (the
  // embedding worker has not reached them) are not found. A `vector` whose dimension is not the
  // model's is kInvalidArgument naming "qvec"; neither a vector nor text is kInvalidArgument
  // naming "q".
  virtual Result<std::vector<store::TextHit>> SearchVector(const std::string& owner_id,
                                                           const store::TextSearchQuery& query,
                                                           const std::optional<std::vector<float>>& vector) = 0;
};

}  // namespace cairn::search
