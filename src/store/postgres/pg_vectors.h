// PgVectorStore: the VectorStore (store/vector_store.h) on PostgreSQL: `breadcrumb_vectors`
// (migration 3, pg_migrations.cpp), one real[] per (record, model).
//
// A record's vectors reference its row (ON DELETE CASCADE), so a delete, the TTL sweep or a
// reclaimed path removes them in its own statement. PutVectors runs in one transaction of the
// process's writer (PgDatabase::Write) with the consumer's cursor (consumer_cursors, as PgStore's
// CursorStore), and writes a vector only for a record that still exists and over no vector of a
// newer version. Scans stream from a cursor, a few hundred vectors at a time, so a large tenant
// is never held in memory at once.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "store/postgres/pg_database.h"
#include "store/vector_store.h"

namespace cairn::store::postgres {

class PgVectorStore final : public VectorStore {
 public:
  // `clock` (expiry, write times) must outlive the store.
  PgVectorStore(std::shared_ptr<PgDatabase> db, const Clock& clock);

  Status PutVectors(const std::string& model, const std::vector<VectorWrite>& writes,
                    const std::vector<VectorKey>& removals, const std::string& consumer, int64_t cursor_seq) override;
  Status ScanVectors(const std::string& owner_id, const std::string& model, const TextSearchQuery& filters,
                     const VectorVisitor& visit) override;
  Result<std::vector<MissingVector>> MissingVectors(const std::string& model, int64_t after_rid, size_t limit) override;
  Result<VectorFingerprint> FingerprintVectors(const std::string& owner_id, const std::string& model) override;
  Result<int64_t> CountVectors(const std::string& model) override;
  Result<std::vector<std::string>> VectorModels() override;
  Result<int64_t> DeleteVectors(const std::string& model, size_t limit) override;

 private:
  std::shared_ptr<PgDatabase> db_;
  const Clock& clock_;
};

}  // namespace cairn::store::postgres
