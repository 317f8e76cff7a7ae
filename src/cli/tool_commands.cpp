// tools: the tool.v1 definitions with their descriptions and input schemas.
// call: writes a tool.request.v1 and waits for its tool.response.v1 on the event stream.
//
// `call` opens the event stream (filtered on the request's tag) before it writes the request,
// so a response however fast cannot be missed; the request carries a request_id chosen here
// for that filter.
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include "base/random_id.h"
#include "base/json_util.h"
#include "cli/commands.h"
#include "cli/json_output.h"
#include "cli/url_util.h"
#include "model/reserved.h"
#include "cli/answer_stream.h"

namespace cairn::cli {
namespace json = boost::json;

CommandSpec ToolsSpec() {
  return {"tools", "list the tools (tool.v1 definitions) with their descriptions and input schemas", "[--json]",
          {{"json", "", "print the definitions as one JSON array"}}, "", 0, 0};
}

CommandSpec CallSpec() {
  return {"call",
          "call a tool: write a tool.request.v1, wait for its response, print the output (exit 1 on an error)",
          "TOOL [--input JSON] [--wait SECONDS]",
          {{"input", "JSON", "the tool's input (default {})"},
           {"wait", "SECONDS", "how long to wait for the response (default 30)"},
           {"full", "", "print the whole tool.response.v1 context, not only the output"}},
          "TOOL",
          1,
          1};
}

int RunTools(CommandRun& run) {
  QueryString query;
  query.Add("schema_name", std::string(model::kToolSchema));
  query.Add("include_context", "true");
  query.Add("order", "asc");
  query.Add("limit", "1000");
  auto reply = run.api().Call("GET", "/breadcrumbs" + query.Build());
  if (!reply.ok()) return run.Failure(reply.status());
  json::array definitions;
  if (const json::value* items = reply->body.is_object() ? reply->body.as_object().if_contains("items") : nullptr;
      items && items->is_array()) {
    for (const auto& item : items->as_array()) {
      if (const json::value* context = item.as_object().if_contains("context")) definitions.push_back(*context);
    }
  }
  if (run.args().Has("json")) return run.PrintJson(definitions);
  std::ostream& out = run.context().out;
  for (const auto& value : definitions) {
    if (!value.is_object()) continue;
    const json::object& def = value.as_object();
    out << StringMember(def, "name") << " (" << StringMember(def, "runtime") << ")\n";
    if (!StringMember(def, "description").empty()) out << "  " << StringMember(def, "description") << "\n";
    const json::value* schema = def.if_contains("input_schema");
    out << "  input: " << (schema ? json::serialize(*schema) : std::string("{\"type\":\"object\"}")) << "\n";
  }
  if (definitions.empty()) out << "no tools defined\n";
  return kExitOk;
}

int RunCall(CommandRun& run) {
  const std::string& tool = run.args().positionals()[0];
  auto input = InputOption(run);
  if (!input.ok()) return run.UsageError(input.status().message());
  auto wait_seconds = WaitSeconds(run, "wait", 30);
  if (!wait_seconds.ok()) return run.UsageError(wait_seconds.status().message());
  const std::string request_id = RandomId("cli-");
  auto answer = CallToolAndWait(run, tool, *input, request_id, *wait_seconds);
  if (!answer.ok()) return run.Failure(answer.status());
  if (!answer->answer) {
    if (answer->interrupted) return kExitFailure;
    return run.Failure(Status::Unavailable("no response from " + tool + " within " + std::to_string(*wait_seconds) +
                                           " s (request_id " + request_id + "; it may still answer)"));
  }
  return ReportAnswer(run, *answer->answer, "call", tool);
}

}  // namespace cairn::cli
