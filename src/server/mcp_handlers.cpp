#include "server/mcp_handlers.h"

#include <boost/json/serialize.hpp>
#include <boost/url/parse.hpp>

#include "base/json_util.h"
#include "exec/response_waiter.h"
#include "mcp_server/mcp_server_protocol.h"
#include "model/reserved.h"
#include "server/error_response.h"
#include "server/request_auth.h"
#include "server/request_support.h"

namespace cairn::server {
namespace json = boost::json;

namespace {

constexpr size_t kMaxJsonDepth = 64;

// The MCP tools in process: API calls through the router as the calling client, waits on the bus.
class InProcessBackend final : public mcp_server::CairnBackend {
 public:
  InProcessBackend(const Router& router, const McpRouteDeps& deps, const HttpRequest& outer)
      : router_(router), deps_(deps), outer_(outer) {}

  Result<json::value> Api(const std::string& method, const std::string& target, const json::value& body) override {
    HttpRequest request;
    request.method = method;
    request.target = target;
    auto url = boost::urls::parse_origin_form(target);
    if (!url) return Status::InvalidArgument("malformed request target '" + target + "'");
    request.path = url->path();
    for (auto param : url->params()) request.query.emplace_back(param.key, param.value);
    // The caller's identity and credentials, whatever the API reads them from.
    for (const auto& [name, value] : outer_.headers) {
      if (name == "content-type" || name == "content-length" || name == "accept") continue;
      request.headers.emplace_back(name, value);
    }
    if (!body.is_null()) {
      request.headers.emplace_back("content-type", "application/json");
      request.body = json::serialize(body);
    }
    Router::Match match = router_.Find(method, request.path);
    if (!match.route) return match.error;
    // As the client itself: its principal, held to each route's role like its own requests.
    request.principal = outer_.principal;
    CAIRN_RETURN_IF_ERROR(AuthorizeRoute(request.principal.get(), match.route->access));
    request.path_params = std::move(match.params);
    CAIRN_ASSIGN_OR_RETURN(HttpResponse response, match.route->handler(request));
    if (response.status < 200 || response.status > 299) {
      auto parsed = ParseJson(response.body, kMaxJsonDepth);
      std::string message = response.body;
      if (parsed.ok() && parsed->is_object()) {
        const json::value* error = parsed->as_object().if_contains("error");
        if (error && error->is_object() && error->as_object().contains("message")) {
          message = json::serialize(*error);
        }
      }
      return Status::Unavailable(method + " " + request.path + " answered " + std::to_string(response.status) + ": " + message);
    }
    if (response.body.empty()) return json::value();
    return ParseJson(response.body, kMaxJsonDepth);
  }

  Result<json::object> CallTool(const std::string& tool, const json::value& input, std::chrono::seconds timeout) override {
    exec::ResponseWaiter waiter(*deps_.store, *deps_.bus, Tenant(), exec::kToolResponses);
    CAIRN_ASSIGN_OR_RETURN(json::value created,
                           Api("POST", "/breadcrumbs",
                               json::object{{"title", "call " + tool},
                                            {"schema_name", model::kToolRequestSchema},
                                            {"context", json::object{{"tool", tool}, {"input", input}}}}));
    std::string id = created.is_object() && created.as_object().contains("id")
                         ? std::string(created.as_object().at("id").as_string()) : "";
    return Await(waiter, id, tool, timeout);
  }

  Result<json::object> SendMessage(const std::string& session_id, const std::string& agent_id, const std::string& text,
                                   std::chrono::seconds timeout) override {
    const std::string& session = session_id;
    exec::ResponseWaiter waiter(*deps_.store, *deps_.bus, Tenant(), exec::kAgentResponses);
    json::object context{{"content", text}};
    if (!agent_id.empty()) context["agent_id"] = agent_id;
    CAIRN_ASSIGN_OR_RETURN(json::value created,
                           Api("POST", "/breadcrumbs",
                               json::object{{"title", text.substr(0, 60)},
                                            {"schema_name", model::kUserMessageSchema},
                                            {"tags", json::array{json::value("session:" + session)}},
                                            {"context", std::move(context)}}));
    std::string id = created.is_object() && created.as_object().contains("id")
                         ? std::string(created.as_object().at("id").as_string()) : "";
    CAIRN_ASSIGN_OR_RETURN(json::object answer, Await(waiter, id, "", timeout));
    return json::object{{"session_id", session}, {"message_id", id}, {"answer", std::move(answer)}};
  }

