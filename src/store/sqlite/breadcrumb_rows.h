// Row-level operations on the breadcrumb tables, shared by the store's reads and its write
// closures. Every function runs on the connection it is given, inside the caller's transaction.
// How a row decodes is the same for every backend (store/record_rows.h).
#pragma once

#include <optional>
#include <string>

#include "base/status.h"
#include "model/breadcrumb.h"
#include "store/record_rows.h"
#include "store/sqlite/connection.h"

namespace cairn::store::sqlite {

// Loads a visible (not expired) record by owner and id: kNotFound otherwise. `damage` as for
// ReadBreadcrumb.
Result<model::Breadcrumb> LoadBreadcrumb(Connection& conn, const std::string& owner_id, const std::string& id,
                                         int64_t now_micros, int64_t* rid, std::string* damage = nullptr);

// Inserts a new record (version 1) with its tags. A taken path is kConflict. Returns the rid.
// `context_json`, when given, is crumb.context already serialised (done before the write, off the
// writer thread).
Result<int64_t> InsertBreadcrumb(Connection& conn, const model::Breadcrumb& crumb,
                                 const std::string* context_json = nullptr);

// Writes the new state of an existing record; with `old_tags`, replaces those tags by crumb.tags.
Status UpdateBreadcrumb(Connection& conn, int64_t rid, const model::Breadcrumb& crumb,
                        const std::vector<std::string>* old_tags, const std::string* context_json = nullptr);

// Keeps `crumb` (the state being superseded) in the history table.
Status ArchiveVersion(Connection& conn, int64_t rid, const model::Breadcrumb& crumb);

// Removes the record `crumb` (stored at `rid`), its tags and its history.
Status DeleteBreadcrumb(Connection& conn, int64_t rid, const model::Breadcrumb& crumb);

}  // namespace cairn::store::sqlite
