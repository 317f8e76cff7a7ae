// HttpFetch: the one libcurl client for client-defined destinations (webhooks, http tools, the
// http_request built-in).
//
// One blocking request per call, on libcurl; call it from a worker thread. It is safe to call
// from many threads at once (every call uses its own handle).
//
// Where a request may go is decided on the address, at connect time: every socket the transfer
// opens (each address tried for a name, each redirect hop) is first checked by the request's
// OutboundPolicy (libcurl's open-socket callback), so a name resolving to 127.0.0.1 is refused
// like the literal, whatever DNS says between a write-time check and the call. Nothing can route
// around that check: proxies from the environment (http_proxy, HTTPS_PROXY, ALL_PROXY, ...) are
// ignored, and no connection outlives a call (its own handle, no shared connection pool), so no
// request rides on a connection another request opened.
#pragma once

#include <memory>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "net/outbound_policy.h"

namespace cairn::net {

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
  // The addresses this request may connect to. Null is the default OutboundPolicy (every
  // special-purpose range refused), so a caller that forgets to pass the server's policy is safe;
  // operator destinations, which clients cannot choose, pass OutboundPolicy::Unrestricted().
  std::shared_ptr<const OutboundPolicy> policy;
  // 0 (the default) returns a 3xx response as it is. A positive value follows up to that many
  // redirects, to http(s) URLs only. Every hop's address is checked by `policy`; followed
  // redirects are NOT checked against a URL allow-list:
  // callers that enforce UrlAllowed() (url_allow_list.h) should leave this at 0.
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
//   kInvalidArgument  bad method, URL, scheme, header, timeout or max_redirects; or `policy`
//                     refused every address the transfer tried to connect to (for the request or
//                     a redirect hop): the policy's message, "destination 127.0.0.1 is a loopback
//                     address (127.0.0.0/8); allow it with --allow-private-network". Nothing was
//                     sent. (When some addresses were refused and the others failed, it is the
//                     kUnavailable connect error, with the refusal added.)
//   kUnavailable      the host could not be resolved or reached ("cannot connect to HOST:PORT"),
//                     TLS failed, the connection broke, too many redirects,
//                     the timeout passed ("request to HOST timed out after N ms"; status.h has
//                     no deadline code), or `cancel` was set ("request to HOST cancelled");
//   kPayloadTooLarge  the body is over max_response_bytes ("response larger than N bytes") or the
//                     headers are absurdly large.
// `cancel` may be null. It is polled from libcurl's progress callback, which runs at least about
// once a second even while the connection is idle, so a cancel takes effect within ~1 s.
Result<HttpFetchResponse> HttpFetch(const HttpFetchRequest& request, const std::atomic<bool>* cancel = nullptr);

}  // namespace cairn::net
