// Bounds on everything a client can send. The server builds one from its settings; the defaults
// here are the documented defaults.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace cairn::model {

// Which of the server's environment variables a process tool's `env` may name
// (CheckToolEnvName in tool_definition.h; docs/executors.md, "Process tools").
struct ToolEnvPolicy {
  // --tool-env-allow: names, '*' matching any run of characters. Empty: none.
  std::vector<std::string> allow;
  // The variables the configured LLM providers read their keys from: never passed, like CAIRN_*.
  std::vector<std::string> secret_names;
};

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
  ToolEnvPolicy tool_env;
};

}  // namespace cairn::model
