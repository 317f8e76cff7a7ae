// http_request_fuzz: bytes from a client socket through what HttpSession does with them: Beast's
// request_parser with the server's limits, fed the way async_read_header/async_read feed it from
// a flat_buffer, requests read one after another on a keep-alive connection; each request turned
// into an HttpRequest, matched by the Router against the server's routes, and given to the
// request-support helpers every handler calls (request_support.h).
//
// Input: byte 0 chooses the limits (the defaults, or the smallest the settings allow) and the size
// of the reads; the rest is what the client sent, then end of stream.
//
// Properties, besides no sanitizer report:
//   - framing does not depend on how the bytes arrive: the whole stream at once and the same stream
//     in small reads give the same requests (method, target, fields, body), the same errors and the
//     same leftover bytes — the request boundaries of a keep-alive connection;
//   - the parser makes progress (no request that neither completes, fails nor consumes input);
//   - a routed request has the route's method and one non-empty parameter per placeholder;
//     otherwise the error is 404, or 405 with an Allow list;
//   - what the helpers accept is within their documented bounds.
#include <boost/asio/buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/json_util.h"
#include "fuzz_check.h"
#include "known_findings.h"
#include "request_target.h"
#include "model/limits.h"
#include "server/request_support.h"
#include "server/router.h"

namespace {
namespace http = boost::beast::http;
using cairn::server::HttpRequest;

constexpr size_t kMaxRequestsPerConnection = 4;

// What the server is configured with: its defaults, or the smallest values serve_settings allows.
struct Limits {
  uint32_t header_bytes;
  uint64_t body_bytes;
};
constexpr Limits kServerDefaults{16 * 1024, 2 * 1024 * 1024};
constexpr Limits kSmallestAllowed{1024, 1024};

// One request as the parser left it, or the error that ended the connection.
struct Parsed {
  boost::beast::error_code ec;
  bool done = false;
  bool keep_alive = false;
  std::string method, target, body;
  std::vector<std::pair<std::string, std::string>> fields;
  std::optional<uint64_t> content_length;
  bool chunked = false;
  size_t header_bytes = 0;

  bool operator==(const Parsed&) const = default;
};

// The client's bytes, handed out `read_size` at a time as a socket would, then end of stream.
class Connection {
 public:
  Connection(std::string_view bytes, size_t read_size) : bytes_(bytes), read_size_(read_size) {}
  // Appends the next read to `buffer`; false at end of stream.
  bool Read(std::string& buffer) {
    if (bytes_.empty()) return false;
    size_t n = std::min(read_size_, bytes_.size());
    buffer.append(bytes_.substr(0, n));
    bytes_.remove_prefix(n);
    return true;
  }
  size_t unread() const { return bytes_.size(); }
  size_t read_size() const { return read_size_; }

