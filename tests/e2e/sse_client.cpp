#include "sse_client.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <cerrno>
#include <charconv>
#include <cstring>

namespace cairn::e2e {
namespace json = boost::json;
using Clock = std::chrono::steady_clock;

namespace {

bool IEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

std::string Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) s.remove_suffix(1);
  return std::string(s);
}

std::string Shorten(const std::string& s, size_t max = 300) {
  return s.size() <= max ? s : s.substr(0, max) + "...(" + std::to_string(s.size()) + " bytes)";
}

std::string LastFrames(const std::vector<SseFrame>& frames, size_t n = 4) {
  std::string out;
  for (size_t i = frames.size() > n ? frames.size() - n : 0; i < frames.size(); ++i) {
    out += "\n    " + frames[i].Describe();
  }
  return out;
}

}  // namespace

// ---- SseFrame / SseParser ----

json::value SseFrame::Json() const {
  if (!data) return nullptr;
  boost::system::error_code ec;
  json::value v = json::parse(*data, ec);
  return ec ? json::value(nullptr) : v;
}

std::string SseFrame::Type() const {
  json::value v = Json();
  if (!v.is_object()) return "";
  const json::value* t = v.as_object().if_contains("type");
  return t && t->is_string() ? std::string(t->as_string()) : "";
}

int64_t SseFrame::Seq() const {
  if (!id) return -1;
  int64_t seq = 0;
  auto [ptr, ec] = std::from_chars(id->data(), id->data() + id->size(), seq);
  if (ec != std::errc() || ptr != id->data() + id->size()) return -1;
  return seq;
}

std::string SseFrame::Describe() const {
  std::string out;
  if (id) out += "id=" + *id + " ";
  for (const auto& c : comments) out += ": " + c + " ";
  if (data) out += "data=" + Shorten(*data, 200);
  return out;
}

std::vector<SseFrame> SseParser::Feed(std::string_view bytes) {
  std::vector<SseFrame> out;
  for (char c : bytes) {
    if (c == '\n' && last_was_cr_) {  // the \n of a \r\n: the line already ended at \r
      last_was_cr_ = false;
      continue;
    }
    last_was_cr_ = c == '\r';
    if (c == '\n' || c == '\r') {
      Line(line_, out);
      line_.clear();
    } else {
      line_ += c;
    }
  }
  return out;
}

void SseParser::Line(std::string_view line, std::vector<SseFrame>& out) {
  if (line.empty()) {
    if (has_field_) out.push_back(std::move(current_));
    current_ = SseFrame{};
    has_field_ = false;
    return;
  }
  has_field_ = true;
  if (line.front() == ':') {
    line.remove_prefix(1);
    if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    current_.comments.emplace_back(line);
    return;
  }
  std::string_view name = line, value;
  if (size_t colon = line.find(':'); colon != std::string_view::npos) {
    name = line.substr(0, colon);
    value = line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (name == "data") {
    if (current_.data) {
      *current_.data += "\n";
      *current_.data += value;
    } else {
      current_.data = std::string(value);
    }
  } else if (name == "id") {
    current_.id = std::string(value);
  }
  // other fields (event, retry) are not used by cairn; ignored
}

std::vector<SseFrame> EventsOf(const std::vector<SseFrame>& frames) {
  std::vector<SseFrame> out;
  for (const auto& f : frames) {
    if (f.IsEvent()) out.push_back(f);
  }
  return out;
}

std::vector<int64_t> SeqsOf(const std::vector<SseFrame>& frames) {
  std::vector<int64_t> out;
  for (const auto& f : frames) {
    if (f.IsEvent()) out.push_back(f.Seq());
  }
  return out;
}

// ---- SseClient ----

SseClient::SseClient(std::string url, Headers headers) : url_(std::move(url)), headers_(std::move(headers)) {}

SseClient::~SseClient() { Stop(); }

void SseClient::Start() {
  multi_ = curl_multi_init();
  easy_ = curl_easy_init();
  thread_ = std::thread([this] { Run(); });
}

void SseClient::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  if (multi_) curl_multi_wakeup(static_cast<CURLM*>(multi_));
  if (thread_.joinable()) thread_.join();
  if (easy_) {
    curl_easy_cleanup(static_cast<CURL*>(easy_));
    easy_ = nullptr;
  }
  if (multi_) {
    curl_multi_cleanup(static_cast<CURLM*>(multi_));
    multi_ = nullptr;
  }
}

size_t SseClient::OnData(char* ptr, size_t size, size_t nmemb, void* self_ptr) {
  auto* self = static_cast<SseClient*>(self_ptr);
  std::string_view bytes(ptr, size * nmemb);
  std::vector<SseFrame> frames = self->parser_.Feed(bytes);
  {
    std::lock_guard lock(self->mu_);
    self->body_.append(bytes);
    if (self->status_ == 0) curl_easy_getinfo(static_cast<CURL*>(self->easy_), CURLINFO_RESPONSE_CODE, &self->status_);
    for (auto& f : frames) self->frames_.push_back(std::move(f));
  }
  self->cv_.notify_all();
  return size * nmemb;
}

