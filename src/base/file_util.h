// Whole-file reads and crash-safe writes of small files (keys, index metadata).
#pragma once

#include <sys/types.h>

#include <string>

#include "base/status.h"

namespace cairn {

// The whole content of `path`; kNotFound when it does not exist, kInternal when it cannot be read.
Result<std::string> ReadWholeFile(const std::string& path);

// Writes `bytes` to `path` so that a crash leaves either the old file (or none) or the whole new
// one, never a part: a temporary file beside it (created with `mode`), fsync, rename over `path`,
// fsync of the directory. kInternal naming the step that failed; the temporary file is removed.
Status WriteFileAtomically(const std::string& path, const std::string& bytes, mode_t mode);

}  // namespace cairn
