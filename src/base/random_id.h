// Random ids for what a client names itself before writing (a tool request's request_id, a
// session of `cairn mcp serve`): `prefix` followed by 24 random hex digits (96 bits).
#pragma once

#include <string>
#include <string_view>

namespace cairn {

std::string RandomId(std::string_view prefix);

}  // namespace cairn