 private:
  // Whose records the answers are: the client's tenant (the default one with --auth=none).
  std::string Tenant() const { return outer_.principal ? outer_.principal->tenant : std::string(model::kDefaultTenant); }

  Result<json::object> Await(exec::ResponseWaiter& waiter, const std::string& request_id, const std::string& source,
                             std::chrono::seconds timeout) {
    if (request_id.empty()) return Status::Internal("the request was written without an id");
    std::optional<json::object> answer;
    std::atomic<bool> never{false};
    auto waited = waiter.Wait({{request_id, source}}, true, std::chrono::steady_clock::now() + timeout, never,
                              [&](const std::string&, const json::object& context) { answer = context; });
    if (!waited.ok()) return waited.status();
    if (!answer) return Status::Unavailable("no answer within " + std::to_string(timeout.count()) + " s");
    return *answer;
  }

  const Router& router_;
  const McpRouteDeps& deps_;
  const HttpRequest& outer_;
};

// Browsers send Origin: only pages of this machine may talk to /mcp (DNS rebinding).
bool LocalOrigin(std::string_view origin) {
  for (std::string_view local : {"http://127.0.0.1", "http://localhost", "http://[::1]", "https://127.0.0.1",
                                 "https://localhost", "https://[::1]"}) {
    if (origin == local || (origin.starts_with(local) && origin.size() > local.size() && origin[local.size()] == ':')) {
      return true;
    }
  }
  return false;
}

}  // namespace

void AddMcpRoutes(Router& router, McpRouteDeps deps) {
  const exec::mcp::McpManager* manager = deps.manager;
  router.Add("GET", "/mcp/servers", Dispatch::kInline, [manager](const HttpRequest& req) -> Result<HttpResponse> {
    CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
    json::array servers;
    if (manager != nullptr) {
      // The caller's tenant's servers (the default tenant's with --auth=none).
      const std::string tenant = req.principal ? req.principal->tenant : std::string(model::kDefaultTenant);
      for (const auto& state : manager->Servers(tenant)) {
        json::array tools;
        for (const auto& tool : state.tools) tools.emplace_back(tool);
        servers.push_back(json::object{{"name", state.name},
                                       {"transport", state.transport},
                                       {"state", state.state},
                                       {"error", state.error},
                                       {"protocol_version", state.protocol_version},
                                       {"server_info", state.server_info},
                                       {"tools", std::move(tools)},
                                       {"restarts", state.restarts}});
      }
    }
    return HttpResponse::Json(200, json::serialize(json::object{{"servers", std::move(servers)},
                                                                {"connected_here", manager != nullptr && manager->started()}}));
  });
  if (deps.store == nullptr || deps.bus == nullptr) return;
  router.Add("POST", "/mcp", Dispatch::kWorker, [&router, deps](const HttpRequest& req) -> Result<HttpResponse> {
    if (auto origin = req.Header("origin"); origin && !LocalOrigin(*origin)) {
      return Status(StatusCode::kInvalidArgument, "Origin " + std::string(*origin) + " may not use /mcp");
    }
    if (auto version = req.Header("mcp-protocol-version");
        version && !mcp_server::McpServerProtocol::SpeaksVersion(*version)) {
      return Status::InvalidArgument("unsupported MCP-Protocol-Version '" + std::string(*version) + "'");
    }
    auto content_type = req.Header("content-type");
    if (!content_type || content_type->find("application/json") == std::string_view::npos) {
      return Status(StatusCode::kUnsupportedMediaType, "POST /mcp takes application/json");
    }
    InProcessBackend backend(router, deps, req);
    mcp_server::McpServerProtocol protocol(backend);
    auto response = protocol.HandleText(req.body);
    if (!response) {
      HttpResponse accepted = HttpResponse::Json(202, "");
      accepted.content_type.clear();
      return accepted;
    }
    return HttpResponse::Json(200, json::serialize(*response));
  });
}

}  // namespace cairn::server
