// The Tool for a tool.v1 definition: its built-in implementation, a subprocess (process
// runtime) or an HTTP endpoint (http runtime).
//
// process: the child gets {"input": ..., "context": ...} on stdin and writes its result, one JSON
// value, to file descriptor 3; stdout and stderr are kept as logs. It runs in the sandbox of
// process_sandbox.h (deps.options.process: tool user, a run directory as HOME and default cwd;
// environment PATH, LANG, TZ, HOME and the allowed names of `env`) under the definition's
// limits. Non-zero exit, a signal, a limit or a result that is not JSON answers with an error
// (internal) carrying the reason — naming the limit hit — and the stderr tail.
// http: the input is POSTed as JSON; a 2xx JSON reply is the output, anything else an error. It
// connects only where deps.options.outbound_policy allows (a refusal is a bad_request error).
#pragma once

#include <memory>

#include "exec/tools/builtin_tools.h"
#include "model/tool_definition.h"

namespace cairn::exec {

// kValidation naming context.builtin when a builtin definition names no known implementation.
Result<std::unique_ptr<Tool>> MakeTool(const model::ToolDefinition& definition, const BuiltinToolDeps& deps);

}  // namespace cairn::exec
