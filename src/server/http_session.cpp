#include "server/http_session.h"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/url/parse.hpp>
#include <atomic>
#include <cctype>

#include "base/log.h"
#include "server/error_response.h"
#include "server/http_framing.h"
#include "server/request_auth.h"
#include "server/sse_stream.h"

namespace cairn::server {
namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace {

constexpr auto kLingerTimeout = std::chrono::seconds(2);

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

Result<HttpRequest> ToHttpRequest(http::request<http::string_body>& message) {
  HttpRequest request;
  request.method = std::string(message.method_string());
  request.target = std::string(message.target());
  auto url = boost::urls::parse_origin_form(message.target());
  if (!url) return Status::InvalidArgument("malformed request target '" + request.target + "'");
  request.path = url->path();
  for (auto param : url->params()) request.query.emplace_back(param.key, param.value);
  for (const auto& field : message) request.headers.emplace_back(Lower(field.name_string()), field.value());
  request.body = std::move(message.body());
  return request;
}

HttpResponse Invoke(const Route& route, const HttpRequest& request) {
  try {
    auto result = route.handler(request);
    return result.ok() ? std::move(result).value() : ErrorResponse(result.status());
  } catch (const std::exception& e) {  // a handler bug must not take the server down
    // The path, not the target: the query may hold an access_token.
    CAIRN_LOG_ERROR("http: {} {} threw: {}", request.method, request.path, e.what());
    return ErrorResponse(Status::Internal("internal error"));
  }
}

// What a kAsync handler's reply builds, as Invoke() answers a handler's result.
HttpResponse Build(const Route& route, const ResponseBuilder& build) {
  try {
    auto result = build();
    return result.ok() ? std::move(result).value() : ErrorResponse(result.status());
  } catch (const std::exception& e) {
    CAIRN_LOG_ERROR("http: building the answer of {} {} threw: {}", route.method, route.pattern, e.what());
    return ErrorResponse(Status::Internal("internal error"));
  }
}

// Bodies up to this size are parsed on the I/O thread by a kAsync handler (tens of microseconds);
// larger ones go to the worker pool, so one large body does not hold up the thread's other
// connections.
constexpr size_t kInlineAsyncBodyBytes = 64 * 1024;

// A connection after its last answer: its socket (shut down for sending) and its slot.
struct Lingering {
  beast::tcp_stream stream;
  ConnectionSlot slot;
  std::array<char, 4096> scratch;
};

// Drains what the client still sends after a last answer, so closing does not reset the
// connection before the client has read the answer. Bounded by kLingerTimeout.
void Linger(std::shared_ptr<Lingering> lingering) {
  lingering->stream.async_read_some(boost::asio::buffer(lingering->scratch), [lingering](beast::error_code ec, size_t) {
    if (!ec) Linger(lingering);
  });
}

}  // namespace

namespace {

// What a connection may hold of bytes read and not yet parsed. The parser moves body bytes out as
// they arrive, so only a header (twice its limit: Beast bounds the start line and the fields
// separately) and one line of chunked framing need to fit; without a bound, chunk extensions and
// trailers, which no parser limit counts, grew the buffer until the idle timeout.
size_t ReadBufferLimit(const HttpServerOptions& options) { return 2 * options.max_header_bytes + 64 * 1024; }

}  // namespace

HttpSession::HttpSession(boost::asio::ip::tcp::socket&& socket, ServerContext& ctx, ConnectionSlot slot)
    : stream_(std::move(socket)), buffer_(ReadBufferLimit(ctx.options)), ctx_(ctx), slot_(std::move(slot)) {}

void HttpSession::Start() {
  boost::asio::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->ReadHeader(); });
}

void HttpSession::Refuse(Status refusal) {
  boost::asio::dispatch(stream_.get_executor(), [self = shared_from_this(), refusal = std::move(refusal)] {
    self->started_ = std::chrono::steady_clock::now();
    self->Send(ErrorResponse(refusal), false, nullptr, false);
  });
}

void HttpSession::ReadHeader() {
  parser_.emplace();
  head_ = false;
  parser_->header_limit(static_cast<uint32_t>(ctx_.options.max_header_bytes));
  parser_->body_limit(ctx_.options.max_body_bytes);
  stream_.expires_after(std::chrono::milliseconds(ctx_.options.idle_timeout_ms));
  http::async_read_header(stream_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, size_t) {
    self->OnHeader(ec);
  });
}

void HttpSession::OnHeader(beast::error_code ec) {
  if (ec) return RefuseRequest(ec);
  started_ = std::chrono::steady_clock::now();
  auto& header = parser_->get();
  head_ = header.method() == http::verb::head;
  RequestFraming framing;
  framing.version = header.version();
  for (const auto& field : header) {
    if (field.name() == http::field::transfer_encoding) framing.transfer_encoding.push_back(field.value());
    if (field.name() == http::field::content_length) framing.content_length.push_back(field.value());
  }
  // Before any body byte is read (or 100 Continue invites one); what follows cannot be trusted to
  // start the next request, so the answer closes the connection.
  if (Status framed = CheckRequestFraming(framing); !framed.ok()) {
    return Send(ErrorResponse(framed), false, nullptr, false);
  }
  auto expect = header[http::field::expect];
  if (Lower(expect) != "100-continue") return ReadBody();
  // Clients such as curl wait for this before sending a large body.
  auto interim = std::make_shared<http::response<http::empty_body>>(http::status::continue_, 11);
  http::async_write(stream_, *interim, [self = shared_from_this(), interim](beast::error_code write_ec, size_t) {
    if (write_ec) return self->Close();
    self->ReadBody();
  });
}

