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

namespace {

Status BadQuery(const std::string& problem) { return Status(StatusCode::kInvalidArgument, "q: " + problem, "q"); }

}  // namespace

Result<std::vector<SearchWord>> SearchQueryWords(std::string_view text) {
  if (text.size() > kMaxSearchQueryBytes) {
    return BadQuery("is longer than " + std::to_string(kMaxSearchQueryBytes) + " bytes");
  }
  // One more than allowed: finding it means the text has too many.
  std::vector<SearchWord> words = SplitSearchWords(text, kMaxSearchTerms + 1);
  if (words.size() > kMaxSearchTerms) {
    return BadQuery("has more than " + std::to_string(kMaxSearchTerms) + " distinct words");
  }
  if (words.empty()) return BadQuery("has no word to search for (letters or digits)");
  return words;
}

Status CheckSearchLimit(size_t limit) {
  if (limit >= 1 && limit <= kMaxSearchLimit) return Status::Ok();
  return Status(StatusCode::kInvalidArgument, "limit: must be from 1 to " + std::to_string(kMaxSearchLimit), "limit");
}

}  // namespace cairn::store
