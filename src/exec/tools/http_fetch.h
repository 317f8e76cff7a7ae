// Outbound HTTP for tools: the client behind the `http_request` built-in tool and `http` tools,
// and the URL allow-list that decides which URLs those tools may reach.
//
// One blocking request per call, on libcurl; call it from a worker thread. It is safe to call
// from many threads at once (every call uses its own handle).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace cairn::exec {

struct HttpFetchRequest {
  // GET, POST, PUT or DELETE, in any letter case; anything else is kInvalidArgument.
  std::string method = "GET";
  // An absolute http:// or https:// URL; other schemes are kInvalidArgument.
  std::string url;
  // Sent as given, in order. Names must be HTTP tokens and values must not contain CR, LF or
  // NUL (kInvalidArgument otherwise) so that a tool argument cannot inject extra headers.
  // No Content-Type is added for you: set one if the server needs it.
  std::vector<std::pair<std::string, std::string>> headers;
  // Sent for POST and PUT (even when empty), and for DELETE when non-empty; ignored for GET.
  std::string body;
  // Bounds the whole request: DNS, connect, TLS, sending and reading. Must be positive.
  std::chrono::milliseconds timeout{10000};
  // A response body over this many bytes aborts the transfer with kPayloadTooLarge
  // ("response larger than N bytes"); nothing of the body is returned then.
  size_t max_response_bytes = 1 << 20;
  // Instead: stop reading at max_response_bytes and return the response with what was read (at
  // most that many bytes; `body_truncated`), for callers that decide by the status alone.
  bool truncate_body = false;
  // 0 (the default) returns a 3xx response as it is. A positive value follows up to that many
  // redirects, to http(s) URLs only. Followed redirects are NOT checked against an allow-list:
  // callers that enforce UrlAllowed() should leave this at 0 (or check each hop themselves).
  int max_redirects = 0;
};

struct HttpFetchResponse {
  int status = 0;  // of the final response
  // Headers of the final response, in arrival order, names lower-cased, values trimmed.
  // Repeated headers stay separate entries.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  bool body_truncated = false;  // with truncate_body: the body went on past max_response_bytes
  std::string content_type;  // the Content-Type header as sent, or empty
  int64_t duration_ms = 0;   // wall time of the whole exchange
};

// Performs `request`. Any HTTP status, 4xx and 5xx included, is a successful fetch: the caller
// decides what a status means. Errors:
//   kInvalidArgument  bad method, URL, scheme, header, timeout or max_redirects;
//   kUnavailable      the host could not be resolved or reached ("cannot connect to HOST:PORT"),
//                     TLS failed, the connection broke, too many redirects,
//                     the timeout passed ("request to HOST timed out after N ms"; status.h has
//                     no deadline code), or `cancel` was set ("request to HOST cancelled");
//   kPayloadTooLarge  the body is over max_response_bytes ("response larger than N bytes") or the
//                     headers are absurdly large.
// `cancel` may be null. It is polled from libcurl's progress callback, which runs at least about
// once a second even while the connection is idle, so a cancel takes effect within ~1 s.
Result<HttpFetchResponse> HttpFetch(const HttpFetchRequest& request, const std::atomic<bool>* cancel = nullptr);

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

}  // namespace cairn::exec
