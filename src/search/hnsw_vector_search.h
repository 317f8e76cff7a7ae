// HnswVectorSearch: VectorSearch through an approximate index (HnswIndex) per tenant and model.
//
// - The vectors in the VectorStore stay the source of truth: a tenant's index is built from them
//   on its first vector search (or loaded from the file saved at the last clean shutdown when its
//   fingerprint, VectorStore::FingerprintVectors, is still the store's and its checksum matches:
//   otherwise it is stale and rebuilt). Afterwards the embedding worker's writes reach it through
//   OnStored.
// - A tenant with fewer than `min_vectors` vectors, and a tenant whose index is being built, is
//   served by the exact scan (ExactVectorSearch).
// - Every candidate is checked against the record as stored now (GetShared): deleted or expired
//   records are dropped (and removed from the index), and so are records that do not pass the
//   query's filters (schema, tags, path prefix). A filtered search asks the index for 4 × limit
//   candidates and widens 4× at a time while too few pass; a filter so selective that
//   `max_candidates` are not enough falls back to the exact scan, which applies it in SQL.
// Thread-safe: searches of a tenant run concurrently; OnStored takes that tenant's writer lock.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "search/exact_vector_search.h"
#include "search/hnsw_index.h"
#include "search/vector_search.h"
#include "store/store.h"
#include "store/vector_store.h"

namespace cairn::search {

struct HnswSearchOptions {
  std::string directory;        // where indexes are saved (created if missing); "": never saved
  size_t min_vectors = 1000;    // tenants with fewer vectors are scanned exactly
  size_t max_candidates = 2000;  // a filtered search needing more falls back to the exact scan
  HnswOptions hnsw;
};

class HnswVectorSearch final : public VectorSearch {
 public:
  // All must outlive the search.
  HnswVectorSearch(store::VectorStore& vectors, store::Store& records, Embedder& embedder, HnswSearchOptions options);
  ~HnswVectorSearch() override;

  Result<std::vector<store::TextHit>> SearchVector(const std::string& owner_id, const store::TextSearchQuery& query,
                                                   const std::optional<std::vector<float>>& vector) override;

  // The embedding worker stored `writes` and `removals` (of the embedder's model).
  void OnStored(const std::vector<store::VectorWrite>& writes, const std::vector<store::VectorKey>& removals);

  // Saves every index in memory with the store's current fingerprint. Call once nothing writes
  // vectors any more (after the embedding worker stopped), or a write may be missed until the next
  // rebuild.
  Status Save();

  VectorIndexStatus IndexStatus() const override;

  // Forgets every index in memory (searches in flight finish on theirs) and deletes the model's
  // saved files: the model is retired (EmbeddingModels). Searches afterwards scan exactly.
  void Drop();

  // Deletes the files saved in `directory` for `model` (any tenant); how many indexes were removed.
  static size_t RemoveSaved(const std::string& directory, const std::string& model);

 private:
  struct TenantIndex;

  // The tenant's ready index; null when it has none (small, or being built by another search).
  Result<std::shared_ptr<TenantIndex>> IndexFor(const std::string& owner_id);
  Status Build(const std::string& owner_id, const store::VectorFingerprint& fingerprint, TenantIndex& tenant);
  bool Load(const std::string& owner_id, const store::VectorFingerprint& fingerprint, TenantIndex& tenant);
  Status SaveOne(const std::string& owner_id, TenantIndex& tenant);
  std::string PathFor(const std::string& owner_id) const;  // without extension

  store::VectorStore& vectors_;
  store::Store& records_;
  Embedder& embedder_;
  HnswSearchOptions options_;
  ExactVectorSearch exact_;
  std::atomic<int64_t> exact_fallbacks_{0};
  std::atomic<int64_t> builds_{0};
  std::atomic<int64_t> loads_{0};

  mutable std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<TenantIndex>> tenants_;
  bool dropped_ = false;  // Drop() was called: no index is built or saved any more
};

}  // namespace cairn::search