 private:
  std::string_view bytes_;
  size_t read_size_;
};

// What a connection holds in memory is bounded by the limits: bytes the parser has not consumed
// yet stay under header limit + body limit (plus the read in progress). Checked only for small
// reads, where the buffer is what a slow client makes the server keep.
void CheckBuffered(const http::request_parser<http::string_body>& parser, const std::string& buffer, size_t read_size,
                   const Limits& limits) {
  if (read_size > 64 || buffer.size() <= limits.header_bytes + limits.body_bytes + read_size) return;
  if (cairn::fuzz::KnownFinding(cairn::fuzz::kUnboundedChunkLines, parser.is_header_done() && parser.chunked())) return;
  FUZZ_CHECK(false, std::to_string(buffer.size()) + " bytes buffered and not consumed");
}

// One request off `conn`, as HttpSession::ReadHeader/ReadBody get it: `buffer` is the session's
// flat_buffer (bytes read but not yet consumed), kept across requests of the connection.
Parsed ReadRequest(Connection& conn, std::string& buffer, const Limits& limits) {
  http::request_parser<http::string_body> parser;
  parser.header_limit(limits.header_bytes);
  parser.body_limit(limits.body_bytes);
  Parsed out;
  // Like Beast's read_some_op: parse what is buffered; on need_more, read; at end of stream,
  // put_eof if the parser has seen something, else end_of_stream.
  int stalls = 0;  // successful puts in a row that consumed nothing (one happens after the header)
  size_t consumed = 0;
  while (!parser.is_done()) {
    boost::beast::error_code ec;
    if (!buffer.empty()) {
      size_t used = parser.put(boost::asio::buffer(buffer), ec);
      FUZZ_CHECK(used <= buffer.size(), "parser consumed more than it was given");
      buffer.erase(0, used);
      consumed += used;
      if (parser.is_header_done() && out.header_bytes == 0) out.header_bytes = consumed;
      if (ec == http::error::need_more) CheckBuffered(parser, buffer, conn.read_size(), limits);
      if (!ec) {
        stalls = used == 0 ? stalls + 1 : 0;
        FUZZ_CHECK(stalls < 3, "parser makes no progress on buffered input");
        continue;
      }
      if (ec != http::error::need_more) {
        out.ec = ec;
        return out;
      }
    }
    if (!conn.Read(buffer)) {
      if (parser.got_some()) {
        parser.put_eof(ec);
        out.ec = ec;
        if (!ec) FUZZ_CHECK(parser.is_done(), "put_eof succeeded on an unfinished request");
      } else {
        out.ec = http::error::end_of_stream;
      }
      if (out.ec) return out;
    }
  }
  auto& message = parser.get();
  out.done = true;
  out.keep_alive = message.keep_alive();
  out.method = std::string(message.method_string());
  out.target = std::string(message.target());
  out.body = message.body();
  for (const auto& field : message) out.fields.emplace_back(field.name_string(), field.value());
  if (auto length = parser.content_length()) out.content_length = *length;
  out.chunked = parser.chunked();
  FUZZ_CHECK(out.body.size() <= limits.body_bytes, "a body over body_limit was accepted");
  // Beast applies header_limit to the request line and to the fields separately (F6), so twice
  // the limit is the bound that holds.
  FUZZ_CHECK(out.header_bytes <= 2 * static_cast<size_t>(limits.header_bytes), "a header over twice header_limit");
  FUZZ_CHECK(!out.content_length || out.body.size() == *out.content_length, "body length differs from Content-Length");
  return out;
}

// Every request of the connection, while keep-alive holds; the last entry carries the error, if
// any. `leftover` receives what was never consumed.
std::vector<Parsed> ReadConnection(std::string_view bytes, size_t read_size, const Limits& limits, size_t& leftover) {
  Connection conn(bytes, read_size);
  std::string buffer;
  std::vector<Parsed> requests;
  while (requests.size() < kMaxRequestsPerConnection) {
    requests.push_back(ReadRequest(conn, buffer, limits));
    if (!requests.back().done || !requests.back().keep_alive) break;
  }
  leftover = buffer.size() + conn.unread();
  return requests;
}

// The same requests, and an error at the same place. Which error may differ: Beast parses the
// request line as soon as it has one, so a bad line is "bad version" when it arrives whole and
// "partial message" when the stream ends before the header does (a 400 or a silent close).
enum class Framing { kSame, kDifferent, kKnownFinding };

Framing CompareFraming(const std::vector<Parsed>& a, const std::vector<Parsed>& b, const Limits& limits) {
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    const Parsed& done = a[i].done ? a[i] : b[i];
    const Parsed& failed = a[i].done ? b[i] : a[i];
    if (cairn::fuzz::KnownFinding(cairn::fuzz::kHeaderLimitSlack, done.done && !failed.done &&
                                                                      failed.ec == http::error::header_limit &&
                                                                      done.header_bytes > limits.header_bytes)) {
      return Framing::kKnownFinding;  // the rest of the connection differs from here on
    }
  }
  if (a.size() != b.size()) return Framing::kDifferent;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].done != b[i].done || (a[i].done && !(a[i] == b[i]))) return Framing::kDifferent;
  }
  return Framing::kSame;
}

// "GET /x (2 body bytes) | error: bad method" for failure reports.
std::string Describe(const std::vector<Parsed>& requests) {
  std::string out;
  for (const Parsed& p : requests) {
    if (!out.empty()) out += " | ";
    out += p.done ? p.method + " " + p.target + " (" + std::to_string(p.body.size()) + " body bytes)"
                  : "error: " + p.ec.message();
  }
  return out;
}

// HttpSession's ToHttpRequest: the decoded target (request_target.h), lower-cased header names.
std::optional<HttpRequest> ToHttpRequest(const Parsed& parsed) {
  HttpRequest request;
  request.method = parsed.method;
  if (!cairn::fuzz::DecodeTarget(parsed.target, request)) return std::nullopt;
  for (const auto& [name, value] : parsed.fields) {
    std::string lower = name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    request.headers.emplace_back(std::move(lower), value);
  }
  request.body = parsed.body;
  return request;
}

