// The one libcurl client of cairn: HttpConnection (a reusable handle, for requests and streamed
// replies) and HttpFetch (one bounded request on a fresh connection, for client-defined
// destinations: webhook deliveries, http tools, the http_request built-in). The CLI's API client
// and the LLM provider use HttpConnection; nothing else in cairn calls libcurl for HTTP.
//
// Blocking: call it from a worker thread. HttpFetch is safe to call from many threads at once
// (every call uses its own handle); an HttpConnection is used by one thread at a time.
//
// Where a request may go is decided on the address, at connect time: every socket the transfer
// opens (each address tried for a name, each redirect hop) is first checked by the request's
// OutboundPolicy (libcurl's open-socket callback), so a name resolving to 127.0.0.1 is refused
// like the literal, whatever DNS says between a write-time check and the call. Nothing can route
// around that check: proxies from the environment (http_proxy, HTTPS_PROXY, ALL_PROXY, ...) are
// ignored unless a request with an unrestricted policy asks for them (environment_proxy), and
// HttpFetch shares no connection with another call, so no request rides on a connection another
// request opened.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "net/outbound_policy.h"

namespace cairn::net {

struct HttpFetchRequest {
  // GET, POST, PUT, PATCH or DELETE, in any letter case; anything else is kInvalidArgument.
  std::string method = "GET";
  // An absolute http:// or https:// URL; other schemes are kInvalidArgument.
  std::string url;
  // Sent as given, in order. Names must be HTTP tokens and values must not contain CR, LF or
  // NUL (kInvalidArgument otherwise) so that a tool argument cannot inject extra headers.
  // No Content-Type is added for you: set one if the server needs it.
  std::vector<std::pair<std::string, std::string>> headers;
  // Sent for POST, PUT and PATCH (even when empty), and for DELETE when non-empty; ignored for GET.
  std::string body;
  // Bounds the whole request: DNS, connect, TLS, sending and reading. 0 is no limit (a stream
  // that may stay open; HttpFetch refuses it); negative is kInvalidArgument.
  std::chrono::milliseconds timeout{10000};
  // Bounds DNS, connect and TLS alone. 0: the same as `timeout` (libcurl's 300 s when that is 0).
  std::chrono::milliseconds connect_timeout{0};
  // A response body over this many bytes aborts the transfer with kPayloadTooLarge
  // ("response larger than N bytes"); nothing of the body is returned then. For
  // HttpConnection::Stream: what is kept of a non-2xx body (the rest is dropped; body_truncated).
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
  // Use the proxies of the environment (http_proxy, https_proxy, all_proxy, no_proxy), except for
  // loopback destinations (localhost, 127.0.0.1, ::1 are added to no_proxy). Only for operator
  // destinations: with a `policy` other than an unrestricted one it is kInvalidArgument, since the
  // policy would judge the proxy's address instead of the destination's.
  bool environment_proxy = false;
  // Sent as User-Agent unless `headers` has one.
  std::string user_agent = "cairn/0.1";
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
  bool stopped = false;      // HttpConnection::Stream: a handler returned false and ended the transfer
};

// The value of the first header named `name` (lower-case) in `headers` (as HttpFetchResponse has
// them), or "" when there is none.
std::string HeaderValue(const std::vector<std::pair<std::string, std::string>>& headers, std::string_view name);

// How a transfer in progress is cancelled (HttpConnection). The default cancels nothing.
struct HttpCancel {
  // Polled every `poll_interval` while the transfer runs, and at once when `wake_fd` becomes
  // readable; true ends the transfer ("request to HOST cancelled"). May be empty. It may also end
  // a transfer for the caller's own reasons (an idle stream): the caller knows why it said so.
  std::function<bool()> requested;
  // A file descriptor that becomes readable when a cancel is requested (a self-pipe), or -1.
  int wake_fd = -1;
  std::chrono::milliseconds poll_interval{20};
};

// What a streamed reply is handed to, as it arrives (HttpConnection::Stream).
struct HttpStreamHandler {
  // The status line and headers of the final response (1xx responses and followed redirects are
  // not final), called once when its header block ends, before any of its body; `body` is empty.
  // Returning false ends the transfer. May be empty.
  std::function<bool(const HttpFetchResponse& head)> on_head;
  // A piece of a 2xx response's body, of any size and split anywhere. Returning false ends the
  // transfer. May be empty (the body is then dropped).
  std::function<bool(std::string_view chunk)> on_body;
};

// HttpConnection: a libcurl handle kept between requests, so that consecutive requests to one
// server ride on one kept-alive connection (`cairn list --all` pages over one connection; the LLM
// provider pools connections). Requests through one HttpConnection should share their policy: a
// kept connection was checked when it was opened. Not thread-safe; movable.
class HttpConnection {
 public:
  HttpConnection();
  ~HttpConnection();
  HttpConnection(HttpConnection&&) noexcept;
  HttpConnection& operator=(HttpConnection&&) noexcept;
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  // Performs `request` and returns the whole response, with the errors of HttpFetch below (a zero
  // timeout is allowed here: no limit).
  Result<HttpFetchResponse> Fetch(const HttpFetchRequest& request, const HttpCancel& cancel = {});

  // Performs `request` and hands the response to `handler` while it arrives: its head, then the
  // pieces of a 2xx body. The body of any other status is collected instead, into the returned
  // response, up to request.max_response_bytes (the rest is dropped, body_truncated); truncate_body
  // is ignored. Returns when the server ends the response, a handler returns false (`stopped`,
  // not an error) or `cancel` fires (kUnavailable "request to HOST cancelled"). The returned
  // response has the final status and headers, and `body` empty for a 2xx. Errors are those of
  // HttpFetch, also when they happen after data was handed over.
  Result<HttpFetchResponse> Stream(const HttpFetchRequest& request, const HttpStreamHandler& handler,
                                   const HttpCancel& cancel = {});

 private:
  Result<HttpFetchResponse> Perform(const HttpFetchRequest& request, const HttpStreamHandler* handler,
                                    const HttpCancel& cancel);
  struct Handles;
  std::unique_ptr<Handles> handles_;
};

// Performs `request` on a connection of its own (nothing is shared with another call). Any HTTP status, 4xx and 5xx included, is a successful fetch: the caller
// decides what a status means. Errors:
//   kInvalidArgument  bad method, URL, scheme, header, timeout (HttpFetch: it must be positive),
//                     max_redirects or environment_proxy; or `policy`
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
// `cancel` may be null. It is polled every 20 ms, so a cancel takes effect within about that.
Result<HttpFetchResponse> HttpFetch(const HttpFetchRequest& request, const std::atomic<bool>* cancel = nullptr);

}  // namespace cairn::net
