// What a program may refer to: the top-level variables a caller provides, with optional types.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cairn::cel {

// Static types known to the checker. kDyn (the default) accepts anything and defers checks to
// evaluation — the right choice for JSON input, whose shape is only known at run time.
enum class Type : uint8_t { kDyn, kNull, kBool, kInt, kUint, kDouble, kString, kBytes, kList, kMap, kTimestamp, kDuration, kType };

struct Variable {
  std::string name;
  Type type = Type::kDyn;
};

using Declarations = std::vector<Variable>;

}  // namespace cairn::cel