// The server's routes (the router.Add calls of src/server), with handlers that are never called.
const cairn::server::Router& ServerRoutes() {
  static const cairn::server::Router router = [] {
    cairn::server::Router r;
    const char* routes[][2] = {
        {"POST", "/breadcrumbs"}, {"GET", "/breadcrumbs"}, {"GET", "/breadcrumbs/{id}"},
        {"GET", "/breadcrumbs/{id}/full"}, {"GET", "/breadcrumbs/{id}/history"}, {"PATCH", "/breadcrumbs/{id}"},
        {"DELETE", "/breadcrumbs/{id}"}, {"GET", "/events/stream"}, {"POST", "/subscriptions/selectors"},
        {"GET", "/subscriptions/selectors"}, {"GET", "/subscriptions/selectors/{id}"},
        {"DELETE", "/subscriptions/selectors/{id}"}, {"POST", "/webhooks"}, {"GET", "/webhooks"},
        {"GET", "/webhooks/{id}"}, {"PATCH", "/webhooks/{id}"}, {"DELETE", "/webhooks/{id}"}, {"GET", "/dlq"},
        {"GET", "/dlq/{id}"}, {"POST", "/dlq/{id}/retry"}, {"DELETE", "/dlq/{id}"}, {"POST", "/sessions"},
        {"GET", "/sessions"}, {"POST", "/sessions/messages"}, {"GET", "/sessions/{id}"}, {"PATCH", "/sessions/{id}"},
        {"POST", "/sessions/{id}/messages"}, {"GET", "/sessions/{id}/messages"}, {"GET", "/sessions/{id}/events"},
        {"GET", "/executions"}, {"GET", "/executions/{id}"}, {"GET", "/executions/{id}/snapshots"},
        {"POST", "/executions/{id}/cancel"}, {"POST", "/executions/{id}/input"},
        {"POST", "/executions/{id}/resume"}, {"GET", "/snapshots/{id}"}, {"GET", "/health"}, {"GET", "/metrics"}};
    for (const auto& [method, pattern] : routes) {
      r.Add(method, pattern, cairn::server::Dispatch::kInline,
            [](const HttpRequest&) -> cairn::Result<cairn::server::HttpResponse> { return cairn::Status::Internal("unused"); });
    }
    return r;
  }();
  return router;
}

bool PrintableAscii(std::string_view text) {
  for (char c : text) {
    if (c < 0x20 || c >= 0x7F) return false;
  }
  return true;
}

void CheckRouting(const HttpRequest& request) {
  auto match = ServerRoutes().Find(request.method, request.path);
  if (match.route) {
    // HEAD is answered by the GET route (without the body); every other method by its own.
    FUZZ_CHECK(match.route->method == request.method || (request.method == "HEAD" && match.route->method == "GET"),
               "routed to another method: " + request.method + " -> " + match.route->method);
    size_t placeholders = 0;
    for (const auto& segment : match.route->segments) placeholders += !segment.empty() && segment.front() == '{';
    FUZZ_CHECK(match.params.size() == placeholders, "wrong parameter count for " + request.path);
    for (const auto& param : match.params) {
      FUZZ_CHECK(!param.empty() && param.find('/') == std::string::npos, "bad path parameter in " + request.path);
    }
    return;
  }
  if (match.allow.empty()) {
    FUZZ_CHECK(match.error.code() == cairn::StatusCode::kNotFound, match.error.ToString());
  } else {
    FUZZ_CHECK(match.error.code() == cairn::StatusCode::kMethodNotAllowed, match.error.ToString());
  }
}

void CheckHelpers(const HttpRequest& request, const cairn::model::Limits& limits) {
  namespace server = cairn::server;
  if (auto body = server::ParseJsonBody(request, limits); body.ok()) {
    FUZZ_CHECK(cairn::JsonDepth(*body) <= limits.max_json_depth, "a body deeper than the limit was accepted");
  }
  if (auto ctx = server::WriteContextFrom(request); ctx.ok()) {
    FUZZ_CHECK(!ctx->actor.empty() && ctx->actor.size() <= 128 && PrintableAscii(ctx->actor), "bad actor accepted");
  }
  if (auto version = server::ParseIfMatch(request); version.ok() && version->has_value()) {
    FUZZ_CHECK(**version >= 1, "If-Match version below 1 accepted");
  }
  if (auto key = server::ParseIdempotencyKey(request); key.ok()) {
    FUZZ_CHECK(key->size() <= 255 && PrintableAscii(*key), "bad Idempotency-Key accepted");
  }
  if (auto query = server::ParseListQuery(request, limits); query.ok()) {
    FUZZ_CHECK(query->limit >= 1 && query->limit <= limits.max_list_limit, "list limit out of range");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const Limits& limits = (data[0] & 1) ? kSmallestAllowed : kServerDefaults;
  const size_t read_size = 1 + ((data[0] >> 1) & 63);
  const std::string_view bytes = cairn::fuzz::AsText(data + 1, size - 1);

  size_t leftover_whole = 0, leftover_split = 0;
  std::vector<Parsed> whole = ReadConnection(bytes, bytes.size() + 1, limits, leftover_whole);
  std::vector<Parsed> split = ReadConnection(bytes, read_size, limits, leftover_split);
  const Framing framing = CompareFraming(whole, split, limits);
  FUZZ_CHECK(framing != Framing::kDifferent, "with reads of " + std::to_string(read_size) + " bytes: " + Describe(split) +
                                            "; at once: " + Describe(whole));
  FUZZ_CHECK(framing == Framing::kKnownFinding || !whole.back().done || leftover_whole == leftover_split,
             "request boundaries differ with the read size");

  const cairn::model::Limits model_limits;
  for (const Parsed& parsed : whole) {
    if (!parsed.done) break;
    std::optional<HttpRequest> request = ToHttpRequest(parsed);
    if (!request) continue;  // the server answers 400
    CheckRouting(*request);
    CheckHelpers(*request, model_limits);
  }
  return 0;
}
