// ExactVectorSearch: VectorSearch by an exact scan. Every stored vector of the tenant (for the
// embedder's model) that passes the filters is compared with the query (cosine); the best
// `limit` are kept in a heap and their records read through the Store (so a record deleted or
// expired in between is left out). Linear in the tenant's vectors: HnswVectorSearch
// (hnsw_vector_search.h) serves large tenants and falls back to this scan for small ones and
// selective filters.
#pragma once

#include "search/embedder.h"
#include "search/vector_search.h"
#include "store/store.h"
#include "store/vector_store.h"

namespace cairn::search {

// The vector a search compares with: `vector` (its dimension checked against the embedder's; field
// "qvec") or the embedding of `query.text` (field "q"); the limit is checked too (field "limit").
Result<std::vector<float>> QueryVector(Embedder& embedder, const store::TextSearchQuery& query,
                                       const std::optional<std::vector<float>>& vector);

class ExactVectorSearch final : public VectorSearch {
 public:
  // All must outlive the search.
  ExactVectorSearch(store::VectorStore& vectors, store::Store& records, Embedder& embedder)
      : vectors_(vectors), records_(records), embedder_(embedder) {}

  Result<std::vector<store::TextHit>> SearchVector(const std::string& owner_id, const store::TextSearchQuery& query,
                                                   const std::optional<std::vector<float>>& vector) override;

  const Embedder& embedder() const { return embedder_; }

 private:
  store::VectorStore& vectors_;
  store::Store& records_;
  Embedder& embedder_;
};

}  // namespace cairn::search
