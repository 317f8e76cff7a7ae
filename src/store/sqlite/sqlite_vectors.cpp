// SqliteStore's VectorStore: breadcrumb_vectors (migration 5), float32 values in native byte
// order (the database file is not meant to move between architectures of another endianness).
#include <cstring>
#include <string>
#include <vector>

#include "store/sqlite/record_filters.h"
#include "store/sqlite/sqlite_store.h"

namespace cairn::store::sqlite {

Status SqliteStore::PutVectors(const std::string& model, const std::vector<VectorWrite>& writes,
                               const std::vector<VectorKey>& removals, const std::string& consumer,
                               int64_t cursor_seq) {
  return Write([&](Connection& conn, int64_t*) -> Status {
    const int64_t now = clock_.NowMicros();
    if (!writes.empty()) {
      // Only for a record that still exists (it may have been deleted since it was read), and
      // never over a vector of a newer version.
      CAIRN_ASSIGN_OR_RETURN(auto put, conn.Prepare(
          "INSERT INTO breadcrumb_vectors(owner_id, breadcrumb_id, model, version, dimension, vector, updated_at) "
          "SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7 WHERE EXISTS (SELECT 1 FROM breadcrumbs WHERE id = ?2 AND owner_id = ?1) "
          "ON CONFLICT(owner_id, breadcrumb_id, model) DO UPDATE SET version = excluded.version, "
          "dimension = excluded.dimension, vector = excluded.vector, updated_at = excluded.updated_at "
          "WHERE excluded.version >= breadcrumb_vectors.version"));
      for (const VectorWrite& w : writes) {
        std::string_view bytes(reinterpret_cast<const char*>(w.values.data()), w.values.size() * sizeof(float));
        CAIRN_RETURN_IF_ERROR(put->Bind(1, std::string_view(w.owner_id)).Bind(2, std::string_view(w.breadcrumb_id))
                                  .Bind(3, std::string_view(model)).Bind(4, w.version)
                                  .Bind(5, static_cast<int64_t>(w.values.size())).BindBlob(6, bytes).Bind(7, now)
                                  .Run());
        put->Reset();
      }
    }
    if (!removals.empty()) {
      CAIRN_ASSIGN_OR_RETURN(auto remove, conn.Prepare(
          "DELETE FROM breadcrumb_vectors WHERE owner_id = ?1 AND breadcrumb_id = ?2 AND model = ?3"));
      for (const VectorKey& key : removals) {
        CAIRN_RETURN_IF_ERROR(remove->Bind(1, std::string_view(key.owner_id))
                                  .Bind(2, std::string_view(key.breadcrumb_id)).Bind(3, std::string_view(model)).Run());
        remove->Reset();
      }
    }
    return consumer.empty() ? Status::Ok() : WriteCursor(conn, consumer, cursor_seq, now);
  });
}

Status SqliteStore::ScanVectors(const std::string& owner_id, const std::string& model, const TextSearchQuery& filters,
                                const VectorVisitor& visit) {
  std::vector<SqlValue> binds{model, owner_id, clock_.NowMicros()};
  std::string sql =
      "SELECT v.breadcrumb_id, v.vector, v.dimension FROM breadcrumb_vectors v JOIN breadcrumbs b ON b.id = "
      "v.breadcrumb_id WHERE v.model = ?1 AND v.owner_id = ?2 AND b.owner_id = ?2 AND "
      "(b.expires_at IS NULL OR b.expires_at > ?3)";
  sql += RecordFilterSql(filters, binds);
  return WithReader([&](Connection& conn) -> Status {
    CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare(sql));
    for (size_t i = 0; i < binds.size(); ++i) stmt->BindValue(static_cast<int>(i + 1), binds[i]);
    std::vector<float> values;
    while (true) {
      CAIRN_ASSIGN_OR_RETURN(bool row, stmt->Step());
      if (!row) break;
      std::string_view bytes = stmt->Blob(1);
      const auto dimension = static_cast<size_t>(stmt->Int(2));
      if (bytes.size() != dimension * sizeof(float)) continue;  // not a vector this store wrote
      values.resize(dimension);
      std::memcpy(values.data(), bytes.data(), bytes.size());  // the blob need not be aligned
      visit(stmt->Text(0), values.data(), dimension);
    }
    return Status::Ok();
  });
}

