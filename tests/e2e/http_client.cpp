#include "http_client.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/json/parse.hpp>
#include <cerrno>
#include <cstring>
#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <utility>

namespace cairn::e2e {
namespace {

using Clock = std::chrono::steady_clock;

int RemainingMs(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left < 0 ? 0 : static_cast<int>(left);
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r' || s[b] == '\n')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r' || s[e - 1] == '\n')) --e;
  return std::string(s.substr(b, e - b));
}

void EnsureCurlGlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (curl_global_init(CURL_GLOBAL_ALL) != CURLE_OK) throw std::runtime_error("curl_global_init failed");
  });
}

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  static_cast<Response*>(user)->body.append(data, size * count);
  return size * count;
}

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* response = static_cast<Response*>(user);
  std::string_view line(data, size * count);
  if (line.substr(0, 5) == "HTTP/") {
    response->headers.clear();  // a new response (after an interim 1xx)
  } else if (auto colon = line.find(':'); colon != std::string_view::npos) {
    response->headers.emplace_back(Trim(line.substr(0, colon)), Trim(line.substr(colon + 1)));
  }
  return size * count;
}

// Parses "HTTP/1.1 200 OK\r\nName: value\r\n..." (without the final blank line) into `out`.
bool ParseHead(std::string_view head, Response& out) {
  size_t eol = head.find("\r\n");
  std::string_view status_line = head.substr(0, eol);
  if (status_line.substr(0, 5) != "HTTP/") return false;
  size_t sp = status_line.find(' ');
  if (sp == std::string_view::npos || sp + 4 > status_line.size()) return false;
  out.status = std::strtol(std::string(status_line.substr(sp + 1, 3)).c_str(), nullptr, 10);
  size_t pos = eol == std::string_view::npos ? head.size() : eol + 2;
  while (pos < head.size()) {
    size_t end = head.find("\r\n", pos);
    if (end == std::string_view::npos) end = head.size();
    std::string_view line = head.substr(pos, end - pos);
    if (auto colon = line.find(':'); colon != std::string_view::npos) {
      out.headers.emplace_back(Trim(line.substr(0, colon)), Trim(line.substr(colon + 1)));
    }
    pos = end + 2;
  }
  return true;
}

}  // namespace

std::optional<std::string> Response::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (EqualsIgnoreCase(key, name)) return value;
  }
  return std::nullopt;
}

namespace {
boost::json::parse_options DeepParse() {
  boost::json::parse_options opts;
  opts.max_depth = 4096;  // the server decides what is too deep, not the test's parser
  return opts;
}
}  // namespace

boost::json::value Response::Json() const {
  boost::system::error_code ec;
  boost::json::value v = boost::json::parse(body, ec, {}, DeepParse());
  if (ec) return nullptr;
  return v;
}

std::string Response::ParseError() const {
  boost::system::error_code ec;
  boost::json::parse(body, ec, {}, DeepParse());
  return ec ? ec.message() : std::string();
}

std::string Response::Describe() const {
  std::string out = "HTTP " + std::to_string(status);
  if (!transport_error.empty()) out += " (transport error: " + transport_error + ")";
  out += " ";
  out += body.size() > 600 ? body.substr(0, 600) + "..." : body;
  return out;
}

HttpClient::HttpClient(int port, std::string host) : host_(std::move(host)), port_(port) {
  EnsureCurlGlobalInit();
  curl_ = curl_easy_init();
  if (curl_ == nullptr) throw std::runtime_error("curl_easy_init failed");
}

HttpClient::~HttpClient() {
  if (curl_ != nullptr) curl_easy_cleanup(static_cast<CURL*>(curl_));
}

Response HttpClient::Send(const Request& request) {
  CURL* curl = static_cast<CURL*>(curl_);
  curl_easy_reset(curl);
  Response response;
  char error_buffer[CURL_ERROR_SIZE] = {0};
  const std::string url = "http://" + host_ + ":" + std::to_string(port_) + request.target;

  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
  curl_easy_setopt(curl, CURLOPT_PATH_AS_IS, 1L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_.count()));
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &response);

  bool has_content_type = false;
  curl_slist* list = nullptr;
  for (const auto& [name, value] : request.headers) {
    if (EqualsIgnoreCase(name, "content-type")) has_content_type = true;
    // curl syntax: "Name;" sends an empty header, "Name:" removes one of curl's own.
    std::string line = value.empty() ? name + ";" : name + ": " + value;
    list = curl_slist_append(list, line.c_str());
  }
  list = curl_slist_append(list, "Expect:");
  if (request.body) {
    if (!has_content_type) {
      std::string line = request.content_type ? "Content-Type: " + *request.content_type : "Content-Type:";
      list = curl_slist_append(list, line.c_str());
    }
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body->size()));
    curl_easy_setopt(curl, CURLOPT_COPYPOSTFIELDS, request.body->data());
    if (request.method != "POST") curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  } else if (request.method == "GET") {
    curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
  } else if (request.method == "HEAD") {
    curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  } else {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  }
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);

  CURLcode rc = curl_easy_perform(curl);
  if (rc != CURLE_OK) {
    response.transport_error = std::string(curl_easy_strerror(rc)) + ": " + error_buffer;
  }
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  response.status = rc == CURLE_OK ? status : 0;
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, nullptr);
  curl_slist_free_all(list);
  return response;
}

