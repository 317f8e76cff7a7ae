// The text of a record that search embeds: its title, description, tags and the string values of
// its context (nested ones included, depth first), separated by newlines and bounded. The same
// text whoever asks: the embedding worker for stored vectors, context assembly for a trigger.
#pragma once

#include <cstddef>
#include <string>

#include "model/breadcrumb.h"

namespace cairn::search {

inline constexpr size_t kMaxRecordTextBytes = 8 * 1024;

std::string RecordText(const model::Breadcrumb& crumb, size_t max_bytes = kMaxRecordTextBytes);

// The first distinct words of `text` (as the full-text query counts them: runs of ASCII letters
// and digits and non-ASCII bytes), space-separated, within the bounds of a search query
// (store/text_index.h): for searching with a text longer than a query may be.
std::string QueryWords(std::string_view text);

}  // namespace cairn::search
