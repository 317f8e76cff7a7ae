#include "server/ui_handlers.h"

#include <string>
#include <string_view>

#include "server/request_support.h"
#include "web/web_assets.h"

namespace cairn::server {
namespace {

const web::WebAsset* FindAsset(std::string_view name) {
  for (const web::WebAsset& asset : web::WebAssets()) {
    if (asset.name == name) return &asset;
  }
  return nullptr;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Whether the comma-separated header value `list` (If-None-Match, Accept-Encoding) names `item`.
// `W/` prefixes are ignored (a weak comparison, RFC 9110 §13.1.2); `*` matches when `star_matches`;
// a member with `;q=0` (or 0.0, 0.00, ...) refuses it (RFC 9110 §12.4.2).
bool ListHas(std::string_view list, std::string_view item, bool star_matches) {
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view member = Trim(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    std::string_view params;
    if (size_t semi = member.find(';'); semi != std::string_view::npos) {
      params = Trim(member.substr(semi + 1));
      member = Trim(member.substr(0, semi));
    }
    if (member.starts_with("W/")) member.remove_prefix(2);
    if (member != item && !(star_matches && member == "*")) continue;
    if (params.starts_with("q=0") && params.substr(3).find_first_not_of(".0") == std::string_view::npos) return false;
    return true;
  }
  return false;
}

Result<HttpResponse> Serve(const HttpRequest& req, std::string_view name) {
  CAIRN_RETURN_IF_ERROR(NoQueryParameters(req));
  const web::WebAsset* asset = FindAsset(name);
  if (asset == nullptr) return Status::NotFound("no dashboard file /ui/" + std::string(name));
  HttpResponse response;
  response.headers = {
      {"ETag", std::string(asset->etag)},
      {"Cache-Control", "no-cache"},
      {"Vary", "Accept-Encoding"},
      {"X-Content-Type-Options", "nosniff"},
      {"Content-Security-Policy",
       "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"},
  };
  if (auto tag = req.Header("if-none-match"); tag && ListHas(*tag, asset->etag, true)) {
    response.status = 304;
    response.content_type.clear();
    return response;
  }
  response.status = 200;
  response.content_type = std::string(asset->content_type);
  if (auto accept = req.Header("accept-encoding"); accept && ListHas(*accept, "gzip", false)) {
    response.headers.emplace_back("Content-Encoding", "gzip");
    response.body = std::string(asset->gzip_body);
  } else {
    response.body = std::string(asset->body);
  }
  return response;
}

}  // namespace

void AddUiRoutes(Router& router) {
  router.Add("GET", "/ui", Dispatch::kInline, [](const HttpRequest& req) { return Serve(req, "index.html"); });
  router.Add("GET", "/ui/{asset}", Dispatch::kInline,
             [](const HttpRequest& req) { return Serve(req, req.path_params.at(0)); });
}

}  // namespace cairn::server
