#include "net/curl_url.h"

#include <curl/curl.h>

#include <charconv>
#include <memory>
#include <mutex>
#include <optional>

namespace cairn::net {
namespace {

struct CurluDeleter {
  void operator()(CURLU* u) const { curl_url_cleanup(u); }
};

std::optional<std::string> UrlPart(CURLU* u, CURLUPart part, unsigned int flags = 0) {
  char* s = nullptr;
  if (curl_url_get(u, part, &s, flags) != CURLUE_OK || s == nullptr) return std::nullopt;
  std::string out(s);
  curl_free(s);
  return out;
}

}  // namespace

void EnsureCurlInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::string ToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  return out;
}

Result<ParsedUrl> ParseUrl(std::string_view url) {
  EnsureCurlInit();
  if (url.find('\0') != std::string_view::npos) return Status::InvalidArgument("invalid URL: contains a NUL byte");
  std::unique_ptr<CURLU, CurluDeleter> u(curl_url());
  if (!u) return Status::Internal("cannot allocate a URL handle");
  std::string copy(url);  // curl wants a NUL-terminated string
  if (CURLUcode rc = curl_url_set(u.get(), CURLUPART_URL, copy.c_str(), 0); rc != CURLUE_OK) {
    return Status::InvalidArgument(std::string("invalid URL: ") + curl_url_strerror(rc));
  }
  ParsedUrl out;
  out.scheme = ToLower(UrlPart(u.get(), CURLUPART_SCHEME).value_or(""));
  if (out.scheme != "http" && out.scheme != "https") {
    return Status::InvalidArgument("unsupported URL scheme '" + out.scheme + "': only http and https are allowed");
  }
  out.host = ToLower(UrlPart(u.get(), CURLUPART_HOST).value_or(""));
  if (out.host.size() > 1 && out.host.back() == '.') out.host.pop_back();
  if (out.host.empty()) return Status::InvalidArgument("invalid URL: no host");
  std::string port = UrlPart(u.get(), CURLUPART_PORT, CURLU_DEFAULT_PORT).value_or("");
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), out.port);
  if (ec != std::errc() || end != port.data() + port.size()) return Status::InvalidArgument("invalid URL: bad port");
  out.explicit_port = UrlPart(u.get(), CURLUPART_PORT).has_value();
  out.path = UrlPart(u.get(), CURLUPART_PATH).value_or("/");
  if (out.path.empty()) out.path = "/";
  out.has_user = UrlPart(u.get(), CURLUPART_USER).has_value() || UrlPart(u.get(), CURLUPART_PASSWORD).has_value();
  out.has_query = UrlPart(u.get(), CURLUPART_QUERY).has_value();
  out.has_fragment = UrlPart(u.get(), CURLUPART_FRAGMENT).has_value();
  out.has_zone = UrlPart(u.get(), CURLUPART_ZONEID).has_value();
  return out;
}

}  // namespace cairn::net
