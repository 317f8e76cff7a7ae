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

}  // namespace cairn::search
