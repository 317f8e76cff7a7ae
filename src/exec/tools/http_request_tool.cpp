// http_request: outbound HTTP for tools and agents, only to URLs on the allow-list
// (--http-allow; empty by default, so nothing is reachable until an operator opts in), and only
// to addresses the outbound policy allows (--allow-private-network), checked when connecting.
#include <boost/json/serialize.hpp>

#include "base/json_util.h"
#include "exec/tools/builtin_tools.h"
#include "net/http_fetch.h"
#include "net/url_allow_list.h"

namespace cairn::exec {
namespace json = boost::json;
namespace {

class HttpRequestTool final : public Tool {
 public:
  explicit HttpRequestTool(const BuiltinToolDeps& deps) : deps_(deps) {}

  Result<json::value> Invoke(const ToolCall& call) override {
    const json::object& input = call.input.as_object();
    net::HttpFetchRequest request;
    request.url = std::string(input.at("url").as_string());
    if (!net::UrlAllowed(request.url, deps_.options.http_allow_list)) {
      return Status::Validation("input.url", "'" + request.url + "' is not on the allow-list (setting http_allow)");
    }
    if (const json::value* method = input.if_contains("method")) request.method = std::string(method->as_string());
    if (const json::value* headers = input.if_contains("headers")) {
      for (const auto& [name, value] : headers->as_object()) {
        request.headers.emplace_back(std::string(name), std::string(value.as_string()));
      }
    }
    if (const json::value* body = input.if_contains("body")) {
      if (body->is_string()) {
        request.body = std::string(body->as_string());
      } else {
        request.body = json::serialize(*body);
        request.headers.emplace_back("Content-Type", "application/json");
      }
    }
    request.timeout = call.timeout;
    if (const json::value* t = input.if_contains("timeout_ms")) {
      request.timeout = std::min(request.timeout, std::chrono::milliseconds(t->to_number<int64_t>()));
    }
    request.max_response_bytes = deps_.options.http_max_response_bytes;
    request.policy = deps_.options.outbound_policy;
    CAIRN_ASSIGN_OR_RETURN(net::HttpFetchResponse response, net::HttpFetch(request, &call.cancelled));
    json::object headers;
    for (const auto& [name, value] : response.headers) headers[name] = value;
    json::object out{{"status", response.status}, {"headers", std::move(headers)}, {"body", response.body}};
    if (response.content_type.find("json") != std::string::npos) {
      auto parsed = ParseJson(response.body, 64);
      if (parsed.ok()) out["json"] = std::move(parsed).value();
    }
    return json::value(std::move(out));
  }

 private:
  const BuiltinToolDeps& deps_;
};

}  // namespace

std::unique_ptr<Tool> MakeHttpRequestTool(const BuiltinToolDeps& deps) { return std::make_unique<HttpRequestTool>(deps); }

}  // namespace cairn::exec
