#include "store/sqlite/fts_query.h"

#include <vector>

#include "store/search_words.h"

namespace cairn::store::sqlite {

Result<std::string> CompileFtsQuery(std::string_view text) {
  CAIRN_ASSIGN_OR_RETURN(std::vector<SearchWord> words, SearchQueryWords(text));
  std::string match;
  for (const SearchWord& word : words) {
    if (!match.empty()) match += " OR ";
    // A word holds no '"' (a separator), so quoting cannot be escaped from.
    match += "\"" + word.text + "\"" + (word.prefix ? "*" : "");
  }
  return match;
}

}  // namespace cairn::store::sqlite
