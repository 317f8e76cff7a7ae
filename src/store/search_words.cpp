#include "store/search_words.h"

#include <algorithm>

#include "store/text_index.h"

namespace cairn::store {

std::vector<SearchWord> SplitSearchWords(std::string_view text, size_t max_words) {
  std::vector<SearchWord> words;
  size_t i = 0;
  while (i < text.size()) {
    if (!IsSearchWordByte(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    SearchWord word;
    while (i < text.size() && IsSearchWordByte(static_cast<unsigned char>(text[i]))) {
      char c = text[i++];
      word.text.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
    }
    word.prefix = i < text.size() && text[i] == '*';
    auto same = std::find_if(words.begin(), words.end(), [&](const SearchWord& w) { return w.text == word.text; });
    if (same != words.end()) {
      same->prefix = same->prefix || word.prefix;
      continue;
    }
    if (words.size() == max_words) break;
    words.push_back(std::move(word));
  }
  return words;
}

}  // namespace cairn::store
