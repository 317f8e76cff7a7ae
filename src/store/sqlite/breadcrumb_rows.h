// Row-level operations on the breadcrumb tables, shared by the store's reads and its write
// closures. Every function runs on the connection it is given, inside the caller's transaction.
#pragma once

#include <optional>
#include <string>

#include "base/status.h"
#include "model/breadcrumb.h"
#include "store/sqlite/connection.h"

namespace cairn::store::sqlite {

// Tags as the JSON array text stored in the `tags` columns.
std::string TagsJson(const std::vector<std::string>& tags);

// The select list that ReadBreadcrumb() decodes; columns of the `b` alias, rid first.
const std::string& BreadcrumbColumns();

// Decodes the current row of a statement selecting BreadcrumbColumns(). Sets `rid`.
//
// A JSON column that does not parse (tags, context, llm_hints: rows written by an older version
// could hold a non-finite number, see unreadable_rows.h) is left empty (no tags, null context and
// hints). With `damage`, the read then succeeds and `*damage` names the column and the reason (it
// is cleared otherwise): callers that can go on without the record skip it and report it. Without
// `damage`, such a row is kInternal "breadcrumb <id> cannot be read (...)".
Result<model::Breadcrumb> ReadBreadcrumb(const Statement& row, int64_t* rid, std::string* damage = nullptr);

// Loads a visible (not expired) record by owner and id: kNotFound otherwise. `damage` as for
// ReadBreadcrumb.
Result<model::Breadcrumb> LoadBreadcrumb(Connection& conn, const std::string& owner_id, const std::string& id,
                                         int64_t now_micros, int64_t* rid, std::string* damage = nullptr);

// Parses a JSON column written by the store. A column that does not parse is `fallback`, and
// `*damage` (when still empty) gets "<column>: <parser message>".
boost::json::value DecodeStoredJson(std::string_view text, const char* column, boost::json::value fallback,
                                    std::string* damage);

// The `acl` column's text of an ACL (null when absent), and back. An ACL that does not parse is
// named in `*damage` (when still empty) and reads as one that names nobody.
std::optional<std::string> AclText(const std::optional<model::RecordAcl>& acl);
std::optional<model::RecordAcl> DecodeStoredAcl(std::string_view text, std::string* damage);

// The message of a record that cannot be read, for the readers that cannot skip it.
Status UnreadableRecord(const std::string& id, const std::string& damage);

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