size_t SseClient::OnHeader(char* ptr, size_t size, size_t nmemb, void* self_ptr) {
  auto* self = static_cast<SseClient*>(self_ptr);
  std::string_view line(ptr, size * nmemb);
  std::lock_guard lock(self->mu_);
  if (line.rfind("HTTP/", 0) == 0) {
    self->response_headers_.clear();
    size_t sp = line.find(' ');
    if (sp != std::string_view::npos) self->status_ = std::atol(std::string(line.substr(sp + 1, 3)).c_str());
  } else if (size_t colon = line.find(':'); colon != std::string_view::npos) {
    self->response_headers_.emplace_back(Trim(line.substr(0, colon)), Trim(line.substr(colon + 1)));
  }
  return size * nmemb;
}

void SseClient::Run() {
  CURL* easy = static_cast<CURL*>(easy_);
  CURLM* multi = static_cast<CURLM*>(multi_);
  curl_slist* list = nullptr;
  list = curl_slist_append(list, "Accept: text/event-stream");
  for (const auto& [name, value] : headers_) list = curl_slist_append(list, (name + ": " + value).c_str());
  curl_easy_setopt(easy, CURLOPT_URL, url_.c_str());
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &SseClient::OnData);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, this);
  curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, &SseClient::OnHeader);
  curl_easy_setopt(easy, CURLOPT_HEADERDATA, this);
  curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_PROXY, "");
  curl_multi_add_handle(multi, easy);

  std::string error;
  for (;;) {
    {
      std::lock_guard lock(mu_);
      if (stop_) break;
    }
    int running = 0;
    CURLMcode mc = curl_multi_perform(multi, &running);
    if (mc != CURLM_OK) {
      error = curl_multi_strerror(mc);
      break;
    }
    if (running == 0) {
      int left = 0;
      while (CURLMsg* msg = curl_multi_info_read(multi, &left)) {
        if (msg->msg == CURLMSG_DONE && msg->data.result != CURLE_OK) error = curl_easy_strerror(msg->data.result);
      }
      break;
    }
    curl_multi_poll(multi, nullptr, 0, 1000, nullptr);  // returns at once on data or curl_multi_wakeup
  }
  curl_multi_remove_handle(multi, easy);
  curl_slist_free_all(list);
  {
    std::lock_guard lock(mu_);
    if (status_ == 0) curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status_);
    finished_ = true;
    error_ = error;
  }
  cv_.notify_all();
}

bool SseClient::WaitFor(const Predicate& predicate, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return predicate(frames_) || finished_; });
  return predicate(frames_);
}

bool SseClient::WaitForEvents(size_t n, std::chrono::milliseconds timeout) {
  return WaitFor(
      [n](const std::vector<SseFrame>& frames) {
        size_t count = 0;
        for (const auto& f : frames) count += f.IsEvent() ? 1 : 0;
        return count >= n;
      },
      timeout);
}

bool SseClient::WaitForOpen(std::chrono::milliseconds timeout) {
  return WaitFor(
      [](const std::vector<SseFrame>& frames) {
        for (const auto& f : frames) {
          for (const auto& c : f.comments) {
            if (c == "stream open") return true;
          }
        }
        return false;
      },
      timeout);
}

bool SseClient::WaitForEnd(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return finished_; });
}

std::vector<SseFrame> SseClient::Frames() const {
  std::lock_guard lock(mu_);
  return frames_;
}

long SseClient::status() const {
  std::lock_guard lock(mu_);
  return status_;
}

std::optional<std::string> SseClient::Header(std::string_view name) const {
  std::lock_guard lock(mu_);
  for (const auto& [n, v] : response_headers_) {
    if (IEquals(n, name)) return v;
  }
  return std::nullopt;
}

std::string SseClient::body() const {
  std::lock_guard lock(mu_);
  return body_;
}

bool SseClient::finished() const {
  std::lock_guard lock(mu_);
  return finished_;
}

std::string SseClient::error() const {
  std::lock_guard lock(mu_);
  return error_;
}

std::string SseClient::Describe() const {
  std::lock_guard lock(mu_);
  std::string out = "SSE " + url_ + ": HTTP " + std::to_string(status_) + (finished_ ? " (ended" : " (open");
  if (!error_.empty()) out += ": " + error_;
  out += "), " + std::to_string(frames_.size()) + " frames, " + std::to_string(body_.size()) + " body bytes";
  if (status_ != 200) out += ", body: " + Shorten(body_);
  out += LastFrames(frames_);
  return out;
}

// ---- RawSseStream ----

RawSseStream::~RawSseStream() { Close(); }

RawSseStream::RawSseStream(RawSseStream&& o) noexcept
    : fd_(o.fd_), eof_(o.eof_), error_(std::move(o.error_)), head_(std::move(o.head_)),
      header_done_(o.header_done_), status_(o.status_), body_(std::move(o.body_)), parser_(std::move(o.parser_)),
      frames_(std::move(o.frames_)) {
  o.fd_ = -1;
}