Result<std::vector<MissingVector>> SqliteStore::MissingVectors(const std::string& model, int64_t after_rid,
                                                               size_t limit) {
  std::vector<MissingVector> missing;
  CAIRN_RETURN_IF_ERROR(WithReader([&](Connection& conn) -> Status {
    CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare(
        "SELECT b.rid, b.owner_id, b.id FROM breadcrumbs b WHERE b.rid > ?1 AND "
        "(b.expires_at IS NULL OR b.expires_at > ?2) AND NOT EXISTS (SELECT 1 FROM breadcrumb_vectors v WHERE "
        "v.owner_id = b.owner_id AND v.breadcrumb_id = b.id AND v.model = ?3) ORDER BY b.rid LIMIT ?4"));
    stmt->Bind(1, after_rid).Bind(2, clock_.NowMicros()).Bind(3, std::string_view(model))
        .Bind(4, static_cast<int64_t>(limit));
    while (true) {
      CAIRN_ASSIGN_OR_RETURN(bool row, stmt->Step());
      if (!row) break;
      missing.push_back(MissingVector{stmt->Int(0), std::string(stmt->Text(1)), std::string(stmt->Text(2))});
    }
    return Status::Ok();
  }));
  return missing;
}

Result<VectorFingerprint> SqliteStore::FingerprintVectors(const std::string& owner_id, const std::string& model) {
  VectorFingerprint fingerprint;
  CAIRN_RETURN_IF_ERROR(WithReader([&](Connection& conn) -> Status {
    CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare(
        "SELECT count(*), COALESCE(sum(version), 0), COALESCE(max(updated_at), 0) FROM breadcrumb_vectors "
        "WHERE model = ?1 AND owner_id = ?2"));
    stmt->Bind(1, std::string_view(model)).Bind(2, std::string_view(owner_id));
    CAIRN_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (row) fingerprint = VectorFingerprint{stmt->Int(0), stmt->Int(1), stmt->Int(2)};
    return Status::Ok();
  }));
  return fingerprint;
}

Result<int64_t> SqliteStore::CountVectors(const std::string& model) {
  int64_t count = 0;
  CAIRN_RETURN_IF_ERROR(WithReader([&](Connection& conn) -> Status {
    CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare("SELECT count(*) FROM breadcrumb_vectors WHERE model = ?1"));
    stmt->Bind(1, std::string_view(model));
    CAIRN_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (row) count = stmt->Int(0);
    return Status::Ok();
  }));
  return count;
}

Result<std::vector<std::string>> SqliteStore::VectorModels() {
  std::vector<std::string> models;
  CAIRN_RETURN_IF_ERROR(WithReader([&](Connection& conn) -> Status {
    // A walk of the (model, owner_id) index from one model to the next: a seek per model, not a
    // scan of every vector.
    CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare(
        "WITH RECURSIVE m(model) AS (SELECT min(model) FROM breadcrumb_vectors UNION ALL "
        "SELECT (SELECT min(model) FROM breadcrumb_vectors WHERE model > m.model) FROM m WHERE m.model IS NOT NULL) "
        "SELECT model FROM m WHERE model IS NOT NULL"));
    while (true) {
      CAIRN_ASSIGN_OR_RETURN(bool row, stmt->Step());
      if (!row) break;
      models.emplace_back(stmt->Text(0));
    }
    return Status::Ok();
  }));
  return models;
}

Result<int64_t> SqliteStore::DeleteVectors(const std::string& model, size_t limit) {
  int64_t deleted = 0;
  CAIRN_RETURN_IF_ERROR(Write([&](Connection& conn, int64_t*) -> Status {
    CAIRN_ASSIGN_OR_RETURN(auto stmt, conn.Prepare(
        "DELETE FROM breadcrumb_vectors WHERE model = ?1 AND (owner_id, breadcrumb_id) IN "
        "(SELECT owner_id, breadcrumb_id FROM breadcrumb_vectors WHERE model = ?1 LIMIT ?2)"));
    CAIRN_RETURN_IF_ERROR(stmt->Bind(1, std::string_view(model)).Bind(2, static_cast<int64_t>(limit)).Run());
    deleted = sqlite3_changes64(conn.raw());
    return Status::Ok();
  }));
  return deleted;
}

}  // namespace cairn::store::sqlite
