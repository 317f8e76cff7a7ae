// Names the calling thread (as ps -L, top -H, /proc/<pid>/task/*/comm and debuggers show it), so
// the threads of a running server can be told apart. Linux keeps 15 characters; longer names are
// cut. Best effort: a failure is ignored.
#pragma once

#include <string_view>

namespace cairn {

void NameThisThread(std::string_view name);

}  // namespace cairn
