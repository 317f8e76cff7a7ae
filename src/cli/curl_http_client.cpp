#include "cli/curl_http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <mutex>

#include "cli/stop_signal.h"

namespace cairn::cli {

namespace {

// curl_global_init is not thread-safe and must run once per process before any handle exists.
void GlobalInitOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Sink {
  std::string* body;
  size_t max_bytes;
  bool overflow = false;
};

size_t WriteBody(char* data, size_t size, size_t count, void* user) {
  auto* sink = static_cast<Sink*>(user);
  const size_t n = size * count;
  if (sink->body->size() + n > sink->max_bytes) {
    sink->overflow = true;
    return 0;  // makes curl abort the transfer with CURLE_WRITE_ERROR
  }
  sink->body->append(data, n);
  return n;
}

std::string Trim(std::string_view text) {
  size_t begin = 0;
  size_t end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin])) != 0) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1])) != 0) --end;
  return std::string(text.substr(begin, end - begin));
}

size_t WriteHeader(char* data, size_t size, size_t count, void* user) {
  auto* headers = static_cast<std::vector<std::pair<std::string, std::string>>*>(user);
  const size_t n = size * count;
  const std::string_view line(data, n);
  if (line.starts_with("HTTP/")) {
    headers->clear();  // a new status line (e.g. after "100 Continue"): keep only the final headers
    return n;
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return n;  // the blank line ending the headers
  std::string name = Trim(line.substr(0, colon));
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  headers->emplace_back(std::move(name), Trim(line.substr(colon + 1)));
  return n;
}

// Loopback never goes through a proxy: an http_proxy set for the outside world must not
// swallow requests to a local `cairn serve`. The user's own no_proxy list is kept.
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

struct HeaderList {
  curl_slist* list = nullptr;
  ~HeaderList() { curl_slist_free_all(list); }
  void Append(const std::string& line) { list = curl_slist_append(list, line.c_str()); }
};

}  // namespace

CurlHttpClient::CurlHttpClient(CurlOptions options) : options_(std::move(options)) {
  GlobalInitOnce();
  curl_ = curl_easy_init();
}

CurlHttpClient::~CurlHttpClient() {
  if (curl_ != nullptr) curl_easy_cleanup(static_cast<CURL*>(curl_));
}

Result<HttpReply> CurlHttpClient::Send(const HttpRequest& request) {
  auto* curl = static_cast<CURL*>(curl_);
  if (curl == nullptr) return Status::Internal("libcurl could not create a handle");
  HttpReply reply;
  Sink sink{&reply.body, options_.max_reply_bytes};
  char error_buffer[CURL_ERROR_SIZE] = {0};
  const std::string no_proxy = NoProxyList();

  HeaderList headers;
  headers.Append("Accept: application/json");
  headers.Append("Expect:");  // no "100-continue" round trip for larger bodies
  if (request.body.has_value()) headers.Append("Content-Type: application/json");
  for (const auto& [name, value] : request.headers) headers.Append(name + ": " + value);

  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers.list);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, options_.user_agent.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);  // timeouts without SIGALRM
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options_.connect_timeout_ms));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.total_timeout_ms));
  curl_easy_setopt(curl, CURLOPT_NOPROXY, no_proxy.c_str());
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);  // a 201's Location is information, not a redirect
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &WriteBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &WriteHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &reply.headers);
  if (request.method == "GET") {
    curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
  } else {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  }
  if (request.body.has_value()) {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body->size()));
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body->data());
  }

  const CURLcode code = curl_easy_perform(curl);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  // The handle outlives this call (connection reuse) but the buffers and lists it was given do
  // not: drop every pointer to them now. Reset keeps open connections.
  curl_easy_reset(curl);
  if (sink.overflow) {
    return Status::ResourceExhausted("the reply from " + request.url + " is larger than " +
                                     std::to_string(options_.max_reply_bytes) + " bytes");
  }
  if (code != CURLE_OK) {
    std::string detail = error_buffer[0] != '\0' ? error_buffer : curl_easy_strerror(code);
    return Status::Unavailable(request.method + " " + request.url + " failed: " + detail);
  }
  reply.status = static_cast<int>(status);
  return reply;
}

namespace {

// The state of one streamed transfer, shared by the header and body callbacks.
struct StreamState {
  const StreamCallbacks* callbacks;
  HttpReply reply;
  bool stopped = false;  // a callback asked to end the transfer

