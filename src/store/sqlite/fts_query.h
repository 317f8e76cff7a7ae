// Turns what a user typed into an FTS5 MATCH expression that means "any of these words", never
// passing FTS5 syntax through: every word is a quoted string (so AND, OR, NEAR, column filters,
// parentheses and quotes in the text are plain words or separators), and only a trailing `*` on
// a word survives, as a prefix match. See store/text_index.h for the bounds.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace cairn::store::sqlite {

// `"w1" OR "w2"* OR ...`: the distinct words of `text` (case-insensitive for ASCII) in order.
// A word is a run of ASCII letters and digits and of non-ASCII bytes (UTF-8 letters; FTS5's
// tokenizer splits them further where it must); everything else separates words. The bounds are
// SearchQueryWords' (store/search_words.h): beyond them, kInvalidArgument with field "q".
Result<std::string> CompileFtsQuery(std::string_view text);

}  // namespace cairn::store::sqlite
