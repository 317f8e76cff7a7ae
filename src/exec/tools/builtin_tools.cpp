#include "exec/tools/builtin_tools.h"

#include <boost/json/parse.hpp>
#include <thread>

#include "model/json_schema.h"

namespace cairn::exec {
namespace json = boost::json;
namespace {

struct BuiltinInfo {
  const char* name;
  const char* description;
  const char* input_schema;
  int64_t timeout_ms;
};

constexpr BuiltinInfo kBuiltins[] = {
    {"echo", "Returns its input unchanged.", R"({"type":"object"})", 10000},
    {"sleep", "Waits `ms` milliseconds, then returns {slept_ms}.",
     R"({"type":"object","properties":{"ms":{"type":"integer","minimum":0,"maximum":3600000}},"required":["ms"],
        "additionalProperties":false})",
     300000},
    {"http_request",
     "Sends an HTTP request (GET, POST, PUT, DELETE) to an allowed URL and returns {status, headers, body, json}.",
     R"({"type":"object","properties":{"method":{"enum":["GET","POST","PUT","DELETE"]},"url":{"type":"string"},
        "headers":{"type":"object","additionalProperties":{"type":"string"}},"body":{},
        "timeout_ms":{"type":"integer","minimum":1,"maximum":60000}},"required":["url"],"additionalProperties":false})",
     60000},
    {"breadcrumb_create", "Creates a breadcrumb (the same fields as POST /breadcrumbs) as the caller.",
     R"({"type":"object","required":["title"]})", 10000},
    {"breadcrumb_get", "Reads a breadcrumb by id: the context view, or the whole record with view=full.",
     R"({"type":"object","properties":{"id":{"type":"string"},"view":{"enum":["context","full"]}},"required":["id"],
        "additionalProperties":false})",
     10000},
    {"breadcrumb_query",
     "Finds breadcrumbs with a selector (schema_name, any_tags, all_tags, path glob, context_match), newest first.",
     R"({"type":"object","properties":{"selector":{"type":"object"},"limit":{"type":"integer","minimum":1,"maximum":100}},
        "required":["selector"],"additionalProperties":false})",
     10000},
    {"breadcrumb_update",
     "Updates a breadcrumb as the caller: `patch` has the fields of PATCH /breadcrumbs/{id}; `if_match` the expected version.",
     R"({"type":"object","properties":{"id":{"type":"string"},"patch":{"type":"object"},
        "if_match":{"type":"integer","minimum":1}},"required":["id","patch"],"additionalProperties":false})",
     10000},
    {"wait_for",
     "Waits for the first event after the request that matches `selector`, up to `timeout_ms`; returns the event.",
     R"({"type":"object","properties":{"selector":{"type":"object"},"timeout_ms":{"type":"integer","minimum":1,
        "maximum":3600000}},"required":["selector","timeout_ms"],"additionalProperties":false})",
     3600000},
    {"search",
     "Finds breadcrumbs by words and meaning (like GET /breadcrumbs/search): `q` the words; `mode` text, vector or "
     "hybrid; optional schema_name, tags (all required), path prefix and limit. Returns {items (best first, each with "
     "score and snippet), mode}.",
     R"({"type":"object","properties":{"q":{"type":"string","minLength":1,"maxLength":1024},
        "mode":{"enum":["text","vector","hybrid"]},"schema_name":{"type":"string","maxLength":256},
        "tags":{"type":"array","items":{"type":"string","maxLength":256},"maxItems":16},
        "path":{"type":"string","maxLength":1024},"limit":{"type":"integer","minimum":1,"maximum":50}},
        "required":["q"],"additionalProperties":false})",
     30000},
};

class EchoTool final : public Tool {
 public:
  Result<json::value> Invoke(const ToolCall& call) override { return call.input; }
};

class SleepTool final : public Tool {
 public:
  Result<json::value> Invoke(const ToolCall& call) override {
    int64_t ms = call.input.as_object().at("ms").to_number<int64_t>();
    if (!SleepUnlessCancelled(call.cancelled, std::chrono::milliseconds(ms))) {
      return Status::Unavailable("sleep was cancelled");
    }
    return json::value(json::object{{"slept_ms", ms}});
  }
};

// A built-in checks its input against its own schema whatever the definition says (a definition
// may reuse a built-in with a looser input_schema): the implementations rely on that shape.
class SchemaChecked final : public Tool {
 public:
  SchemaChecked(std::unique_ptr<Tool> tool, json::value schema) : tool_(std::move(tool)), schema_(std::move(schema)) {}
  Result<json::value> Invoke(const ToolCall& call) override {
    CAIRN_RETURN_IF_ERROR(model::ValidateAgainstSchema(schema_, call.input, "input"));
    return tool_->Invoke(call);
  }

 private:
  std::unique_ptr<Tool> tool_;
  json::value schema_;
};

std::unique_ptr<Tool> MakeUnchecked(std::string_view name, const BuiltinToolDeps& deps) {
  if (name == "echo") return std::make_unique<EchoTool>();
  if (name == "sleep") return std::make_unique<SleepTool>();
  if (name == "http_request") return MakeHttpRequestTool(deps);
  if (name == "wait_for") return MakeWaitForTool(deps);
  if (name == "search") return MakeSearchTool(deps);
  return MakeBreadcrumbTool(name, deps);
}

}  // namespace

bool SleepUnlessCancelled(const std::atomic<bool>& cancelled, std::chrono::milliseconds duration) {
  // Polls: the flag is set by the watchdog thread, and a 10 ms tick is far below any timeout.
  auto until = std::chrono::steady_clock::now() + duration;
  while (!cancelled.load()) {
    auto now = std::chrono::steady_clock::now();
    if (now >= until) return true;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(until - now, std::chrono::milliseconds(10)));
  }
  return false;
}

std::vector<json::object> BuiltinToolDefinitions() {
  std::vector<json::object> out;
  for (const auto& info : kBuiltins) {
    out.push_back(json::object{{"name", info.name},
                               {"description", info.description},
                               {"runtime", "builtin"},
                               {"input_schema", json::parse(info.input_schema)},
                               {"timeout_ms", info.timeout_ms},
                               {"concurrency", 16}});
  }
  return out;
}

bool IsBuiltinTool(std::string_view name) {
  for (const auto& info : kBuiltins) {
    if (name == info.name) return true;
  }
  return false;
}

std::unique_ptr<Tool> MakeBuiltinTool(std::string_view name, const BuiltinToolDeps& deps) {
  for (const auto& info : kBuiltins) {
    if (name != info.name) continue;
    auto tool = MakeUnchecked(name, deps);
    return tool ? std::make_unique<SchemaChecked>(std::move(tool), json::parse(info.input_schema)) : nullptr;
  }
  return nullptr;
}

}  // namespace cairn::exec
