// SplitSearchWords: the one tokenizer of query text (store/text_index.h), used to build the
// full-text match (store/sqlite/fts_query.h) and the text a query vector is embedded from
// (search/record_text.h), so both read the same words out of what a user typed.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cairn::store {

struct SearchWord {
  std::string text;     // ASCII lower-cased; bytes for which IsSearchWordByte holds
  bool prefix = false;  // written with a trailing '*' (any occurrence of the word)
};

// The distinct words of `text` in order of first appearance, at most `max_words` (the rest are
// not read). Everything that is not a word byte separates words.
std::vector<SearchWord> SplitSearchWords(std::string_view text, size_t max_words);

}  // namespace cairn::store
