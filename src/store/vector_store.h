// VectorStore: the embeddings of breadcrumbs, the source of truth of vector search
// (docs/search.md). One vector per (tenant, record, model), with the record version it was
// computed from.
//
// Contract shared by every backend:
// - Deleting a record (delete, TTL sweep, reclaimed path) deletes its vectors in the same
//   transaction.
// - PutVectors writes its vectors, removals and the consumer's cursor in one transaction, so a
//   cursor never passes an event whose vector is not stored (nothing is lost on a crash).
//   A vector computed from an older version than the stored one is not written.
// - Scans see only current, unexpired records of one tenant, with the query's filters.
// Thread-safe and blocking.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "store/text_index.h"

namespace cairn::store {

struct VectorWrite {
  std::string owner_id;
  std::string breadcrumb_id;
  int64_t version = 0;  // of the record the vector was computed from
  std::vector<float> values;
};

struct VectorKey {
  std::string owner_id;
  std::string breadcrumb_id;
};

// A record that has no vector for a model yet (VectorStore::MissingVectors).
struct MissingVector {
  int64_t rid = 0;  // the record's order key: pass the last one back to continue
  std::string owner_id;
  std::string breadcrumb_id;
};

// What identifies the state of a tenant's vectors for a model (VectorStore::FingerprintVectors): any
// write, update or removal changes it. A saved index whose fingerprint is not the store's is stale.
struct VectorFingerprint {
  int64_t count = 0;
  int64_t version_sum = 0;      // of the record versions the vectors were computed from
  int64_t last_updated_at = 0;  // the newest vector's write time
  bool operator==(const VectorFingerprint&) const = default;
};

class VectorStore {
 public:
  virtual ~VectorStore() = default;

  // Upserts `writes` and deletes `removals` for `model`; with a non-empty `consumer`, stores
  // `cursor_seq` as its position (CursorStore) in the same transaction.
  virtual Status PutVectors(const std::string& model, const std::vector<VectorWrite>& writes,
                            const std::vector<VectorKey>& removals, const std::string& consumer,
                            int64_t cursor_seq) = 0;

  // Calls `visit` with the id and values of every vector of `model` of `owner_id`'s current,
  // unexpired records that pass `filters` (its schema_name, all_tags and path_prefix; text and
  // limit are ignored). `values` is valid during the call only.
  using VectorVisitor = std::function<void(std::string_view breadcrumb_id, const float* values, size_t dimension)>;
  virtual Status ScanVectors(const std::string& owner_id, const std::string& model, const TextSearchQuery& filters,
                             const VectorVisitor& visit) = 0;

  // Up to `limit` current records (every tenant, expired ones excluded) with rid > `after_rid` that
  // have no vector for `model`, in rid order. For filling the vectors of a new model.
  virtual Result<std::vector<MissingVector>> MissingVectors(const std::string& model, int64_t after_rid,
                                                            size_t limit) = 0;

  // The fingerprint of `owner_id`'s vectors of `model` (one aggregate over them).
  virtual Result<VectorFingerprint> FingerprintVectors(const std::string& owner_id, const std::string& model) = 0;

  // How many vectors `model` has, all tenants together.
  virtual Result<int64_t> CountVectors(const std::string& model) = 0;

  // The models that have vectors, in name order.
  virtual Result<std::vector<std::string>> VectorModels() = 0;

  // Deletes up to `limit` vectors of `model` (every tenant) in one transaction; returns how many
  // (0: none left). For retiring a model a bounded transaction at a time.
  virtual Result<int64_t> DeleteVectors(const std::string& model, size_t limit) = 0;
};

}  // namespace cairn::store
