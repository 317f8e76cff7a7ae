#include "store/sqlite/fts_query.h"

#include <algorithm>
#include <vector>

#include "store/text_index.h"

namespace cairn::store::sqlite {
namespace {

Status BadQuery(const std::string& problem) { return Status(StatusCode::kInvalidArgument, "q: " + problem, "q"); }

}  // namespace

Result<std::string> CompileFtsQuery(std::string_view text) {
  if (text.size() > kMaxSearchQueryBytes) {
    return BadQuery("is longer than " + std::to_string(kMaxSearchQueryBytes) + " bytes");
  }
  struct Word {
    std::string text;
    bool prefix = false;
  };
  std::vector<Word> words;
  size_t i = 0;
  while (i < text.size()) {
    if (!IsSearchWordByte(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    Word word;
    while (i < text.size() && IsSearchWordByte(static_cast<unsigned char>(text[i]))) {
      char c = text[i++];
      word.text.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
    }
    word.prefix = i < text.size() && text[i] == '*';
    auto same = std::find_if(words.begin(), words.end(), [&](const Word& w) { return w.text == word.text; });
    if (same != words.end()) {
      same->prefix = same->prefix || word.prefix;
      continue;
    }
    if (words.size() == kMaxSearchTerms) {
      return BadQuery("has more than " + std::to_string(kMaxSearchTerms) + " distinct words");
    }
    words.push_back(std::move(word));
  }
  if (words.empty()) return BadQuery("has no word to search for (letters or digits)");
  std::string match;
  for (const Word& word : words) {
    if (!match.empty()) match += " OR ";
    // A word holds no '"' (a separator), so quoting cannot be escaped from.
    match += "\"" + word.text + "\"" + (word.prefix ? "*" : "");
  }
  return match;
}

}  // namespace cairn::store::sqlite
