#include "net/http_fetch.h"

#include <curl/curl.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>

#include "net/curl_url.h"

namespace cairn::net {
namespace {

// Response headers beyond this abort the transfer: the body has its own caller-chosen limit, and
// a server must not be able to make us buffer unbounded header lines instead.
constexpr size_t kMaxHeaderBytes = 256 * 1024;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

struct ListDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

const OutboundPolicy& DefaultPolicy() {
  static const OutboundPolicy policy;
  return policy;
}

struct Exchange {
  const OutboundPolicy* policy = nullptr;
  // The connection attempts of the current hop (reset when a response begins, so that a refused
  // redirect hop is judged on its own attempts): sockets opened and addresses refused.
  int hop_opened = 0;
  std::vector<std::string> hop_refusals;
  size_t max_body = 0;
  bool truncate_body = false;
  bool follows_redirects = false;
  bool body_too_large = false;
  bool headers_too_large = false;
  size_t header_bytes = 0;
  int status = 0;  // of the response whose headers are arriving
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  // Stream: the handler, whether the final head was handed over, whether a handler said stop.
  const HttpStreamHandler* handler = nullptr;
  bool head_delivered = false;
  bool stopped = false;

  bool streams_body() const { return handler != nullptr && status >= 200 && status <= 299; }
};



size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  size_t n = size * count;
  if (ex->streams_body()) {
    if (ex->handler->on_body && !ex->handler->on_body(std::string_view(data, n))) {
      ex->stopped = true;
      return 0;  // any count other than n makes curl abort with CURLE_WRITE_ERROR
    }
    return n;
  }
  if (n > ex->max_body - ex->body.size()) {  // body.size() <= max_body always holds
    ex->body_too_large = true;
    if (ex->handler != nullptr) {  // Stream: a non-2xx body is kept up to the bound, not refused
      ex->body.append(data, ex->max_body - ex->body.size());
      return n;
    }
    return 0;
  }
  ex->body.append(data, n);
  return n;
}

// The end of a header block: hands the head of the final response to the stream handler.
bool OnHeadEnd(Exchange* ex) {
  if (ex->handler == nullptr || ex->head_delivered) return true;
  if (ex->status < 200) return true;  // 1xx: the final response follows
  if (ex->follows_redirects && ex->status >= 300 && ex->status <= 399 && !HeaderValue(ex->headers, "location").empty()) {
    return true;  // a hop that curl follows
  }
  ex->head_delivered = true;
  if (!ex->handler->on_head) return true;
  HttpFetchResponse head;
  head.status = ex->status;
  head.headers = ex->headers;
  head.content_type = HeaderValue(ex->headers, "content-type");
  if (ex->handler->on_head(head)) return true;
  ex->stopped = true;
  return false;
}

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  size_t n = size * count;
  std::string_view line(data, n);
  if (line.starts_with("HTTP/")) {
    // A new response begins (after a 100 Continue or a followed redirect): keep only the last one.
    ex->headers.clear();
    ex->header_bytes = 0;
    ex->hop_opened = 0;
    ex->hop_refusals.clear();
    size_t space = line.find(' ');  // "HTTP/1.1 200 OK"
    ex->status = space == std::string_view::npos ? 0 : std::atoi(std::string(line.substr(space + 1, 3)).c_str());
  }
  ex->header_bytes += n;
  if (ex->header_bytes > kMaxHeaderBytes) {
    ex->headers_too_large = true;
    return 0;
  }
  if (line.starts_with("HTTP/")) return n;
  if (Trim(line).empty()) return OnHeadEnd(ex) ? n : 0;
  if ((line.front() == ' ' || line.front() == '\t') && !ex->headers.empty()) {
    // Obsolete line folding: the line continues the previous header's value.
    std::string& value = ex->headers.back().second;
    value += ' ';
    value += Trim(line);
    return n;
  }
  size_t colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) return n;  // not a header; ignore it
  ex->headers.emplace_back(ToLower(Trim(line.substr(0, colon))), std::string(Trim(line.substr(colon + 1))));
  return n;
}

