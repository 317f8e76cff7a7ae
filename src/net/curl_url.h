// URLs as libcurl understands them: the one URL parser of src/net (internal to the module).
//
// Every check on a URL here (the http_request allow-list, the literal-host check of the outbound
// policy) parses with curl's own parser (curl_url), the one HttpFetch() connects with, so the host
// judged is the host contacted: "http://a.example@evil.net/" is evil.net's, "http://0x7f000001/"
// is 127.0.0.1's (curl normalises IPv4 numbers).
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace cairn::net {

// curl_global_init, once per process, before any other libcurl call (it is not thread-safe and
// must not race the first handle). Reference-counted by libcurl, so other users may call it too.
void EnsureCurlInit();

struct ParsedUrl {
  std::string scheme;  // lower-case: "http" or "https"
  std::string host;    // lower-case, one trailing dot removed; IPv6 keeps its brackets
  int port = 0;        // effective: the default port of the scheme when none is given
  bool explicit_port = false;
  std::string path;  // normalised by curl ("/a/../b" is "/b"), never empty
  bool has_user = false;
  bool has_query = false;
  bool has_fragment = false;
  bool has_zone = false;
};

// kInvalidArgument for a URL curl refuses, a NUL byte, a scheme other than http(s) or no host.
Result<ParsedUrl> ParseUrl(std::string_view url);

// ASCII lower-casing (hosts, header names).
std::string ToLower(std::string_view s);

}  // namespace cairn::net
