// SplitSearchWords: the one tokenizer of query text (store/text_index.h), used to build the
// full-text match of every backend (store/sqlite/fts_query.h, store/postgres/pg_text_index.cpp)
// and the text a query vector is embedded from (search/record_text.h), so all read the same words
// out of what a user typed. SearchQueryWords and CheckSearchLimit are the bounds of a text search
// that every backend refuses alike.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace cairn::store {

struct SearchWord {
  std::string text;     // ASCII lower-cased; bytes for which IsSearchWordByte holds
  bool prefix = false;  // written with a trailing '*' (any occurrence of the word)
};

// The distinct words of `text` in order of first appearance, at most `max_words` (the rest are
// not read). Everything that is not a word byte separates words.
std::vector<SearchWord> SplitSearchWords(std::string_view text, size_t max_words);

// The words of TextSearchQuery::text, as every backend searches for them. Text over
// kMaxSearchQueryBytes, with more than kMaxSearchTerms distinct words, or with none is
// kInvalidArgument with field "q".
Result<std::vector<SearchWord>> SearchQueryWords(std::string_view text);

// TextSearchQuery::limit: 1 to kMaxSearchLimit, else kInvalidArgument with field "limit".
Status CheckSearchLimit(size_t limit);

}  // namespace cairn::store