// libcurl calls this for every socket a transfer opens: each address it tries for a name (both
// families, happy eyeballs), each redirect hop that needs a new connection, and what would be a
// proxy if one were set. Refusing here (CURL_SOCKET_BAD) makes curl try the next address or
// fail with CURLE_COULDNT_CONNECT without a byte sent.
curl_socket_t OnOpenSocket(void* user, curlsocktype purpose, curl_sockaddr* address) {
  auto* ex = static_cast<Exchange*>(user);
  if (purpose != CURLSOCKTYPE_IPCXN) {  // an accepted connection (FTP active mode): never ours
    ex->hop_refusals.push_back("incoming connections are not allowed");
    return CURL_SOCKET_BAD;
  }
  std::optional<IpAddress> ip = IpAddress::FromSockaddr(&address->addr, address->addrlen);
  Status allowed = ip ? ex->policy->Check(*ip)
                      : Status::InvalidArgument("destination of address family " + std::to_string(address->family) +
                                                " is not an IP address");
  if (!allowed.ok()) {
    ex->hop_refusals.push_back(allowed.message());
    return CURL_SOCKET_BAD;
  }
  int fd = socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
  if (fd < 0) return CURL_SOCKET_BAD;
  ++ex->hop_opened;
  return fd;
}

bool IsTokenChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

// Builds the header list, refusing what could smuggle extra headers or break the framing
// that curl computes from the body.
Status BuildHeaders(const HttpFetchRequest& request, bool sends_body, curl_slist** list) {
  bool has_content_type = false;
  bool has_expect = false;
  for (const auto& [name, value] : request.headers) {
    if (name.empty() || !std::all_of(name.begin(), name.end(), IsTokenChar)) {
      return Status::InvalidArgument("invalid header name '" + name + "'");
    }
    if (value.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos) {
      return Status::InvalidArgument("header '" + name + "' has a line break or NUL in its value");
    }
    std::string lower = ToLower(name);
    if (lower == "content-length" || lower == "transfer-encoding") {
      return Status::InvalidArgument("header '" + name + "' is set by the HTTP client and cannot be given");
    }
    has_content_type |= lower == "content-type";
    has_expect |= lower == "expect";
    std::string_view trimmed = Trim(value);
    // "Name:" would tell curl to remove the header; "Name;" is its spelling of an empty value.
    std::string line = trimmed.empty() ? name + ";" : name + ": " + std::string(trimmed);
    *list = curl_slist_append(*list, line.c_str());
  }
  // curl would otherwise label every body application/x-www-form-urlencoded.
  if (sends_body && !has_content_type) *list = curl_slist_append(*list, "Content-Type:");
  // No "Expect: 100-continue" round trip before larger bodies.
  if (!has_expect) *list = curl_slist_append(*list, "Expect:");
  return Status::Ok();
}

// Loopback never goes through a proxy: an http_proxy set for the outside world must not swallow
// requests to a local server. The user's own no_proxy list is kept.
std::string NoProxyList() {
  std::string list;
  for (const char* name : {"no_proxy", "NO_PROXY"}) {
    if (const char* value = std::getenv(name); value != nullptr && *value != '\0') {
      list = value;
      break;
    }
  }
  if (list == "*") return list;
  if (!list.empty()) list += ',';
  return list + "localhost,127.0.0.1,::1";
}

}  // namespace

std::string HeaderValue(const std::vector<std::pair<std::string, std::string>>& headers, std::string_view name) {
  for (const auto& [n, v] : headers) {
    if (n == name) return v;
  }
  return {};
}

struct HttpConnection::Handles {
  CURL* easy = nullptr;
  CURLM* multi = nullptr;
  Handles() {
    EnsureCurlInit();
    easy = curl_easy_init();
    multi = curl_multi_init();
  }
  ~Handles() {
    if (multi != nullptr) curl_multi_cleanup(multi);
    if (easy != nullptr) curl_easy_cleanup(easy);
  }
};

HttpConnection::HttpConnection() : handles_(std::make_unique<Handles>()) {}
HttpConnection::~HttpConnection() = default;
HttpConnection::HttpConnection(HttpConnection&&) noexcept = default;
HttpConnection& HttpConnection::operator=(HttpConnection&&) noexcept = default;

Result<HttpFetchResponse> HttpConnection::Fetch(const HttpFetchRequest& request, const HttpCancel& cancel) {
  return Perform(request, nullptr, cancel);
}

Result<HttpFetchResponse> HttpConnection::Stream(const HttpFetchRequest& request, const HttpStreamHandler& handler,
                                                 const HttpCancel& cancel) {
  return Perform(request, &handler, cancel);
}

Result<HttpFetchResponse> HttpFetch(const HttpFetchRequest& request, const std::atomic<bool>* cancel) {
  if (request.timeout.count() <= 0) return Status::InvalidArgument("timeout must be positive");
  HttpCancel control;
  if (cancel != nullptr) control.requested = [cancel] { return cancel->load(); };
  return HttpConnection().Fetch(request, control);
}

