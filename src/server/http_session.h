// One HTTP/1.1 connection (internal header): reads a request header, checks its framing
// (http_framing.h: 400 and close when ambiguous), reads the body, dispatches the request through
// the router (inline, on the worker pool, or asynchronously), writes the response (headers only for HEAD), and
// repeats while keep-alive holds. All of a session's socket work runs on its I/O thread (one I/O context per thread).
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <chrono>
#include <memory>
#include <optional>

#include "server/http_types.h"
#include "server/server_context.h"

namespace cairn::server {

class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  // `slot` counts the connection while it is open (empty for a connection refused at once).
  HttpSession(boost::asio::ip::tcp::socket&& socket, ServerContext& ctx, ConnectionSlot slot);
  // Serves requests until the connection closes.
  void Start();
  // Answers `refusal` (e.g. 503 over --max-connections) without reading a request, then closes.
  void Refuse(Status refusal);

 private:
  void ReadHeader();
  void OnHeader(boost::beast::error_code ec);
  void ReadBody();
  void OnBody(boost::beast::error_code ec);
  // Answers a request the parser refused (too large, malformed); closes afterwards.
  void RefuseRequest(boost::beast::error_code ec);
  void Dispatch(HttpRequest request, bool keep_alive);
  // Runs a kAsync route's handler: inline for a body of at most kInlineAsyncBodyBytes, on the
  // worker pool for a larger one (parsing it takes time). Its Reply sends the answer.
  void DispatchAsync(const Route* route, HttpRequest request, bool keep_alive);
  class AsyncAnswer;
  // Writes `response`; `route` (null if none matched) labels its metrics; `counted` says whether
  // it answers a request counted in flight.
  void Send(HttpResponse response, bool keep_alive, const Route* route, bool counted);
  // Hands the connection to an SseStream (the response of an event-stream route).
  void StartEventStream(HttpResponse response, const Route* route, bool counted);
  void Close();

  boost::beast::tcp_stream stream_;
  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  ServerContext& ctx_;
  ConnectionSlot slot_;  // handed on with the socket (event stream, lingering close)
  std::chrono::steady_clock::time_point started_;
  bool head_ = false;  // the request being answered is a HEAD: its response carries no body bytes
};

}  // namespace cairn::server
