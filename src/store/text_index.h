// TextIndex: full-text search over a tenant's breadcrumbs (docs/search.md).
//
// Contract shared by every backend:
// - A record is findable as soon as its create or update is acknowledged, and its old text is
//   gone as soon as an update, a delete or the TTL sweep is (a backend may index new text later
//   than the write's transaction, but then before any search). Expired records are never
//   returned, even before the sweep.
// - Indexed: title, description, tags and the string values of `context` (nested ones included,
//   bounded per record) of every record except runs (`agent.execution.v1`) and snapshots
//   (`agent.snapshot.v1`).
// - The query text is words, never the backend's query syntax: operators, quotes and other
//   punctuation separate words; a word ending in `*` matches as a prefix. A record matches when it
//   holds any of the words; the best (BM25: rarer words, in the title, weigh more) come first.
// - All calls are scoped to `owner_id`. Thread-safe and blocking.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "model/breadcrumb.h"

namespace cairn::store {

// Bounds on a text query; beyond them the query is refused (kInvalidArgument, field "q").
inline constexpr size_t kMaxSearchQueryBytes = 1024;
inline constexpr size_t kMaxSearchTerms = 32;
inline constexpr size_t kMaxSearchLimit = 200;

// The bytes words are made of in query text: ASCII letters and digits, and every non-ASCII byte
// (UTF-8 letters; the index's tokenizer splits them further where it must).
inline bool IsSearchWordByte(unsigned char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80;
}

struct TextSearchQuery {
  std::string text;                         // what the user typed; 1 to kMaxSearchQueryBytes bytes
  std::optional<std::string> schema_name;   // exact
  std::vector<std::string> all_tags;        // every one must be present
  std::optional<std::string> path_prefix;   // whole segments, as in BreadcrumbQuery
  size_t limit = 20;                        // 1 to kMaxSearchLimit
  bool snippets = false;                    // fill TextHit::snippet
  // Whose read rights limit the hits (model/access.h), applied in the query itself so the best
  // `limit` are the best the reader may see; absent: every record of the owner.
  std::optional<model::AccessScope> reader = std::nullopt;
  bool exclude_secret = false;  // leaves out records of sensitivity `secret`
};

struct TextHit {
  model::Breadcrumb breadcrumb;
  double score = 0;     // higher is better (BM25, sign flipped); comparable within one answer only
  std::string snippet;  // a short excerpt with the matched words between "**", when asked for
};

class TextIndex {
 public:
  virtual ~TextIndex() = default;

  // The best matches, best first. A query with no word to search for, or beyond the bounds, is
  // kInvalidArgument with field "q"; a bad limit is kInvalidArgument with field "limit".
  virtual Result<std::vector<TextHit>> SearchText(const std::string& owner_id, const TextSearchQuery& query) = 0;
};

}  // namespace cairn::store
