#include "cli/api_client.h"

#include <boost/json/serialize.hpp>

#include "base/json_util.h"

namespace cairn::cli {

namespace json = boost::json;

namespace {

// Replies are parsed with a generous depth bound: the server already bounded what it stored, and
// a client must be able to show anything the server returns.
constexpr size_t kReplyMaxDepth = 1024;

// The server names codes with StatusCodeName; map a name back so callers can branch on code().
StatusCode CodeFromName(std::string_view name, int http_status) {
  for (int i = static_cast<int>(StatusCode::kInvalidArgument); i <= static_cast<int>(StatusCode::kInternal); ++i) {
    const auto code = static_cast<StatusCode>(i);
    if (StatusCodeName(code) == name) return code;
  }
  switch (http_status) {
    case 400: return StatusCode::kInvalidArgument;
    case 404: return StatusCode::kNotFound;
    case 409: return StatusCode::kConflict;
    case 412: return StatusCode::kFailedPrecondition;
    case 413: return StatusCode::kPayloadTooLarge;
    case 422: return StatusCode::kValidation;
    case 429: return StatusCode::kResourceExhausted;
    case 503: return StatusCode::kUnavailable;
    default: return StatusCode::kInternal;
  }
}

std::string Excerpt(std::string_view body) {
  constexpr size_t kMax = 200;
  std::string text(body.substr(0, kMax));
  for (char& ch : text) {
    if (static_cast<unsigned char>(ch) < 0x20) ch = ' ';
  }
  if (body.size() > kMax) text += "...";
  return text;
}

}  // namespace

std::optional<std::string> ApiReply::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (key == name) return value;
  }
  return std::nullopt;
}

Status ErrorFromReply(const HttpReply& reply, const std::string& method, const std::string& url) {
  const std::string where = "HTTP " + std::to_string(reply.status);
  auto parsed = ParseJson(reply.body, kReplyMaxDepth);
  if (parsed.ok() && parsed->is_object()) {
    const json::value* error = parsed->get_object().if_contains("error");
    if (error != nullptr && error->is_object()) {
      const json::object& obj = error->get_object();
      std::string code_name;
      std::string message;
      std::string field;
      if (const auto* v = obj.if_contains("code"); v != nullptr && v->is_string()) code_name = v->get_string();
      if (const auto* v = obj.if_contains("message"); v != nullptr && v->is_string()) message = v->get_string();
      if (const auto* v = obj.if_contains("field"); v != nullptr && v->is_string()) field = v->get_string();
      if (message.empty()) message = "the server reported an error without a message";
      std::string detail = where + (code_name.empty() ? "" : " " + code_name);
      // Validation messages usually start with the field already ("tags[2]: ..."); say it once.
      if (!field.empty() && !message.starts_with(field + ":")) detail += ", field " + field;
      return Status(CodeFromName(code_name, reply.status), message + " (" + detail + ")", field);
    }
  }
  // Not cairn's error shape: a proxy, or something else listening on that port.
  std::string message = method + " " + url + " returned " + where;
  if (!reply.body.empty()) message += ": " + Excerpt(reply.body);
  return Status(CodeFromName("", reply.status), std::move(message));
}

ApiClient::ApiClient(HttpClient& http, std::string server_url, std::optional<std::string> actor)
    : http_(http), server_url_(std::move(server_url)), actor_(std::move(actor)) {}

Result<ApiReply> ApiClient::Call(std::string method, const std::string& path_and_query,
                                 const std::optional<json::value>& body,
                                 std::vector<std::pair<std::string, std::string>> headers) {
  HttpRequest request;
  request.method = std::move(method);
  request.url = server_url_ + path_and_query;
  request.headers = std::move(headers);
  if (actor_.has_value()) request.headers.emplace_back("X-Cairn-Actor", *actor_);
  if (body.has_value()) request.body = json::serialize(*body);

  auto sent = http_.Send(request);
  if (!sent.ok()) {
    if (sent.status().code() != StatusCode::kUnavailable) return sent.status();
    return Status::Unavailable("cannot reach the cairn server at " + server_url_ + " (" + sent.status().message() +
                               "); is `cairn serve` running there? Choose another server with --server URL "
                               "or CAIRN_SERVER");
  }
  HttpReply& reply = *sent;
  if (reply.status < 200 || reply.status > 299) return ErrorFromReply(reply, request.method, request.url);

  ApiReply out;
  out.status = reply.status;
  out.headers = std::move(reply.headers);
  if (!reply.body.empty()) {
    auto parsed = ParseJson(reply.body, kReplyMaxDepth);
    if (!parsed.ok()) {
      return Status::Internal(request.method + " " + request.url + " returned HTTP " + std::to_string(reply.status) +
                              " with a body that is not JSON (" + parsed.status().message() + "): " +
                              Excerpt(reply.body));
    }
    out.body = std::move(*parsed);
  }
  return out;
}

}  // namespace cairn::cli
