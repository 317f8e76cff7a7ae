#include "store/sqlite/fts_query.h"

#include <vector>

#include "store/search_words.h"
#include "store/text_index.h"

namespace cairn::store::sqlite {
namespace {

Status BadQuery(const std::string& problem) { return Status(StatusCode::kInvalidArgument, "q: " + problem, "q"); }

}  // namespace

Result<std::string> CompileFtsQuery(std::string_view text) {
  if (text.size() > kMaxSearchQueryBytes) {
    return BadQuery("is longer than " + std::to_string(kMaxSearchQueryBytes) + " bytes");
  }
  // One more than allowed: finding it means the text has too many.
  std::vector<SearchWord> words = SplitSearchWords(text, kMaxSearchTerms + 1);
  if (words.size() > kMaxSearchTerms) {
    return BadQuery("has more than " + std::to_string(kMaxSearchTerms) + " distinct words");
  }
  if (words.empty()) return BadQuery("has no word to search for (letters or digits)");
  std::string match;
  for (const SearchWord& word : words) {
    if (!match.empty()) match += " OR ";
    // A word holds no '"' (a separator), so quoting cannot be escaped from.
    match += "\"" + word.text + "\"" + (word.prefix ? "*" : "");
  }
  return match;
}

}  // namespace cairn::store::sqlite
