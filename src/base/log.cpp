#include "base/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>

namespace cairn {

bool InitLogging(std::string_view level) {
  auto parsed = spdlog::level::from_str(std::string(level));
  if (parsed == spdlog::level::off && level != "off") return false;
  auto logger = spdlog::get("cairn");
  if (!logger) logger = spdlog::stderr_color_mt("cairn");
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%fZ %^%l%$ [%t] %v", spdlog::pattern_time_type::utc);
  logger->set_level(parsed);
  spdlog::set_default_logger(logger);
  spdlog::set_level(parsed);
  return true;
}

}  // namespace cairn