Result<HttpFetchResponse> HttpConnection::Perform(const HttpFetchRequest& request, const HttpStreamHandler* handler,
                                                  const HttpCancel& cancel) {
  std::string method = request.method;
  for (char& c : method) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  if (method != "GET" && method != "POST" && method != "PUT" && method != "PATCH" && method != "DELETE") {
    return Status::InvalidArgument("unsupported HTTP method '" + request.method +
                                   "': use GET, POST, PUT, PATCH or DELETE");
  }
  if (request.timeout.count() < 0 || request.connect_timeout.count() < 0) {
    return Status::InvalidArgument("timeout must not be negative");
  }
  if (request.max_redirects < 0) return Status::InvalidArgument("max_redirects must not be negative");
  const OutboundPolicy& policy = request.policy ? *request.policy : DefaultPolicy();
  if (request.environment_proxy && !policy.unrestricted()) {
    return Status::InvalidArgument("environment proxies are only for destinations with an unrestricted policy");
  }
  CAIRN_ASSIGN_OR_RETURN(ParsedUrl url, ParseUrl(request.url));
  const std::string host_port = url.host + ":" + std::to_string(url.port);
  bool sends_body = method == "POST" || method == "PUT" || method == "PATCH" || (method == "DELETE" && !request.body.empty());

  curl_slist* raw_headers = nullptr;
  Status header_status = BuildHeaders(request, sends_body, &raw_headers);
  std::unique_ptr<curl_slist, ListDeleter> headers(raw_headers);
  if (!header_status.ok()) return header_status;

  auto cancelled = [&cancel] { return cancel.requested && cancel.requested(); };
  if (cancelled()) return Status::Unavailable("request to " + url.host + " cancelled");
  if (handles_ == nullptr || handles_->easy == nullptr || handles_->multi == nullptr) {
    return Status::Internal("cannot create an HTTP handle");
  }
  Exchange ex;
  ex.policy = &policy;
  ex.max_body = request.max_response_bytes;
  ex.truncate_body = request.truncate_body;
  ex.follows_redirects = request.max_redirects > 0;
  ex.handler = handler;
  const long timeout_ms = static_cast<long>(request.timeout.count());
  const long connect_timeout_ms =
      static_cast<long>(request.connect_timeout.count() > 0 ? request.connect_timeout.count() : request.timeout.count());
  const std::string no_proxy = NoProxyList();
  CURL* h = handles_->easy;
  // The handle keeps its connections between requests, but not the options of the previous one.
  curl_easy_reset(h);
  curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
#if LIBCURL_VERSION_NUM >= 0x075500  // 7.85: the string forms; the bitmasks are deprecated
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#else
  curl_easy_setopt(h, CURLOPT_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
  curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
  // Every connection goes through the address policy; the environment must not be able to send
  // it to a proxy instead (the check would then see the proxy's address, not the destination's).
  curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, OnOpenSocket);
  curl_easy_setopt(h, CURLOPT_OPENSOCKETDATA, &ex);
  if (request.environment_proxy) {
    curl_easy_setopt(h, CURLOPT_NOPROXY, no_proxy.c_str());
  } else {
    curl_easy_setopt(h, CURLOPT_PROXY, "");
    curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
  }
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);  // no SIGALRM for timeouts: we run on worker threads
  curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);  // a dead peer of a quiet stream is noticed eventually
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, request.max_redirects > 0 ? 1L : 0L);
  curl_easy_setopt(h, CURLOPT_MAXREDIRS, static_cast<long>(request.max_redirects));
  if (method == "GET") {
    curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
  } else {
    if (sends_body) {
      // POSTFIELDS points into `request`, which outlives the transfer below.
      curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body.data());
      curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
    }
    // For PUT/PATCH/DELETE the verb replaces POST in the request line (and, if redirects are
    // followed, on every hop: curl cannot downgrade a custom verb to GET).
    if (method != "POST") curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method.c_str());
  }
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(h, CURLOPT_USERAGENT, request.user_agent.c_str());  // a User-Agent header in `headers` wins
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, connect_timeout_ms);
  // Refuses early when Content-Length already says too much; the write callback covers the rest.
  if (handler == nullptr && request.max_response_bytes > 0 && !request.truncate_body) {
    curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(request.max_response_bytes));
  }
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &ex);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &ex);
  char error_buffer[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error_buffer);

  // The multi interface lets this thread wake every poll_interval (and at once on wake_fd) to
  // notice a cancel, instead of curl's progress callback (about once a second when idle).
  auto start = std::chrono::steady_clock::now();
  CURLM* multi = handles_->multi;
  if (curl_multi_add_handle(multi, h) != CURLM_OK) return Status::Internal("cannot start an HTTP transfer");
  CURLcode rc = CURLE_OK;
  bool was_cancelled = false;
  const int poll_ms = cancel.requested ? static_cast<int>(std::max<int64_t>(1, cancel.poll_interval.count())) : 1000;
  for (;;) {
    int running = 0;
    if (CURLMcode mc = curl_multi_perform(multi, &running); mc != CURLM_OK) {
      rc = CURLE_FAILED_INIT;
      snprintf(error_buffer, sizeof error_buffer, "%s", curl_multi_strerror(mc));
      break;
    }
    if (running == 0) {
      int queued = 0;
      while (CURLMsg* msg = curl_multi_info_read(multi, &queued)) {
        if (msg->msg == CURLMSG_DONE && msg->easy_handle == h) rc = msg->data.result;
      }
      break;
    }
    if (cancelled()) {
      was_cancelled = true;
      break;
    }
    curl_waitfd wake{cancel.wake_fd, CURL_WAIT_POLLIN, 0};
    curl_multi_poll(multi, &wake, cancel.wake_fd >= 0 ? 1 : 0, poll_ms, nullptr);
  }
  curl_multi_remove_handle(multi, h);
  auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);

  bool cut_short = handler == nullptr && request.truncate_body && ex.body_too_large && !was_cancelled;
  if (!was_cancelled && (rc == CURLE_OK || cut_short || ex.stopped)) {
    HttpFetchResponse response;
    response.body_truncated = cut_short || (handler != nullptr && ex.body_too_large);
    response.stopped = ex.stopped;
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    response.status = status != 0 ? static_cast<int>(status) : ex.status;
    char* content_type = nullptr;
    if (curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &content_type) == CURLE_OK && content_type != nullptr) {
      response.content_type = content_type;
    }
    response.headers = std::move(ex.headers);
    response.body = std::move(ex.body);
    response.duration_ms = elapsed.count();
    return response;
  }
  // Our own callbacks' reasons first: each of them surfaces as a generic curl code.
  if (was_cancelled) return Status::Unavailable("request to " + url.host + " cancelled");
  if (ex.body_too_large || rc == CURLE_FILESIZE_EXCEEDED) {
    return Status::PayloadTooLarge("response larger than " + std::to_string(request.max_response_bytes) + " bytes");
  }
  if (ex.headers_too_large) {
    return Status::PayloadTooLarge("response headers larger than " + std::to_string(kMaxHeaderBytes) + " bytes");
  }
  std::string detail = error_buffer[0] != '\0' ? std::string(error_buffer) : std::string(curl_easy_strerror(rc));
  if (!ex.hop_refusals.empty()) {
    // Every address of the hop refused: the policy's own words, and nothing was sent. Some
    // refused, the others unreachable: a network error that names the refusal too.
    if (ex.hop_opened == 0) return Status::InvalidArgument(ex.hop_refusals.front());
    detail += " (also refused: " + ex.hop_refusals.front() + ")";
  }
  switch (rc) {
    case CURLE_OPERATION_TIMEDOUT: {
      curl_off_t connected_us = 0;  // 0: the connect phase is what timed out
      curl_easy_getinfo(h, CURLINFO_CONNECT_TIME_T, &connected_us);
      long limit_ms = connected_us == 0 || timeout_ms == 0 ? connect_timeout_ms : timeout_ms;
      return Status::Unavailable("request to " + url.host + " timed out after " + std::to_string(limit_ms) + " ms");
    }
    case CURLE_COULDNT_RESOLVE_HOST:
      return Status::Unavailable("cannot resolve host " + url.host + ": " + detail);
    case CURLE_COULDNT_CONNECT:
      return Status::Unavailable("cannot connect to " + host_port + ": " + detail);
    case CURLE_TOO_MANY_REDIRECTS:
      return Status::Unavailable("request to " + url.host + ": more than " + std::to_string(request.max_redirects) +
                                 " redirects");
    case CURLE_URL_MALFORMAT:
      return Status::InvalidArgument("invalid URL: " + detail);
    default:
      return Status::Unavailable("request to " + host_port + " failed: " + detail);
  }
}

}  // namespace cairn::net
