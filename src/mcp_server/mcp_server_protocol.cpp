#include "mcp_server/mcp_server_protocol.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cctype>

#include "base/json_util.h"
#include "base/random_id.h"

namespace cairn::mcp_server {
namespace json = boost::json;

namespace {

constexpr size_t kMaxJsonDepth = 64;
constexpr int64_t kDefaultWaitSeconds = 60;
constexpr int64_t kMaxWaitSeconds = 600;

json::object Schema(json::object properties, json::array required) {
  json::object schema{{"type", "object"}, {"properties", std::move(properties)}};
  if (!required.empty()) schema["required"] = std::move(required);
  return schema;
}

json::object Tool(const char* name, const char* title, const char* description, json::object schema) {
  return json::object{{"name", name}, {"title", title}, {"description", description}, {"inputSchema", std::move(schema)}};
}

json::object Prop(const char* type, const char* description) {
  return json::object{{"type", type}, {"description", description}};
}

std::string PercentEncode(std::string_view text) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// An argument check failed: the message names the argument.
Status BadArgument(const std::string& name, const std::string& what) {
  return Status::Validation("arguments." + name, name + " " + what);
}

Result<std::string> StringArg(const json::object& args, const char* name, bool required) {
  const json::value* v = args.if_contains(name);
  if (!v || v->is_null()) {
    if (required) return BadArgument(name, "is required");
    return std::string();
  }
  if (!v->is_string()) return BadArgument(name, "must be a string");
  return std::string(v->as_string());
}

Result<int64_t> IntArg(const json::object& args, const char* name, int64_t fallback, int64_t min, int64_t max) {
  const json::value* v = args.if_contains(name);
  if (!v || v->is_null()) return fallback;
  auto n = v->is_int64() ? std::optional<int64_t>(v->as_int64())
           : v->is_uint64() ? std::optional<int64_t>(static_cast<int64_t>(v->as_uint64()))
           : v->is_double() && v->as_double() == static_cast<double>(static_cast<int64_t>(v->as_double()))
               ? std::optional<int64_t>(static_cast<int64_t>(v->as_double()))
               : std::nullopt;
  if (!n || *n < min || *n > max) {
    return BadArgument(name, "must be an integer from " + std::to_string(min) + " to " + std::to_string(max));
  }
  return *n;
}

// Appends name=value (percent-encoded) when value is not empty.
void AddQuery(std::string& query, const char* name, const std::string& value) {
  if (value.empty()) return;
  query += query.empty() ? "?" : "&";
  query += name;
  query += "=";
  query += PercentEncode(value);
}

json::object Success(const json::value& value) {
  json::object result{{"content", json::array{json::object{{"type", "text"}, {"text", json::serialize(value)}}}}};
  if (value.is_object()) result["structuredContent"] = value;
  return result;
}

json::object ToolError(const std::string& message) {
  return json::object{{"content", json::array{json::object{{"type", "text"}, {"text", message}}}}, {"isError", true}};
}

json::object RpcError(const json::value& id, int code, const std::string& message) {
  return json::object{{"jsonrpc", "2.0"}, {"id", id}, {"error", json::object{{"code", code}, {"message", message}}}};
}

}  // namespace

json::object ToolList() {
  json::array tools{
      Tool("create_breadcrumb", "Create a breadcrumb",
           "Writes a new breadcrumb (a versioned JSON record) to cairn and returns it.",
           Schema({{"title", Prop("string", "required title")},
                   {"schema_name", Prop("string", "schema, e.g. note.v1")},
                   {"description", Prop("string", "")},
                   {"tags", json::object{{"type", "array"}, {"items", json::object{{"type", "string"}}}}},
                   {"context", json::object{{"description", "the JSON payload"}}},
                   {"path", Prop("string", "optional unique hierarchical key")}},
                  {"title"})),
      Tool("get_breadcrumb", "Get a breadcrumb", "Reads one breadcrumb by id (full: the whole record).",
           Schema({{"id", Prop("string", "the breadcrumb's id")}, {"full", Prop("boolean", "the whole record")}}, {"id"})),
      Tool("query_breadcrumbs", "Query breadcrumbs", "Lists breadcrumbs by schema, tag or path, newest first.",
           Schema({{"schema_name", Prop("string", "")},
                   {"tag", Prop("string", "a tag every result has")},
                   {"path", Prop("string", "exact path")},
                   {"path_prefix", Prop("string", "path prefix (whole segments)")},
                   {"limit", Prop("integer", "1 to 100 (default 20)")},
                   {"cursor", Prop("string", "next_cursor of a previous page")}},
                  {})),
      Tool("search_breadcrumbs", "Search breadcrumbs", "Full-text (and vector, when enabled) search over breadcrumbs.",
           Schema({{"q", Prop("string", "the query text")},
                   {"mode", Prop("string", "text, vector or hybrid")},
                   {"schema_name", Prop("string", "")},
                   {"limit", Prop("integer", "1 to 100 (default 10)")}},
                  {"q"})),
      Tool("list_tools", "List cairn tools", "The tools defined in cairn (tool.v1) with their input schemas.",
           Schema({}, {})),
      Tool("call_tool", "Call a cairn tool",
           "Calls a cairn tool through its tool pipeline and returns its output (an error when it fails).",
           Schema({{"tool", Prop("string", "the tool's name")},
                   {"input", json::object{{"type", "object"}, {"description", "the tool's input"}}},
                   {"timeout_seconds", Prop("integer", "1 to 600 (default 60)")}},
                  {"tool"})),
      Tool("send_message", "Message an agent",
           "Sends a message to an agent in a session (a new one when session_id is absent) and returns its answer.",
           Schema({{"message", Prop("string", "what to say")},
                   {"session_id", Prop("string", "an existing session")},
                   {"agent_id", Prop("string", "the agent of a new session (default: the default agent)")},
                   {"timeout_seconds", Prop("integer", "1 to 600 (default 60)")}},
                  {"message"})),
  };
  return json::object{{"tools", std::move(tools)}};
}

bool McpServerProtocol::SpeaksVersion(std::string_view version) {
  for (const char* v : kServerProtocolVersions) {
    if (version == v) return true;
  }
  return false;
}

std::optional<json::object> McpServerProtocol::HandleText(std::string_view text) {
  auto parsed = ParseJson(text, kMaxJsonDepth);
  if (!parsed.ok()) return RpcError(nullptr, -32700, "parse error: " + parsed.status().message());
  return Handle(*parsed);
}

std::optional<json::object> McpServerProtocol::Handle(const json::value& message) {
  if (!message.is_object()) return RpcError(nullptr, -32600, "a message must be a JSON-RPC 2.0 object (no batches)");
  const json::object& o = message.as_object();
  const json::value* id = o.if_contains("id");
  const json::value* method = o.if_contains("method");
  if (!method) return std::nullopt;  // a response (cairn sends no requests) or junk without an id
  if (!method->is_string()) return id ? std::optional(RpcError(*id, -32600, "method must be a string")) : std::nullopt;
  if (!id) return std::nullopt;  // a notification: initialized, cancelled, ...
  if (!(id->is_string() || id->is_int64() || id->is_uint64())) {
    return RpcError(nullptr, -32600, "id must be a string or an integer");
  }
  const json::value* params_value = o.if_contains("params");
  static const json::object kNoParams;
  const json::object& params = params_value && params_value->is_object() ? params_value->as_object() : kNoParams;
  const std::string_view name = method->as_string();
  json::object response{{"jsonrpc", "2.0"}, {"id", *id}};
  if (name == "initialize") {
    const json::value* requested = params.if_contains("protocolVersion");
    std::string version = kServerProtocolVersions[0];
    if (requested && requested->is_string() && SpeaksVersion(requested->as_string())) {
      version = std::string(requested->as_string());
    }
    response["result"] = json::object{
        {"protocolVersion", version},
        {"capabilities", json::object{{"tools", json::object{{"listChanged", false}}}}},
        {"serverInfo", json::object{{"name", "cairn"}, {"version", "0.1"}}},
        {"instructions", "cairn's breadcrumbs (versioned JSON records), tools and agents."},
    };
  } else if (name == "ping") {
    response["result"] = json::object{};
  } else if (name == "tools/list") {
    response["result"] = ToolList();
  } else if (name == "tools/call") {
    const json::value* tool = params.if_contains("name");
    if (!tool || !tool->is_string()) return RpcError(*id, -32602, "params.name must name a tool");
    const json::value* args = params.if_contains("arguments");
    if (args && !args->is_object() && !args->is_null()) return RpcError(*id, -32602, "params.arguments must be an object");
    static const json::object kNoArgs;
    auto result = CallTool(std::string(tool->as_string()), args && args->is_object() ? args->as_object() : kNoArgs);
    if (!result.ok() && result.status().code() == StatusCode::kNotFound && result.status().field() == "name") {
      return RpcError(*id, -32602, result.status().message());
    }
    response["result"] = result.ok() ? Success(*result) : ToolError(result.status().message());
  } else {
    return RpcError(*id, -32601, "method not found: " + std::string(name));
  }
  return response;
}

Result<json::value> McpServerProtocol::CallTool(const std::string& name, const json::object& args) {
  if (name == "create_breadcrumb") {
    json::object body;
    for (const char* field : {"title", "schema_name", "description", "tags", "context", "path"}) {
      if (const json::value* v = args.if_contains(field)) body[field] = *v;
    }
    if (!body.contains("title")) return BadArgument("title", "is required");
    return backend_.Api("POST", "/breadcrumbs", body);
  }
  if (name == "get_breadcrumb") {
    CAIRN_ASSIGN_OR_RETURN(std::string id, StringArg(args, "id", true));
    const json::value* full = args.if_contains("full");
    bool whole = full && full->is_bool() && full->as_bool();
    return backend_.Api("GET", "/breadcrumbs/" + PercentEncode(id) + (whole ? "/full" : ""), nullptr);
  }
  if (name == "query_breadcrumbs") {
    std::string query;
    for (const char* field : {"schema_name", "tag", "path", "path_prefix", "cursor"}) {
      CAIRN_ASSIGN_OR_RETURN(std::string value, StringArg(args, field, false));
      AddQuery(query, field, value);
    }
    CAIRN_ASSIGN_OR_RETURN(int64_t limit, IntArg(args, "limit", 20, 1, 100));
    AddQuery(query, "limit", std::to_string(limit));
    AddQuery(query, "include_context", "true");
    return backend_.Api("GET", "/breadcrumbs" + query, nullptr);
  }
  if (name == "search_breadcrumbs") {
    std::string query;
    CAIRN_ASSIGN_OR_RETURN(std::string q, StringArg(args, "q", true));
    AddQuery(query, "q", q);
    for (const char* field : {"mode", "schema_name"}) {
      CAIRN_ASSIGN_OR_RETURN(std::string value, StringArg(args, field, false));
      AddQuery(query, field, value);
    }
    CAIRN_ASSIGN_OR_RETURN(int64_t limit, IntArg(args, "limit", 10, 1, 100));
    AddQuery(query, "limit", std::to_string(limit));
    return backend_.Api("GET", "/breadcrumbs/search" + query, nullptr);
  }
  if (name == "list_tools") {
    CAIRN_ASSIGN_OR_RETURN(json::value page,
                           backend_.Api("GET", "/breadcrumbs?schema_name=tool.v1&include_context=true&limit=1000&order=asc", nullptr));
    json::array tools;
    const json::value* items = page.is_object() ? page.as_object().if_contains("items") : nullptr;
    if (items && items->is_array()) {
      for (const json::value& item : items->as_array()) {
        const json::value* context = item.is_object() ? item.as_object().if_contains("context") : nullptr;
        if (!context || !context->is_object()) continue;
        const json::object& def = context->as_object();
        json::object tool{{"name", def.contains("name") ? def.at("name") : json::value()}};
        if (const json::value* d = def.if_contains("description")) tool["description"] = *d;
        tool["input_schema"] = def.contains("input_schema") ? def.at("input_schema") : json::value(json::object{{"type", "object"}});
        tools.push_back(std::move(tool));
      }
    }
    return json::value(json::object{{"tools", std::move(tools)}});
  }
  if (name == "call_tool") {
    CAIRN_ASSIGN_OR_RETURN(std::string tool, StringArg(args, "tool", true));
    CAIRN_ASSIGN_OR_RETURN(int64_t wait, IntArg(args, "timeout_seconds", kDefaultWaitSeconds, 1, kMaxWaitSeconds));
    const json::value* input = args.if_contains("input");
    if (input && !input->is_object()) return BadArgument("input", "must be an object");
    CAIRN_ASSIGN_OR_RETURN(json::object answer, backend_.CallTool(tool, input ? *input : json::value(json::object{}),
                                                                  std::chrono::seconds(wait)));
    const json::value* status = answer.if_contains("status");
    if (status && *status == "error") {
      const json::value* error = answer.if_contains("error");
      std::string text = error ? json::serialize(*error) : "the tool failed";
      return Status::Unavailable(tool + " failed: " + text);
    }
    const json::value* output = answer.if_contains("output");
    json::value out = output ? *output : json::value();
    return out.is_object() ? out : json::value(json::object{{"output", out}});
  }
  if (name == "send_message") {
    CAIRN_ASSIGN_OR_RETURN(std::string text, StringArg(args, "message", true));
    CAIRN_ASSIGN_OR_RETURN(std::string session, StringArg(args, "session_id", false));
    if (session.empty()) session = RandomId("mcp-");
    CAIRN_ASSIGN_OR_RETURN(std::string agent, StringArg(args, "agent_id", false));
    CAIRN_ASSIGN_OR_RETURN(int64_t wait, IntArg(args, "timeout_seconds", kDefaultWaitSeconds, 1, kMaxWaitSeconds));
    CAIRN_ASSIGN_OR_RETURN(json::object answer, backend_.SendMessage(session, agent, text, std::chrono::seconds(wait)));
    return json::value(std::move(answer));
  }
  return Status(StatusCode::kNotFound, "cairn has no MCP tool named '" + name + "'", "name");
}

}  // namespace cairn::mcp_server
