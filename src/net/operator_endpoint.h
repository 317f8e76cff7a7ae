// OperatorEndpoint: an HTTP endpoint the operator configured (an LLM provider's chat completions,
// an embedder's /embeddings), never one a client chose: the one way cairn's OpenAI-compatible
// clients build their requests, pool their connections and keep their API key out of errors.
//
// - NewRequest: a POST of a JSON body to the URL with `Authorization: Bearer <key>` (when there is
//   a key), any address (OutboundPolicy::Unrestricted) and the environment's proxies.
// - Lease: a kept-alive HttpConnection of the pool (or a new one), given back when the lease ends;
//   at most `max_idle` wait idle.
// - Redact: the text with every occurrence of the API key replaced by "***"; every message built
//   from what the endpoint answered goes through it (an endpoint or proxy may echo the key).
// Thread-safe.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "net/http_fetch.h"

namespace cairn::net {

class OperatorEndpoint {
 public:
  OperatorEndpoint(std::string url, std::string api_key, size_t max_idle = 64);

  const std::string& url() const { return url_; }
  const std::string& api_key() const { return api_key_; }

  HttpFetchRequest NewRequest(std::string body) const;
  std::string Redact(std::string text) const;

  class Lease {
   public:
    explicit Lease(const OperatorEndpoint& endpoint);
    ~Lease();
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    HttpConnection& connection() { return connection_; }

   private:
    const OperatorEndpoint& endpoint_;
    HttpConnection connection_;
  };

 private:
  std::string url_;
  std::string api_key_;
  size_t max_idle_;
  mutable std::mutex mu_;
  mutable std::vector<HttpConnection> idle_;
};

}  // namespace cairn::net
