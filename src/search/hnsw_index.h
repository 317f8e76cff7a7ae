// HnswIndex: an approximate nearest-neighbour index (HNSW, hnswlib) over unit vectors of one
// dimension, keyed by 64-bit labels, ranked by cosine similarity. The hnswlib template lives in
// hnsw_index.cpp only; this header is all its users see.
//
// Vectors are normalised on the way in and the query too, so inner product is cosine. Labels are
// the caller's: Add with an existing label replaces its vector; Remove marks it deleted (searches
// skip it; Add brings it back). The file Save writes is hnswlib's own format; Load trusts it, so
// callers check it (a checksum, hnsw_vector_search.h) before loading.
//
// Thread safety: Search may run concurrently with Search; Add, Remove and Load must run alone
// (HnswVectorSearch holds a reader/writer lock around them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace cairn::search {

struct HnswOptions {
  size_t m = 16;                 // links per node (hnswlib's M)
  size_t ef_construction = 200;  // candidate list while building: higher builds slower, finds better
  size_t ef_search = 64;         // candidate list while searching (at least k)
  size_t random_seed = 100;      // the level generator's: a build is repeatable
};

class HnswIndex {
 public:
  // An empty index; it grows as vectors are added.
  HnswIndex(size_t dimension, HnswOptions options);
  ~HnswIndex();
  HnswIndex(const HnswIndex&) = delete;
  HnswIndex& operator=(const HnswIndex&) = delete;

  size_t dimension() const { return dimension_; }
  // Live labels: added and not removed.
  size_t size() const;
  // The bytes hnswlib holds for the vectors and the graph.
  size_t MemoryBytes() const;

  // Adds or replaces the vector of `label` (`dimension()` values; a zero vector is refused).
  Status Add(uint64_t label, const float* values);
  // Marks `label` deleted; unknown labels are ignored.
  void Remove(uint64_t label);

  // Up to `k` live labels nearest `query` (`dimension()` values), best first, with their cosine
  // similarity.
  std::vector<std::pair<uint64_t, float>> Search(const float* query, size_t k) const;

  // Changes the candidate list of searches (at least k): recall against speed. Not concurrent with
  // Search.
  void SetEfSearch(size_t ef);

  // Writes the index to `path` (replacing it).
  Status Save(const std::string& path) const;
  // Reads an index Save wrote. The file must be trusted (checked by the caller).
  static Result<std::unique_ptr<HnswIndex>> Load(const std::string& path, size_t dimension, HnswOptions options);

 private:
  struct Impl;
  HnswIndex(size_t dimension, HnswOptions options, std::unique_ptr<Impl> impl);

  size_t dimension_;
  HnswOptions options_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cairn::search
