#include "support/loopback_http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>

namespace cairn::test_support {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kReadTimeout = std::chrono::seconds(10);

// Waits up to 10 ms for `fd` to be readable, so that loops notice the server stopping.
bool Readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, 10) > 0;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

bool HttpConnection::Send(std::string_view data) {
  while (!data.empty()) {
    // MSG_NOSIGNAL: a client that aborts mid-body must not kill the test with SIGPIPE.
    ssize_t n = send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool HttpConnection::Pause(std::chrono::milliseconds d) {
  auto until = Clock::now() + d;
  while (!stop_ && Clock::now() < until) {
    if (Readable(fd_)) {
      char c;
      if (recv(fd_, &c, 1, MSG_PEEK) <= 0) return false;
    }
  }
  return !stop_;
}

void HttpConnection::WaitClosed() {
  char buf[256];
  while (!stop_) {
    if (Readable(fd_) && recv(fd_, buf, sizeof buf, 0) <= 0) return;
  }
}

LoopbackHttpServer::Handler Answering(LoopbackHttpServer::Answerer answer) {
  return [answer = std::move(answer)](int, const ReceivedRequest& req, HttpConnection& conn) {
    std::optional<std::string> response = answer(req);
    if (response) {
      conn.Send(*response);
    } else {
      conn.WaitClosed();
    }
  };
}

std::string HttpResponse(int status, std::string_view reason, const std::vector<std::string>& headers,
                         std::string_view body, bool with_content_length) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) + "\r\n";
  for (const std::string& h : headers) out += h + "\r\n";
  if (with_content_length) out += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  out += "Connection: close\r\n\r\n";
  out += body;
  return out;
}

int FreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

LoopbackHttpServer::LoopbackHttpServer(Answerer answer, std::string address)
    : LoopbackHttpServer(Answering(std::move(answer)), std::move(address)) {}

LoopbackHttpServer::LoopbackHttpServer(Handler handler, std::string address)
    : handler_(std::move(handler)), address_(std::move(address)) {
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  EXPECT_EQ(inet_pton(AF_INET, address_.c_str(), &addr.sin_addr), 1) << address_;
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(listen_fd_, 16) != 0) {
    ADD_FAILURE() << "the loopback HTTP server cannot listen on " << address_;
    return;
  }
  socklen_t len = sizeof addr;
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  thread_ = std::thread([this] { Run(); });
}

LoopbackHttpServer::~LoopbackHttpServer() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  close(listen_fd_);
}

std::string LoopbackHttpServer::Url(std::string_view path) const {
  return "http://" + address_ + ":" + std::to_string(port_) + std::string(path);
}

std::vector<ReceivedRequest> LoopbackHttpServer::requests() const {
  std::lock_guard lock(mu_);
  return requests_;
}

bool LoopbackHttpServer::WaitForRequests(size_t n, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return requests_.size() >= n; });
}

void LoopbackHttpServer::Run() {
  while (!stop_) {
    if (!Readable(listen_fd_)) continue;
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    ReceivedRequest req;
    if (Read(fd, &req)) {
      int n = 0;
      {
        std::lock_guard lock(mu_);
        n = static_cast<int>(requests_.size());
        requests_.push_back(req);
      }
      cv_.notify_all();
      HttpConnection conn(fd, stop_);
      handler_(n, req, conn);
    }
    close(fd);
  }
}

bool LoopbackHttpServer::Read(int fd, ReceivedRequest* req) {
  std::string data;
  size_t head_end = std::string::npos;
  size_t content_length = 0;
  auto deadline = Clock::now() + kReadTimeout;
  while (!stop_ && Clock::now() < deadline) {
    if (head_end == std::string::npos) {
      head_end = data.find("\r\n\r\n");
      if (head_end != std::string::npos) {
        std::string_view head(data.data(), head_end);
        size_t eol = head.find("\r\n");
        std::string_view line = head.substr(0, eol);
        size_t sp1 = line.find(' ');
        size_t sp2 = line.rfind(' ');
        req->method = std::string(line.substr(0, sp1));
        req->target = std::string(line.substr(sp1 + 1, sp2 - sp1 - 1));
        while (eol != std::string_view::npos) {
          size_t start = eol + 2;
          eol = head.find("\r\n", start);
          std::string_view h = head.substr(start, eol == std::string_view::npos ? std::string_view::npos : eol - start);
          size_t colon = h.find(':');
          std::string value = colon == std::string_view::npos ? "" : std::string(h.substr(colon + 1));
          value.erase(0, value.find_first_not_of(' '));
          req->headers[Lower(std::string(h.substr(0, colon)))] = value;
        }
        if (auto cl = req->Header("content-length")) content_length = std::stoul(*cl);
      }
    }
    if (head_end != std::string::npos && data.size() >= head_end + 4 + content_length) {
      req->body = data.substr(head_end + 4, content_length);
      return true;
    }
    if (!Readable(fd)) continue;
    char buf[4096];
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return false;
    data.append(buf, static_cast<size_t>(n));
  }
  return false;
}

}  // namespace cairn::test_support