void RawSseStream::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool RawSseStream::Open(int port, const std::string& target, const Headers& headers, int receive_buffer) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) {
    error_ = std::string("socket: ") + std::strerror(errno);
    return false;
  }
  if (receive_buffer > 0) ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    error_ = std::string("connect: ") + std::strerror(errno);
    Close();
    return false;
  }
  std::string request = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                        "\r\nAccept: text/event-stream\r\n";
  for (const auto& [name, value] : headers) request += name + ": " + value + "\r\n";
  request += "\r\n";
  size_t sent = 0;
  while (sent < request.size()) {
    ssize_t n = ::send(fd_, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error_ = std::string("send: ") + std::strerror(errno);
      Close();
      return false;
    }
    sent += static_cast<size_t>(n);
  }
  ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
  return true;
}

void RawSseStream::Consume(std::string_view bytes) {
  if (!header_done_) {
    head_.append(bytes);
    size_t end = head_.find("\r\n\r\n");
    if (end == std::string::npos) return;
    std::string rest = head_.substr(end + 4);
    head_.resize(end + 4);
    header_done_ = true;
    if (head_.rfind("HTTP/1.", 0) == 0 && head_.size() > 12) status_ = std::atol(head_.substr(9, 3).c_str());
    bytes = {};
    if (!rest.empty()) {
      body_ += rest;
      for (auto& f : parser_.Feed(rest)) frames_.push_back(std::move(f));
    }
    return;
  }
  body_.append(bytes);
  for (auto& f : parser_.Feed(bytes)) frames_.push_back(std::move(f));
}

bool RawSseStream::ReadAvailable() {
  if (fd_ < 0 || eof_) return false;
  char buf[65536];
  for (;;) {
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n > 0) {
      Consume(std::string_view(buf, static_cast<size_t>(n)));
      continue;
    }
    if (n == 0) {
      eof_ = true;
      return false;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
    error_ = std::string("recv: ") + std::strerror(errno);
    eof_ = true;
    return false;
  }
}

bool RawSseStream::ReadUntil(const std::function<bool(const RawSseStream&)>& done, std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  while (!done(*this)) {
    if (fd_ < 0 || eof_) return done(*this);
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd_, POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(left));
    if (r < 0 && errno != EINTR) {
      error_ = std::string("poll: ") + std::strerror(errno);
      return false;
    }
    if (r > 0) ReadAvailable();
  }
  return true;
}

bool RawSseStream::opened() const {
  for (const auto& f : frames_) {
    for (const auto& c : f.comments) {
      if (c == "stream open") return true;
    }
  }
  return false;
}

bool RawSseStream::ReadOpen(std::chrono::milliseconds timeout) {
  return ReadUntil([](const RawSseStream& s) { return s.opened() || (s.header_done() && s.status() != 200); },
                   timeout) &&
         opened();
}

bool RawSseStream::ReadToEnd(std::chrono::milliseconds timeout) {
  return ReadUntil([](const RawSseStream& s) { return s.closed(); }, timeout);
}

std::string RawSseStream::Describe() const {
  std::string out = "raw SSE stream: HTTP " + std::to_string(status_) + (eof_ ? " (closed)" : " (open)");
  if (!error_.empty()) out += " error: " + error_;
  out += ", " + std::to_string(body_.size()) + " body bytes, " + std::to_string(frames_.size()) + " frames";
  if (status_ != 200) out += ", body: " + Shorten(body_);
  if (!parser_.pending().empty()) out += ", incomplete line of " + std::to_string(parser_.pending().size()) + " bytes";
  out += LastFrames(frames_);
  return out;
}

size_t RawSseStream::PollAll(std::vector<RawSseStream>& streams, const std::function<bool(const RawSseStream&)>& done,
                             std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  std::vector<pollfd> fds;
  std::vector<size_t> index;
  for (;;) {
    fds.clear();
    index.clear();
    size_t satisfied = 0;
    for (size_t i = 0; i < streams.size(); ++i) {
      if (done(streams[i])) {
        ++satisfied;
      } else if (streams[i].fd() >= 0 && !streams[i].closed()) {
        fds.push_back(pollfd{streams[i].fd(), POLLIN, 0});
        index.push_back(i);
      }
    }
    if (fds.empty()) return satisfied;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return satisfied;
    int r = ::poll(fds.data(), fds.size(), static_cast<int>(left));
    if (r < 0 && errno != EINTR) return satisfied;
    for (size_t k = 0; k < fds.size(); ++k) {
      if (fds[k].revents != 0) streams[index[k]].ReadAvailable();
    }
  }
}

long RaiseFileLimit() {
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) return -1;
  rl.rlim_cur = rl.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &rl);
  ::getrlimit(RLIMIT_NOFILE, &rl);
  return static_cast<long>(rl.rlim_cur);
}

}  // namespace cairn::e2e
