// The settings table of `cairn serve`: every flag, its CAIRN_* variable, default and meaning.
// `cairn serve --help` and docs/config.md are both generated from this one table.
#pragma once

#include <vector>

#include "base/settings.h"

namespace cairn::app {

std::vector<SettingSpec> ServeSettingSpecs();

}  // namespace cairn::app
