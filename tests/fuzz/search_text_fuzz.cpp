// search_text_fuzz: the text `q` of GET /breadcrumbs/search, as CompileFtsQuery
// (store/sqlite/fts_query.h) turns it into an FTS5 MATCH expression, run on an in-memory FTS5
// table like the store's (same tokenizer) holding a few records.
//
// Properties, besides no sanitizer report:
//   - a refusal is kInvalidArgument naming "q", and only for text that is too long, has too many
//     distinct words or none;
//   - an accepted expression is only quoted words joined by " OR ", each optionally followed by
//     '*': no client byte but word bytes inside the quotes, at most kMaxSearchTerms words;
//   - SQLite accepts every accepted expression: preparing and running the MATCH never fails.
#include <sqlite3.h>

#include <string>

#include "fuzz_check.h"
#include "store/sqlite/fts_query.h"
#include "store/text_index.h"

namespace {

using cairn::store::IsSearchWordByte;

sqlite3* Database() {
  static sqlite3* db = [] {
    sqlite3* opened = nullptr;
    sqlite3_open(":memory:", &opened);
    sqlite3_exec(opened,
                 "CREATE VIRTUAL TABLE f USING fts5(title, description, tags, body, "
                 "tokenize = 'unicode61 remove_diacritics 2');"
                 "INSERT INTO f VALUES ('Plan the trip', 'to Lisbon', 'travel todo', 'caf\xc3\xa9 harbour 42');"
                 "INSERT INTO f VALUES ('and or not near', '', '', 'drop table breadcrumbs');",
                 nullptr, nullptr, nullptr);
    return opened;
  }();
  return db;
}

// Checks the shape of an accepted expression; returns the number of words.
size_t CheckShape(const std::string& match) {
  size_t words = 0;
  size_t i = 0;
  while (i < match.size()) {
    if (words > 0) {
      FUZZ_CHECK(match.compare(i, 4, " OR ") == 0, match);
      i += 4;
    }
    FUZZ_CHECK(i < match.size() && match[i] == '"', match);
    ++i;
    size_t start = i;
    while (i < match.size() && match[i] != '"') {
      FUZZ_CHECK(IsSearchWordByte(static_cast<unsigned char>(match[i])), match);
      ++i;
    }
    FUZZ_CHECK(i < match.size() && i > start, match);
    ++i;  // the closing quote
    if (i < match.size() && match[i] == '*') ++i;
    ++words;
  }
  FUZZ_CHECK(words >= 1 && words <= cairn::store::kMaxSearchTerms, match);
  return words;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, size_t size) {
  const std::string_view text = cairn::fuzz::AsText(data, size);
  auto match = cairn::store::sqlite::CompileFtsQuery(text);
  if (!match.ok()) {
    FUZZ_CHECK(match.status().code() == cairn::StatusCode::kInvalidArgument, match.status().ToString());
    FUZZ_CHECK(match.status().field() == "q", match.status().ToString());
    return 0;
  }
  FUZZ_CHECK(text.size() <= cairn::store::kMaxSearchQueryBytes, "accepted an over-long text");
  CheckShape(*match);
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(Database(), "SELECT rowid, bm25(f), snippet(f, -1, '**', '**', '...', 16) FROM f "
                                          "WHERE f MATCH ?1 ORDER BY bm25(f)", -1, &stmt, nullptr);
  FUZZ_CHECK(rc == SQLITE_OK, sqlite3_errmsg(Database()));
  sqlite3_bind_text(stmt, 1, match->data(), static_cast<int>(match->size()), SQLITE_TRANSIENT);
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
  }
  const std::string error = rc == SQLITE_DONE ? "" : sqlite3_errmsg(Database());
  sqlite3_finalize(stmt);
  FUZZ_CHECK(rc == SQLITE_DONE, *match + " → " + error);
  return 0;
}
