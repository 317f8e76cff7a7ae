// Test support for src/net: a tiny HTTP/1.1 server on a loopback address and request helpers.
// Header-only, for the module's tests.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "net/outbound_policy.h"

namespace cairn::net::test_support {

struct ReceivedRequest {
  std::string method;
  std::string target;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;

  std::optional<std::string> Header(std::string_view name) const {
    for (const auto& [n, v] : headers) {
      if (n == name) return v;
    }
    return std::nullopt;
  }
};

inline std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A tiny HTTP/1.1 server on a loopback address (127.0.0.1 unless told): one connection at a time,
// one request per connection, canned answers from `handler`. A handler returning nullopt never
// answers: the connection stays open until the client gives up or the server is destroyed.
class TestServer {
 public:
  using Handler = std::function<std::optional<std::string>(const ReceivedRequest&)>;

  explicit TestServer(Handler handler, std::string address = "127.0.0.1")
      : handler_(std::move(handler)), address_(std::move(address)) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    EXPECT_EQ(inet_pton(AF_INET, address_.c_str(), &addr.sin_addr), 1) << address_;
    addr.sin_port = 0;
    EXPECT_EQ(bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(listen(listen_fd_, 16), 0);
    socklen_t len = sizeof addr;
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Run(); });
  }
  ~TestServer() {
    stop_ = true;
    thread_.join();
    close(listen_fd_);
  }

  std::string Url(std::string_view path) const {
    return "http://" + address_ + ":" + std::to_string(port_) + std::string(path);
  }
  int port() const { return port_; }
  std::vector<ReceivedRequest> requests() const {
    std::lock_guard lock(mu_);
    return requests_;
  }

 private:
  // Waits up to 20 ms for `fd` to be readable, so that loops can notice stop_.
  static bool Readable(int fd) {
    pollfd p{fd, POLLIN, 0};
    return poll(&p, 1, 20) > 0;
  }

  void Run() {
    while (!stop_) {
      if (!Readable(listen_fd_)) continue;
      int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      Serve(fd);
      close(fd);
    }
  }

  bool ReadRequest(int fd, ReceivedRequest* req) {
    std::string data;
    size_t head_end = std::string::npos;
    size_t content_length = 0;
    while (!stop_) {
      if (head_end == std::string::npos) {
        head_end = data.find("\r\n\r\n");
        if (head_end != std::string::npos) {
          std::string_view head(data.data(), head_end);
          size_t eol = head.find("\r\n");
          std::string_view line = head.substr(0, eol);
          size_t sp1 = line.find(' ');
          size_t sp2 = line.find(' ', sp1 + 1);
          req->method = std::string(line.substr(0, sp1));
          req->target = std::string(line.substr(sp1 + 1, sp2 - sp1 - 1));
          while (eol != std::string_view::npos) {
            size_t start = eol + 2;
            eol = head.find("\r\n", start);
            std::string_view h = head.substr(start, eol == std::string_view::npos ? std::string_view::npos : eol - start);
            size_t colon = h.find(':');
            std::string value(h.substr(colon + 1));
            while (!value.empty() && value.front() == ' ') value.erase(0, 1);
            req->headers.emplace_back(Lower(std::string(h.substr(0, colon))), value);
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

  void Serve(int fd) {
    ReceivedRequest req;
    if (!ReadRequest(fd, &req)) return;
    {
      std::lock_guard lock(mu_);
      requests_.push_back(req);
    }
    std::optional<std::string> response = handler_(req);
    if (!response) {
      // Never answer; return once the client hangs up or the test ends.
      char buf[256];
      while (!stop_) {
        if (Readable(fd) && recv(fd, buf, sizeof buf, 0) <= 0) return;
      }
      return;
    }
    size_t sent = 0;
    while (sent < response->size()) {
      // MSG_NOSIGNAL: a client that aborts mid-body must not kill the test with SIGPIPE.
      ssize_t n = send(fd, response->data() + sent, response->size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return;
      sent += static_cast<size_t>(n);
    }
  }

  Handler handler_;
  std::string address_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  mutable std::mutex mu_;
  std::vector<ReceivedRequest> requests_;
};

inline std::string Response(int status, std::string_view reason, const std::vector<std::string>& headers, std::string_view body,
                     bool with_content_length = true) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) + "\r\n";
  for (const std::string& h : headers) out += h + "\r\n";
  if (with_content_length) out += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  out += "Connection: close\r\n\r\n";
  out += body;
  return out;
}

inline std::shared_ptr<const OutboundPolicy> Policy(std::string_view allow_list) {
  Result<OutboundPolicy> policy = OutboundPolicy::Parse(allow_list);
  EXPECT_TRUE(policy.ok()) << policy.status().ToString();
  return std::make_shared<const OutboundPolicy>(policy.ok() ? *policy : OutboundPolicy{});
}

}  // namespace cairn::net::test_support
