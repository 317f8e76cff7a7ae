// The URL allow-list of the http_request built-in (--http-allow): which URLs it may fetch, by
// scheme, host, port and path. It judges names; the addresses they resolve to are the
// OutboundPolicy's (outbound_policy.h), which applies on top of it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cairn::net {

// Whether `url` may be fetched under `allow_list`. Safe by default: an empty list allows nothing.
// Each entry is one of:
//   "*"                           every http:// and https:// URL;
//   a URL prefix                  "https://api.example.com/v1/": same scheme, host and port
//                                 (default ports count: https://h/ equals https://h:443/), and a
//                                 path that starts with the entry's path. An entry path without
//                                 a trailing slash matches whole segments only: "/v1" allows
//                                 "/v1" and "/v1/x", not "/v1beta";
//   a host pattern                "api.example.com", "127.0.0.1", "[::1]", "localhost:8080",
//                                 "*.example.com" (any subdomain, at any depth, but not
//                                 example.com itself); either scheme; any port unless the
//                                 pattern names one.
// Entries that are none of these (a prefix with a query or user name, "example.com/x", ...)
// match nothing. Hosts compare case-insensitively, ignoring one trailing dot.
//
// The URL is parsed by libcurl's own URL parser (curl_url), the one HttpFetch() connects with,
// so the host checked is the host contacted: "https://api.example.com.evil.net/" and
// "https://api.example.com@evil.net/" are evil.net's. On top of that, URLs are refused that are
// not plain printable ASCII, contain a backslash, lack "scheme://", carry an IPv6 zone, or, when
// a path prefix has to match, contain an encoded '.' or '/' (%2e, %2f) that a server could
// decode into a way out of the prefix. The check is on names, not on resolved addresses.
bool UrlAllowed(std::string_view url, const std::vector<std::string>& allow_list);

}  // namespace cairn::net
