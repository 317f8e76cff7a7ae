// Logging macros. Every module logs through these, never through spdlog directly, so the backend
// and format can change in one place.
#pragma once

#include <spdlog/spdlog.h>

#include <string_view>

#define CAIRN_LOG_TRACE(...) SPDLOG_TRACE(__VA_ARGS__)
#define CAIRN_LOG_DEBUG(...) SPDLOG_DEBUG(__VA_ARGS__)
#define CAIRN_LOG_INFO(...) SPDLOG_INFO(__VA_ARGS__)
#define CAIRN_LOG_WARN(...) SPDLOG_WARN(__VA_ARGS__)
#define CAIRN_LOG_ERROR(...) SPDLOG_ERROR(__VA_ARGS__)

namespace cairn {

// Sets up the process logger on stderr at `level` (trace|debug|info|warn|error|off).
// Returns false, leaving the level unchanged, if the level name is unknown.
bool InitLogging(std::string_view level);

}  // namespace cairn
