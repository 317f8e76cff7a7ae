// LoopbackHttpServer: a tiny HTTP/1.1 server on a loopback address, port 0, for tests that need
// something to call (an LLM endpoint, a webhook receiver, an http tool's destination).
//
// One connection at a time, one request per connection (the answer closes it). Every request is
// recorded before the handler sees it. The handler writes whatever it likes on the connection,
// so a test can stream, stall or cut a reply:
//
//   LoopbackHttpServer server([](int n, const ReceivedRequest& req, HttpConnection& c) {
//     c.Send(HttpResponse(200, "OK", {"Content-Type: application/json"}, R"({"ok":true})"));
//   });
//   // or, for a canned answer: nullopt never answers (the connection stays open)
//   LoopbackHttpServer server(Answering([](const ReceivedRequest&) { return HttpResponse(204, "No Content", {}, ""); }));
//
// Nothing sleeps: reads poll with short timeouts only to notice the server being destroyed.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace cairn::test_support {

struct ReceivedRequest {
  std::string method;
  std::string target;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;

  std::optional<std::string> Header(std::string_view name) const {
    auto it = headers.find(std::string(name));
    if (it == headers.end()) return std::nullopt;
    return it->second;
  }
};

// One accepted connection, as the handler sees it.
class HttpConnection {
 public:
  HttpConnection(int fd, const std::atomic<bool>& stop) : fd_(fd), stop_(stop) {}
  // Writes all of `data`; false once the client is gone.
  bool Send(std::string_view data);
  // Waits `d`; false as soon as the client hangs up or the server stops.
  bool Pause(std::chrono::milliseconds d);
  // Waits until the client hangs up or the server stops (a request never answered).
  void WaitClosed();

 private:
  int fd_;
  const std::atomic<bool>& stop_;
};

class LoopbackHttpServer {
 public:
  // `n` is the request's number, from 0.
  using Handler = std::function<void(int n, const ReceivedRequest&, HttpConnection&)>;
  // A whole answer to send, or nullopt to never answer (see Answering).
  using Answerer = std::function<std::optional<std::string>(const ReceivedRequest&)>;

  explicit LoopbackHttpServer(Handler handler, std::string address = "127.0.0.1");
  explicit LoopbackHttpServer(Answerer answer, std::string address = "127.0.0.1");
  ~LoopbackHttpServer();
  LoopbackHttpServer(const LoopbackHttpServer&) = delete;
  LoopbackHttpServer& operator=(const LoopbackHttpServer&) = delete;

  int port() const { return port_; }
  const std::string& address() const { return address_; }
  // http://<address>:<port><path>
  std::string Url(std::string_view path = "") const;
  std::vector<ReceivedRequest> requests() const;
  // Waits (on a condition variable) until at least `n` requests were received; false on timeout.
  bool WaitForRequests(size_t n, std::chrono::milliseconds timeout);

 private:
  void Run();
  bool Read(int fd, ReceivedRequest* req);

  Handler handler_;
  std::string address_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<ReceivedRequest> requests_;
  std::thread thread_;
};

// The handler for an Answerer: sends its answer, or holds the connection until the client goes.
LoopbackHttpServer::Handler Answering(LoopbackHttpServer::Answerer answer);

// A whole HTTP/1.1 answer: status line, `headers` ("Name: value"), Content-Length (unless told
// not to: the body then runs until the connection closes), Connection: close, the body.
std::string HttpResponse(int status, std::string_view reason, const std::vector<std::string>& headers,
                         std::string_view body, bool with_content_length = true);

// A loopback port that was free a moment ago (bind port 0, read it, close): nothing listens there
// (a refused connection), or a server told to listen on it; 0 on failure.
int FreeLoopbackPort();

}  // namespace cairn::test_support
