// The --ttl argument of put/update: an absolute RFC 3339 time, or a duration from now.
//
// The API takes only RFC 3339, but "expire in 2h" is what people mean most of the time, so the
// client converts a duration into an absolute time with its own clock before sending it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace cairn::cli {

// RFC 3339 text is returned unchanged (the server checks that it lies in the future).
// A duration is one or more <digits><unit> groups, units s, m, h, d, w ("90s", "1h30m", "7d"),
// and yields FormatRfc3339Micros(now_micros + duration). Anything else, a zero duration or an
// overflow is kInvalidArgument explaining both accepted forms.
Result<std::string> ResolveTtl(std::string_view text, int64_t now_micros);

}  // namespace cairn::cli