void HttpSession::ReadBody() {
  stream_.expires_after(std::chrono::milliseconds(ctx_.options.idle_timeout_ms));
  http::async_read(stream_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, size_t) {
    self->OnBody(ec);
  });
}

void HttpSession::OnBody(beast::error_code ec) {
  if (ec) return RefuseRequest(ec);
  auto& message = parser_->get();
  bool keep_alive = message.keep_alive();
  auto request = ToHttpRequest(message);
  if (!request.ok()) return Send(ErrorResponse(request.status()), false, nullptr, false);
  ctx_.BeginRequest();
  Dispatch(std::move(request).value(), keep_alive);
}

void HttpSession::RefuseRequest(beast::error_code ec) {
  Status refusal;
  if (ec == http::error::body_limit) {
    refusal = Status::PayloadTooLarge("request body exceeds " + std::to_string(ctx_.options.max_body_bytes) + " bytes");
  } else if (ec == http::error::buffer_overflow) {
    refusal = Status::InvalidArgument("a line of the request's framing (a chunk extension or trailer) exceeds " +
                                      std::to_string(ReadBufferLimit(ctx_.options)) + " bytes");
  } else if (ec == http::error::header_limit) {
    refusal = Status(StatusCode::kHeaderTooLarge,
                     "request headers exceed " + std::to_string(ctx_.options.max_header_bytes) + " bytes");
  } else if (ec.category() == http::make_error_code(http::error::bad_target).category() &&
             ec != http::error::end_of_stream && ec != http::error::partial_message) {
    refusal = Status::InvalidArgument("malformed HTTP request: " + ec.message());
  } else {
    return Close();  // the peer went away, timed out or closed between requests
  }
  started_ = std::chrono::steady_clock::now();
  // A refused request may not be parsed to its end. Its start line is parsed once the whole header
  // has arrived (even if a limit then refuses it); an incomplete header is still in the buffer.
  std::string_view unparsed(static_cast<const char*>(buffer_.data().data()), buffer_.data().size());
  head_ = parser_->get().method() == http::verb::head || unparsed.starts_with("HEAD ");
  Send(ErrorResponse(refusal), false, nullptr, false);
}

void HttpSession::Dispatch(HttpRequest request, bool keep_alive) {
  Router::Match match = ctx_.router.Find(request.method, request.path);
  if (!match.route) {
    HttpResponse response = ErrorResponse(match.error);
    if (!match.allow.empty()) response.headers.emplace_back("Allow", match.allow);
    return Send(std::move(response), keep_alive, nullptr, true);
  }
  request.path_params = std::move(match.params);
  const Route* route = match.route;
  if (auto refusal = AuthenticateRequest(request, route->access, ctx_.options.guards)) {
    return Send(std::move(*refusal), keep_alive, route, true);
  }
  if (auto tenant = ActingTenant(request, ctx_.options.guards)) ctx_.request_metrics.RecordTenant(*tenant);
  if (route->dispatch == Dispatch::kInline) return Send(Invoke(*route, request), keep_alive, route, true);
  if (route->dispatch == Dispatch::kAsync) return DispatchAsync(route, std::move(request), keep_alive);
  ctx_.workers.Submit([self = shared_from_this(), route, request = std::move(request), keep_alive] {
    HttpResponse response = Invoke(*route, request);
    boost::asio::post(self->stream_.get_executor(), [self, route, keep_alive, response = std::move(response)]() mutable {
      self->Send(std::move(response), keep_alive, route, true);
    });
  });
}

// The answer of one kAsync request. Sent once: by the first reply, or, when every copy of the
// Reply is dropped without one (a handler bug), as a 500 when the last copy goes.
class HttpSession::AsyncAnswer {
 public:
  // `build_on_workers`: the answer is built on the worker pool (the request's body was large, and
  // so will be its answer), then written on the connection's thread.
  AsyncAnswer(std::shared_ptr<HttpSession> session, const Route* route, bool keep_alive, bool build_on_workers)
      : session_(std::move(session)), route_(route), keep_alive_(keep_alive), build_on_workers_(build_on_workers) {
    session_->ctx_.BeginAsyncAnswer();
  }
  AsyncAnswer(const AsyncAnswer&) = delete;
  AsyncAnswer& operator=(const AsyncAnswer&) = delete;
  ~AsyncAnswer() {
    if (!answered_.exchange(true)) {
      CAIRN_LOG_ERROR("http: {} {} was dropped without an answer", route_->method, route_->pattern);
      Post([]() -> Result<HttpResponse> { return Status::Internal("internal error"); });
    }
    // The connection goes first: once the count is zero the server may destroy its I/O context.
    ServerContext& ctx = session_->ctx_;
    session_.reset();
    ctx.EndAsyncAnswer();
  }

