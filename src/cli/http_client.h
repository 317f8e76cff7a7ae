// HttpClient: the one outbound-HTTP seam of the client commands.
//
// The commands talk to an HttpClient, not to libcurl, so their request building and error
// reporting are unit-tested with a scripted fake; CurlHttpClient (curl_http_client.h) is the real one.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace cairn::cli {

struct HttpRequest {
  std::string method;  // "GET", "POST", "PATCH", "DELETE"
  std::string url;     // absolute, already percent-encoded
  std::vector<std::pair<std::string, std::string>> headers;
  std::optional<std::string> body;  // sent with Content-Type: application/json when present
};

struct HttpReply {
  int status = 0;
  // Response headers in arrival order; names lower-cased so lookups need not care about case.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  // The value of the first header named `name` (lower-case), if any.
  std::optional<std::string> Header(std::string_view name) const {
    for (const auto& [key, value] : headers) {
      if (key == name) return value;
    }
    return std::nullopt;
  }
};

class HttpClient {
 public:
  virtual ~HttpClient() = default;
  // Performs one request. Any HTTP status, 4xx and 5xx included, is a successful HttpReply. An
  // error Status means no complete reply arrived: kUnavailable (cannot connect, connection lost,
  // timed out) or kResourceExhausted (the reply exceeded the client's size bound). Messages name
  // the URL.
  virtual Result<HttpReply> Send(const HttpRequest& request) = 0;
};

class StopSignal;  // stop_signal.h

// What a streamed reply is handed to, as it arrives.
struct StreamCallbacks {
  // The status line and headers of a 2xx reply (the body follows). Returning false ends the
  // transfer. May be empty.
  std::function<bool(const HttpReply& head)> on_open;
  // A piece of a 2xx reply's body, of any size and split anywhere. Returning false ends the
  // transfer.
  std::function<bool(std::string_view chunk)> on_data;
};

// StreamingHttpClient: the seam for a reply that does not end (`GET /events/stream`), beside
// HttpClient; CurlStreamClient (curl_http_client.h) is the real one.
class StreamingHttpClient {
 public:
  virtual ~StreamingHttpClient() = default;
  // Sends `request` and hands a 2xx reply's body to `callbacks` while it arrives, until the
  // server ends it, a callback returns false, or `stop` (may be null) is requested. Returns the
  // reply's status and headers, with the (bounded) body of a non-2xx reply, which is collected
  // rather than streamed; `body` is empty for a 2xx. An error Status means the reply did not end
  // normally: kUnavailable (cannot connect, connection lost, also after data was delivered).
  // A transfer ended by a callback or by `stop` is not an error.
  virtual Result<HttpReply> Stream(const HttpRequest& request, const StreamCallbacks& callbacks,
                                   StopSignal* stop) = 0;
};

}  // namespace cairn::cli
