#include "net/url_allow_list.h"

#include <algorithm>

#include "net/curl_url.h"

namespace cairn::net {
namespace {

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool ContainsIgnoreCase(std::string_view haystack, std::string_view needle) {
  return std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(),
                     [](char a, char b) { return Lower(a) == Lower(b); }) != haystack.end();
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// "127.0.0.1" style hosts must never match a "*." wildcard ("*.0.0.1").
bool IsIpv4Literal(std::string_view host) {
  return std::all_of(host.begin(), host.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
}

bool PathHasPrefix(std::string_view path, std::string_view prefix) {
  if (prefix == "/") return true;
  // A server may decode %2e/%2f into "../" after we approved the path: no way out of a prefix.
  if (ContainsIgnoreCase(path, "%2e") || ContainsIgnoreCase(path, "%2f")) return false;
  if (!path.starts_with(prefix)) return false;
  // "/v1/" is a plain prefix; "/v1" must end at a segment boundary so it does not allow "/v1beta".
  return prefix.back() == '/' || path.size() == prefix.size() || path[prefix.size()] == '/';
}

bool PrefixEntryMatches(std::string_view entry, const ParsedUrl& url) {
  Result<ParsedUrl> prefix = ParseUrl(entry);
  if (!prefix.ok() || prefix->has_user || prefix->has_query || prefix->has_fragment || prefix->has_zone) return false;
  return prefix->scheme == url.scheme && prefix->host == url.host && prefix->port == url.port &&
         PathHasPrefix(url.path, prefix->path);
}

bool HostEntryMatches(std::string_view entry, const ParsedUrl& url) {
  bool wildcard = entry.starts_with("*.");
  if (wildcard) entry.remove_prefix(2);
  // Anything that would make the entry more than "host[:port]" makes it match nothing.
  if (entry.empty() || entry.back() == ':' ||
      entry.find_first_of("*/\\@?#% \t") != std::string_view::npos) {
    return false;
  }
  Result<ParsedUrl> pattern = ParseUrl("http://" + std::string(entry) + "/");
  if (!pattern.ok() || pattern->path != "/" || pattern->has_zone) return false;
  if (pattern->explicit_port && pattern->port != url.port) return false;
  if (!wildcard) return pattern->host == url.host;
  const std::string& suffix = pattern->host;
  return !IsIpv4Literal(url.host) && url.host.size() > suffix.size() + 1 && url.host.ends_with(suffix) &&
         url.host[url.host.size() - suffix.size() - 1] == '.';
}

}  // namespace

bool UrlAllowed(std::string_view url, const std::vector<std::string>& allow_list) {
  if (allow_list.empty()) return false;
  // Refuse what parsers disagree about before asking any parser: controls, spaces, non-ASCII
  // (IDN hosts must be written in punycode to match), backslashes, and "http:/x" forms.
  if (!std::all_of(url.begin(), url.end(), [](char c) { return c > 0x20 && c < 0x7f && c != '\\'; })) return false;
  size_t sep = url.find("://");
  if (sep == std::string_view::npos || url.find_first_of("/?#") < sep) return false;
  Result<ParsedUrl> parsed = ParseUrl(url);
  if (!parsed.ok() || parsed->has_zone) return false;
  for (const std::string& raw_entry : allow_list) {
    std::string_view entry = Trim(raw_entry);
    if (entry.empty()) continue;
    if (entry == "*") return true;
    bool match = entry.find("://") != std::string_view::npos ? PrefixEntryMatches(entry, *parsed)
                                                                : HostEntryMatches(entry, *parsed);
    if (match) return true;
  }
  return false;
}

}  // namespace cairn::net