  void Answer(ResponseBuilder build) {
    if (answered_.exchange(true)) return;  // a second reply is a handler bug: the first one stands
    Post(std::move(build));
  }

 private:
  void Post(ResponseBuilder build) {
    auto send = [session = session_, route = route_, keep_alive = keep_alive_](HttpResponse response) {
      boost::asio::post(session->stream_.get_executor(), [session, route, keep_alive, response = std::move(response)]() mutable {
        session->Send(std::move(response), keep_alive, route, true);
      });
    };
    if (build_on_workers_) {
      // Refused only once the server stopped: the connection is then closed unanswered.
      session_->ctx_.workers.Submit([send, route = route_, build = std::move(build)] { send(Build(*route, build)); });
      return;
    }
    boost::asio::post(session_->stream_.get_executor(),
                      [session = session_, route = route_, keep_alive = keep_alive_, build = std::move(build)] {
                        session->Send(Build(*route, build), keep_alive, route, true);
                      });
  }

  std::shared_ptr<HttpSession> session_;
  const Route* route_;
  bool keep_alive_;
  bool build_on_workers_;
  std::atomic<bool> answered_{false};
};

void HttpSession::DispatchAsync(const Route* route, HttpRequest request, bool keep_alive) {
  const bool large = request.body.size() > kInlineAsyncBodyBytes;
  auto answer = std::make_shared<AsyncAnswer>(shared_from_this(), route, keep_alive, large);
  auto run = [route, answer](const HttpRequest& req) {
    Reply reply = [answer](ResponseBuilder build) { answer->Answer(std::move(build)); };
    try {
      route->async_handler(req, std::move(reply));
    } catch (const std::exception& e) {  // a handler bug must not take the server down
      CAIRN_LOG_ERROR("http: {} {} threw: {}", req.method, req.path, e.what());
      answer->Answer([]() -> Result<HttpResponse> { return Status::Internal("internal error"); });
    }
  };
  if (!large) return run(request);
  ctx_.workers.Submit([run = std::move(run), request = std::move(request)] { run(request); });
}

void HttpSession::Send(HttpResponse response, bool keep_alive, const Route* route, bool counted) {
  bool stream_head = false;
  if (response.event_stream) {
    if (!head_) return StartEventStream(std::move(response), route, counted);
    // HEAD of an event stream: the stream's header, and no stream. A stream has no length, so no
    // Content-Length; the connection closes as it would after a stream.
    response = HttpResponse::Json(200, "");
    response.content_type = "text/event-stream";
    response.headers.emplace_back("Cache-Control", "no-cache");
    keep_alive = false;
    stream_head = true;
  }
  keep_alive = keep_alive && !ctx_.stopping.load();
  auto message = std::make_shared<http::response<http::string_body>>(static_cast<http::status>(response.status), 11);
  message->set(http::field::server, "cairn");
  if (!response.content_type.empty()) message->set(http::field::content_type, response.content_type);
  for (const auto& [name, value] : response.headers) message->set(name, value);
  message->keep_alive(keep_alive);
  message->body() = std::move(response.body);
  if (!stream_head) message->prepare_payload();
  // The one place that keeps body bytes out of every answer to HEAD, whatever its status
  // (RFC 9110 §9.3.2): the header says what a GET would have had (Content-Length included), and
  // the serializer writes the body it holds, now none. A body here would be read by a kept-alive
  // client as the start of the next response.
  if (head_) message->body().clear();

  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  ctx_.request_metrics.Record(route, response.status, seconds);

  stream_.expires_after(std::chrono::milliseconds(ctx_.options.idle_timeout_ms));
  http::async_write(stream_, *message, [self = shared_from_this(), message, keep_alive, counted](beast::error_code ec, size_t) {
    if (counted) self->ctx_.EndRequest();
    if (ec) return self->Close();
    if (!keep_alive) {
      self->stream_.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_send, ec);
      auto lingering = std::make_shared<Lingering>(Lingering{std::move(self->stream_), std::move(self->slot_), {}});
      lingering->stream.expires_after(kLingerTimeout);
      return Linger(std::move(lingering));
    }
    self->ReadHeader();
  });
}

void HttpSession::StartEventStream(HttpResponse response, const Route* route, bool counted) {
  auto spec = std::dynamic_pointer_cast<const SseSpec>(response.event_stream);
  if (!spec || !ctx_.bus) {
    return Send(ErrorResponse(Status::Internal("event streams are not available")), false, route, counted);
  }
  ctx_.request_metrics.Record(route, 200, 0.0);
  if (counted) ctx_.EndRequest();  // a stream is not an in-flight request: shutdown does not wait for it
  std::make_shared<SseStream>(std::move(stream_), ctx_, std::move(spec), std::move(slot_))->Start();
}

void HttpSession::Close() {
  beast::error_code ec;
  stream_.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_both, ec);
  stream_.close();
}

}  // namespace cairn::server
