// Bounds on everything a client can send. The server builds one from its settings; the defaults
// here are the documented defaults.
#pragma once

#include <cstddef>

namespace cairn::model {

struct Limits {
  size_t max_json_depth = 64;
  size_t max_title_bytes = 1024;
  size_t max_description_bytes = 16 * 1024;
  size_t max_tags = 64;
  size_t max_tag_bytes = 256;
  size_t max_schema_name_bytes = 256;
  size_t max_path_bytes = 1024;
  size_t max_list_limit = 1000;
  size_t default_list_limit = 50;
  size_t max_context_rules = 32;
};

}  // namespace cairn::model