Response HttpClient::Get(const std::string& target, const Headers& headers) {
  return Send(Request{"GET", target, headers, std::nullopt});
}

Response HttpClient::Delete(const std::string& target, const Headers& headers) {
  return Send(Request{"DELETE", target, headers, std::nullopt});
}

Response HttpClient::Post(const std::string& target, const std::string& body, const Headers& headers) {
  return Send(Request{"POST", target, headers, body});
}

Response HttpClient::Patch(const std::string& target, const std::string& body, const Headers& headers) {
  return Send(Request{"PATCH", target, headers, body});
}

std::string UrlEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
        c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0x0F]);
    }
  }
  return out;
}

RawConnection::~RawConnection() { Close(); }

RawConnection::RawConnection(RawConnection&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), buffer_(std::move(other.buffer_)), closed_(other.closed_),
      error_(std::move(other.error_)) {}

RawConnection& RawConnection::operator=(RawConnection&& other) noexcept {
  if (this != &other) {
    Close();
    fd_ = std::exchange(other.fd_, -1);
    buffer_ = std::move(other.buffer_);
    closed_ = other.closed_;
    error_ = std::move(other.error_);
  }
  return *this;
}

void RawConnection::Close() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

bool RawConnection::Connect(int port, const std::string& host) {
  Close();
  buffer_.clear();
  closed_ = false;
  fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) {
    error_ = std::string("socket: ") + std::strerror(errno);
    return false;
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, host.c_str(), &addr.sin_addr);
  if (connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    error_ = std::string("connect: ") + std::strerror(errno);
    Close();
    return false;
  }
  int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return true;
}

bool RawConnection::Send(std::string_view bytes, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  size_t sent = 0;
  while (sent < bytes.size()) {
    pollfd p = {fd_, POLLOUT, 0};
    if (poll(&p, 1, RemainingMs(deadline)) <= 0) return false;
    if ((p.revents & (POLLERR | POLLHUP)) != 0) return false;
    ssize_t n = send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return false;
    }
    sent += static_cast<size_t>(n);
  }
  return true;
}

bool RawConnection::Receive(Clock::time_point deadline) {
  if (closed_ || fd_ < 0) return false;
  while (true) {
    pollfd p = {fd_, POLLIN, 0};
    int ready = poll(&p, 1, RemainingMs(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    char buf[16384];
    ssize_t n = recv(fd_, buf, sizeof(buf), 0);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      error_ = std::string("recv: ") + std::strerror(errno);
      closed_ = true;
      return false;
    }
    if (n == 0) {
      closed_ = true;
      return false;
    }
    buffer_.append(buf, static_cast<size_t>(n));
    return true;
  }
}

Response RawConnection::ReadResponse(bool head_only, std::chrono::milliseconds timeout) {
  Response response;
  const auto deadline = Clock::now() + timeout;
  size_t head_end;
  while ((head_end = buffer_.find("\r\n\r\n")) == std::string::npos) {
    if (!Receive(deadline)) {
      response.connection_closed = closed_;
      response.transport_error = closed_ ? (error_.empty() ? "closed before a response" : error_) : "timed out";
      response.body = buffer_;
      return response;
    }
  }
  if (!ParseHead(std::string_view(buffer_).substr(0, head_end), response)) {
    response.status = 0;
    response.transport_error = "unparseable response head: " + buffer_.substr(0, 200);
    return response;
  }
  buffer_.erase(0, head_end + 4);
  std::optional<size_t> length;
  if (auto cl = response.Header("content-length")) length = std::stoul(*cl);
  if (head_only || response.status < 200 || response.status == 204 || response.status == 304) length = 0;
  if (length) {
    while (buffer_.size() < *length) {
      if (!Receive(deadline)) {
        response.transport_error = closed_ ? "closed in the body" : "timed out reading the body";
        break;
      }
    }
    size_t take = std::min(*length, buffer_.size());
    response.body = buffer_.substr(0, take);
    buffer_.erase(0, take);
  } else {
    while (Receive(deadline)) {
    }
    if (!closed_) response.transport_error = "timed out reading a body delimited by the close";
    response.body = std::move(buffer_);
    buffer_.clear();
  }
  response.connection_closed = closed_;
  return response;
}

bool RawConnection::WaitClosed(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (!closed_) {
    if (!Receive(deadline) && !closed_) return false;
  }
  return true;
}

Response RawExchange(int port, const std::string& bytes, std::chrono::milliseconds timeout, const std::string& host) {
  const auto deadline = Clock::now() + timeout;
  RawConnection connection;
  if (!connection.Connect(port, host)) {
    Response response;
    response.transport_error = connection.error();
    return response;
  }
  // Send everything we can; the server may answer and close before reading it all.
  connection.Send(bytes, timeout);
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return connection.ReadResponse(false, std::max(left, std::chrono::milliseconds(0)));
}

}  // namespace cairn::e2e
