#include "cli/url_util.h"

#include <cctype>

namespace cairn::cli {

namespace {

bool IsUnreserved(unsigned char c) {
  return std::isalnum(c) != 0 || c == '-' || c == '.' || c == '_' || c == '~';
}

bool StartsWithNoCase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) != prefix[i]) return false;
  }
  return true;
}

}  // namespace

std::string PercentEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (IsUnreserved(c)) {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0x0F]);
    }
  }
  return out;
}

Result<std::string> NormalizeServerUrl(std::string_view server) {
  if (server.empty()) return Status::InvalidArgument("the server URL is empty");
  for (char ch : server) {
    if (std::isspace(static_cast<unsigned char>(ch)) != 0 || std::iscntrl(static_cast<unsigned char>(ch)) != 0) {
      return Status::InvalidArgument("the server URL '" + std::string(server) + "' contains whitespace");
    }
  }
  std::string url(server);
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) {
    url = "http://" + url;  // "host:port" is what people type; plain HTTP is the server's default
  } else if (!StartsWithNoCase(url, "http://") && !StartsWithNoCase(url, "https://")) {
    return Status::InvalidArgument("the server URL '" + std::string(server) + "' must use http:// or https://");
  }
  if (url.find_first_of("?#") != std::string::npos) {
    return Status::InvalidArgument("the server URL '" + std::string(server) + "' must not contain '?' or '#'");
  }
  const size_t host_start = url.find("://") + 3;
  if (host_start >= url.size() || url[host_start] == '/') {
    return Status::InvalidArgument("the server URL '" + std::string(server) + "' has no host");
  }
  while (url.back() == '/') url.pop_back();  // stops at the host, which is not empty
  return url;
}

std::string QueryString::Build() const {
  std::string out;
  for (const auto& [key, value] : params_) {
    out.push_back(out.empty() ? '?' : '&');
    out += PercentEncode(key);
    out.push_back('=');
    out += PercentEncode(value);
  }
  return out;
}

}  // namespace cairn::cli
