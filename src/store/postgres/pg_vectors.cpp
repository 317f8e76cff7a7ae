#include "store/postgres/pg_vectors.h"

#include <charconv>
#include <map>
#include <utility>
#include <string_view>

#include "store/postgres/pg_query.h"
#include "store/postgres/pg_rows.h"

namespace cairn::store::postgres {
namespace {

// Rows a scan fetches at a time: about 1 MB of 384-dimension vectors as text.
constexpr int kScanRows = 256;

// real[]'s text form of `values` ("{0.5,-1.25}"), each the shortest text that reads back to the
// same float (inf and nan spelled as PostgreSQL reads them).
std::string RealsText(const std::vector<float>& values) {
  std::string text = "{";
  char buffer[32];
  for (float value : values) {
    if (text.size() > 1) text += ',';
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
    text.append(buffer, ec == std::errc() ? end : buffer);
  }
  return text + "}";
}

// A text[] literal of `items` (each quoted, `"` and `\` escaped): many values in one parameter.
std::string TextArrayLiteral(const std::vector<std::string>& items) {
  std::string text = "{";
  for (const std::string& item : items) {
    if (text.size() > 1) text += ',';
    text += '"';
    for (char c : item) {
      if (c == '"' || c == '\\') text += '\\';
      text += c;
    }
    text += '"';
  }
  return text + "}";
}

// Reads real[]'s text form back into `values` (NaN and ±Infinity included); false for anything
// else (a NULL element, another number of dimensions), which this store never writes.
bool ParseReals(std::string_view text, std::vector<float>& values) {
  values.clear();
  if (text.size() < 2 || text.front() != '{' || text.back() != '}') return false;
  text = text.substr(1, text.size() - 2);
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    float value = 0;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (ec != std::errc() || end != item.data() + item.size()) return false;
    values.push_back(value);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return true;
}

// Runs `sql` as a cursor in a read-only transaction on `conn` and hands its rows to `visit`,
// kScanRows at a time. extra_float_digits 1 (the default, set in case the server's is not) makes
// floats' text exact.
Status ScanInBatches(PgConnection& conn, const std::string& sql, const PgParams& params,
                     const std::function<void(const PgRow&)>& visit) {
  CAIRN_RETURN_IF_ERROR(conn.Exec("BEGIN READ ONLY; SET LOCAL extra_float_digits = 1"));
  Status status = [&]() -> Status {
    CAIRN_RETURN_IF_ERROR(conn.QueryOnce("DECLARE scan NO SCROLL CURSOR FOR " + sql, params).status());
    const std::string fetch = "FETCH " + std::to_string(kScanRows) + " FROM scan";
    while (true) {
      CAIRN_ASSIGN_OR_RETURN(PgResult rows, conn.QueryOnce(fetch, PgParams{}));
      for (int i = 0; i < rows.rows(); ++i) visit(rows.Row(i));
      if (rows.rows() < kScanRows) return Status::Ok();
    }
  }();
  Status ended = conn.Exec(status.ok() ? "COMMIT" : "ROLLBACK");  // closes the cursor
  return status.ok() ? ended : status;
}

}  // namespace

PgVectorStore::PgVectorStore(std::shared_ptr<PgDatabase> db, const Clock& clock) : db_(std::move(db)), clock_(clock) {}

Status PgVectorStore::PutVectors(const std::string& model, const std::vector<VectorWrite>& writes,
                                 const std::vector<VectorKey>& removals, const std::string& consumer,
                                 int64_t cursor_seq) {
  return db_->Write([&](PgConnection& conn) -> Status {
    const int64_t now = clock_.NowMicros();
    if (!writes.empty()) {
      // One statement for the batch (the writer's path is one transaction for the whole
      // cluster). A key written twice keeps its newest version, as writing them in turn would.
      std::map<std::pair<std::string, std::string>, const VectorWrite*> newest;
      for (const VectorWrite& w : writes) {
        auto [at, fresh] = newest.try_emplace({w.owner_id, w.breadcrumb_id}, &w);
        if (!fresh && at->second->version < w.version) at->second = &w;
      }
      std::vector<std::string> ids, owners, versions, vectors;
      for (const auto& [key, w] : newest) {
        owners.push_back(key.first);
        ids.push_back(key.second);
        versions.push_back(std::to_string(w->version));
        vectors.push_back(RealsText(w->values));
      }
      // Only for records that still exist (one may have been deleted since it was read), and
      // never over a vector of a newer version.
      PgParams p;
      CAIRN_RETURN_IF_ERROR(conn.Run(
          "INSERT INTO breadcrumb_vectors(rid, model, owner_id, version, vector, updated_at) SELECT b.rid, " +
              p.Add(model) + "::text, b.owner_id, w.version, w.vector::real[], " + p.Add(now) +
              "::bigint FROM unnest(" + p.Add(TextArrayLiteral(ids)) + "::text[], " + p.Add(TextArrayLiteral(owners)) +
              "::text[], " + p.Add(TextArrayLiteral(versions)) + "::bigint[], " + p.Add(TextArrayLiteral(vectors)) +
              "::text[]) AS w(id, owner_id, version, vector) JOIN breadcrumbs b ON b.id = w.id AND "
              "b.owner_id = w.owner_id ON CONFLICT (rid, model) DO UPDATE SET version = excluded.version, "
              "vector = excluded.vector, updated_at = excluded.updated_at "
              "WHERE excluded.version >= breadcrumb_vectors.version",
          p));
    }
    for (const VectorKey& key : removals) {
      PgParams p;
      CAIRN_RETURN_IF_ERROR(conn.Run("DELETE FROM breadcrumb_vectors v USING breadcrumbs b WHERE v.rid = b.rid AND "
                                     "v.model = " + p.Add(model) + " AND b.id = " + p.Add(key.breadcrumb_id) +
                                     " AND b.owner_id = " + p.Add(key.owner_id), p));
    }
    return consumer.empty() ? Status::Ok() : WriteCursor(conn, consumer, cursor_seq, now);
  });
}

Status PgVectorStore::ScanVectors(const std::string& owner_id, const std::string& model,
                                  const TextSearchQuery& filters, const VectorVisitor& visit) {
  PgParams p;
  const std::string owner = p.Add(owner_id);
  std::string sql = "SELECT b.id, v.vector FROM breadcrumb_vectors v JOIN breadcrumbs b ON b.rid = v.rid WHERE "
                    "v.model = " + p.Add(model) + " AND v.owner_id = " + owner + " AND b.owner_id = " + owner +
                    " AND (b.expires_at IS NULL OR b.expires_at > " + p.Add(clock_.NowMicros()) + "::bigint)";
  sql += PgRecordFilterSql(filters, p);
  return db_->WithReader([&](PgConnection& conn) -> Status {
    std::vector<float> values;
    return ScanInBatches(conn, sql, p, [&](const PgRow& row) {
      if (!ParseReals(row.Text(1), values)) return;  // not a vector this store wrote
      visit(row.Text(0), values.data(), values.size());
    });
  });
}

Result<std::vector<MissingVector>> PgVectorStore::MissingVectors(const std::string& model, int64_t after_rid,
                                                                 size_t limit) {
  std::vector<MissingVector> missing;
  CAIRN_RETURN_IF_ERROR(db_->WithReader([&](PgConnection& conn) -> Status {
    PgParams p;
    CAIRN_ASSIGN_OR_RETURN(PgResult rows, conn.Query(
        "SELECT b.rid, b.owner_id, b.id FROM breadcrumbs b WHERE b.rid > " + p.Add(after_rid) +
            "::bigint AND (b.expires_at IS NULL OR b.expires_at > " + p.Add(clock_.NowMicros()) +
            "::bigint) AND NOT EXISTS (SELECT 1 FROM breadcrumb_vectors v WHERE v.rid = b.rid AND v.model = " +
            p.Add(model) + ") ORDER BY b.rid LIMIT " + p.Add(static_cast<int64_t>(limit)) + "::bigint",
        p));
    for (int i = 0; i < rows.rows(); ++i) {
      PgRow row = rows.Row(i);
      missing.push_back(MissingVector{row.Int(0), std::string(row.Text(1)), std::string(row.Text(2))});
    }
    return Status::Ok();
  }));
  return missing;
}

Result<VectorFingerprint> PgVectorStore::FingerprintVectors(const std::string& owner_id, const std::string& model) {
  VectorFingerprint fingerprint;
  CAIRN_RETURN_IF_ERROR(db_->WithReader([&](PgConnection& conn) -> Status {
    PgParams p;
    CAIRN_ASSIGN_OR_RETURN(PgResult rows, conn.Query(
        "SELECT count(*), COALESCE(sum(version), 0), COALESCE(max(updated_at), 0) FROM breadcrumb_vectors WHERE "
        "model = " + p.Add(model) + " AND owner_id = " + p.Add(owner_id), p));
    PgRow row = rows.Row(0);
    fingerprint = VectorFingerprint{row.Int(0), row.Int(1), row.Int(2)};
    return Status::Ok();
  }));
  return fingerprint;
}

Result<int64_t> PgVectorStore::CountVectors(const std::string& model) {
  int64_t count = 0;
  CAIRN_RETURN_IF_ERROR(db_->WithReader([&](PgConnection& conn) -> Status {
    PgParams p;
    CAIRN_ASSIGN_OR_RETURN(PgResult rows,
                           conn.Query("SELECT count(*) FROM breadcrumb_vectors WHERE model = " + p.Add(model), p));
    count = rows.Row(0).Int(0);
    return Status::Ok();
  }));
  return count;
}

Result<std::vector<std::string>> PgVectorStore::VectorModels() {
  std::vector<std::string> models;
  CAIRN_RETURN_IF_ERROR(db_->WithReader([&](PgConnection& conn) -> Status {
    // A walk of the (model, owner_id) index from one model to the next: a seek per model, not a
    // scan of every vector.
    CAIRN_ASSIGN_OR_RETURN(PgResult rows, conn.Query(
        "WITH RECURSIVE m(model) AS (SELECT min(model) FROM breadcrumb_vectors UNION ALL "
        "SELECT (SELECT min(model) FROM breadcrumb_vectors WHERE model > m.model) FROM m WHERE m.model IS NOT NULL) "
        "SELECT model FROM m WHERE model IS NOT NULL"));
    for (int i = 0; i < rows.rows(); ++i) models.emplace_back(rows.Row(i).Text(0));
    return Status::Ok();
  }));
  return models;
}

Result<int64_t> PgVectorStore::DeleteVectors(const std::string& model, size_t limit) {
  int64_t deleted = 0;
  CAIRN_RETURN_IF_ERROR(db_->Write([&](PgConnection& conn) -> Status {
    PgParams p;
    const std::string name = p.Add(model);
    CAIRN_ASSIGN_OR_RETURN(PgResult done, conn.Query(
        "DELETE FROM breadcrumb_vectors WHERE model = " + name + " AND rid IN (SELECT rid FROM breadcrumb_vectors "
        "WHERE model = " + name + " LIMIT " + p.Add(static_cast<int64_t>(limit)) + "::bigint)", p));
    deleted = done.affected();
    return Status::Ok();
  }));
  return deleted;
}

}  // namespace cairn::store::postgres