  bool success() const { return reply.status >= 200 && reply.status <= 299; }
};

size_t StreamHeader(char* data, size_t size, size_t count, void* user) {
  auto* state = static_cast<StreamState*>(user);
  const size_t n = size * count;
  const std::string_view line(data, n);
  WriteHeader(data, size, count, &state->reply.headers);
  if (line.starts_with("HTTP/")) {
    // "HTTP/1.1 200 OK": a new status line (again after "100 Continue").
    const size_t space = line.find(' ');
    state->reply.status = space == std::string_view::npos ? 0 : std::atoi(std::string(line.substr(space + 1, 3)).c_str());
    return n;
  }
  if (line == "\r\n" || line == "\n") {  // the end of the headers
    if (state->success() && state->callbacks->on_open && !state->callbacks->on_open(state->reply)) {
      state->stopped = true;
      return 0;  // aborts the transfer
    }
  }
  return n;
}

size_t StreamBody(char* data, size_t size, size_t count, void* user) {
  auto* state = static_cast<StreamState*>(user);
  const size_t n = size * count;
  if (state->success()) {
    if (state->callbacks->on_data && !state->callbacks->on_data(std::string_view(data, n))) {
      state->stopped = true;
      return 0;  // makes curl abort the transfer with CURLE_WRITE_ERROR
    }
    return n;
  }
  // An error reply: keep its beginning, for the server's error message.
  const size_t room = CurlStreamClient::kMaxErrorBodyBytes - std::min(state->reply.body.size(),
                                                                      CurlStreamClient::kMaxErrorBodyBytes);
  state->reply.body.append(data, std::min(n, room));
  return n;
}

// Owns the easy and multi handles of one streamed transfer.
struct StreamHandles {
  CURL* easy = curl_easy_init();
  CURLM* multi = curl_multi_init();
  bool added = false;
  ~StreamHandles() {
    if (added) curl_multi_remove_handle(multi, easy);
    if (multi != nullptr) curl_multi_cleanup(multi);
    if (easy != nullptr) curl_easy_cleanup(easy);
  }
};

}  // namespace

CurlStreamClient::CurlStreamClient(CurlOptions options) : options_(std::move(options)) { GlobalInitOnce(); }

Result<HttpReply> CurlStreamClient::Stream(const HttpRequest& request, const StreamCallbacks& callbacks,
                                           StopSignal* stop) {
  StreamHandles handles;
  if (handles.easy == nullptr || handles.multi == nullptr) return Status::Internal("libcurl could not create a handle");
  CURL* curl = handles.easy;
  StreamState state{&callbacks, {}};
  char error_buffer[CURL_ERROR_SIZE] = {0};
  const std::string no_proxy = NoProxyList();

  HeaderList headers;
  headers.Append("Accept: text/event-stream");
  headers.Append("Cache-Control: no-cache");
  headers.Append("Expect:");
  if (request.body.has_value()) headers.Append("Content-Type: application/json");
  for (const auto& [name, value] : request.headers) headers.Append(name + ": " + value);

  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers.list);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, options_.user_agent.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options_.connect_timeout_ms));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 0L);        // a stream has no end to wait for
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 0L);   // and may be quiet for long
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);     // but a dead peer is noticed eventually
  curl_easy_setopt(curl, CURLOPT_NOPROXY, no_proxy.c_str());
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &StreamBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &state);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &StreamHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &state);
  if (request.method.empty() || request.method == "GET") {
    curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
  } else {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  }
  if (request.body.has_value()) {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body->size()));
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body->data());
  }

  if (curl_multi_add_handle(handles.multi, curl) != CURLM_OK) return Status::Internal("libcurl: cannot start a transfer");
  handles.added = true;
  const int stop_fd = stop == nullptr ? -1 : stop->fd();
  bool stopped_by_signal = false;
  while (true) {
    int running = 0;
    CURLMcode mc = curl_multi_perform(handles.multi, &running);
    if (mc != CURLM_OK) return Status::Internal(std::string("libcurl: ") + curl_multi_strerror(mc));
    if (running == 0) break;
    if (stop != nullptr && stop->stop_requested()) {
      stopped_by_signal = true;
      break;
    }
    curl_waitfd extra{stop_fd, CURL_WAIT_POLLIN, 0};
    mc = curl_multi_poll(handles.multi, &extra, stop_fd >= 0 ? 1 : 0, 1000, nullptr);
    if (mc != CURLM_OK) return Status::Internal(std::string("libcurl: ") + curl_multi_strerror(mc));
  }
  if (stopped_by_signal) return std::move(state.reply);

  CURLcode code = CURLE_OK;
  int left = 0;
  while (CURLMsg* message = curl_multi_info_read(handles.multi, &left)) {
    if (message->msg == CURLMSG_DONE && message->easy_handle == curl) code = message->data.result;
  }
  if (state.stopped) return std::move(state.reply);  // ended by a callback: CURLE_WRITE_ERROR is expected
  if (code != CURLE_OK) {
    std::string detail = error_buffer[0] != '\0' ? error_buffer : curl_easy_strerror(code);
    return Status::Unavailable(request.method + " " + request.url + " failed: " + detail);
  }
  return std::move(state.reply);
}

}  // namespace cairn::cli
