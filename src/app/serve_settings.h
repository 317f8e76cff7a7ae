// The settings table of `cairn serve`: every flag, its CAIRN_* variable, default and meaning.
// `cairn serve --help` and docs/config.md are both generated from this one table.
#pragma once

#include <string>
#include <vector>

#include "base/settings.h"

namespace cairn::app {

std::vector<SettingSpec> ServeSettingSpecs();

// The items of a comma-separated setting, trimmed of spaces; empty items are left out.
std::vector<std::string> SplitList(const std::string& text);

}  // namespace cairn::app
