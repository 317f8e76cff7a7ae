// llm_hints: how a breadcrumb's context is shown to an LLM (and in the context view).
//
//   {"include": ["a", "b.c"], "exclude": ["secret"], "template": "Task {{title}}: {{b.c}}"}
//
// `include` keeps only the named dotted paths, `exclude` then removes paths, and `template`
// renders a text where each {{dotted.path}} is replaced by that value of the (filtered) context
// (strings as-is, other JSON compactly; a missing path renders as empty).
#pragma once

#include <boost/json/value.hpp>
#include <optional>
#include <string>

#include "base/status.h"

namespace cairn::model {

// Null is valid (no hints). Otherwise an object with only the keys above, of the right types.
Status ValidateLlmHints(const boost::json::value& hints);

struct RenderedContext {
  boost::json::value context;       // filtered by include/exclude
  std::optional<std::string> text;  // present when a template is given
};

// Applies valid `hints` (see ValidateLlmHints) to `context`.
RenderedContext ApplyLlmHints(const boost::json::value& context, const boost::json::value& hints);

}  // namespace cairn::model
