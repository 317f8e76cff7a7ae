// OperatorEndpoint: an HTTP endpoint the operator configured (an LLM provider's chat completions,
// an embedder's /embeddings), never one a client chose: the one way cairn's OpenAI-compatible
// clients build their requests, pool their connections and keep their API key out of errors.
//
// - NewRequest: a POST of a JSON body to the URL with `Authorization: Bearer <key>` (when there is
//   a key: the endpoint's, or one given for this call, e.g. a tenant's secret), any address
//   (OutboundPolicy::Unrestricted) and the environment's proxies.
// - Lease: a kept-alive HttpConnection of the pool (or a new one), given back when the lease ends;
//   at most `max_idle` wait idle.
// - Redact: the text with every form of the API key (base/secret_redactor.h) replaced by "***";
//   every message built from what the endpoint answered goes through it (an endpoint or proxy may
//   echo the key). redactor() is the same, for a caller that adds a per-call key to a copy.
// Thread-safe.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/secret_redactor.h"
#include "net/http_fetch.h"

namespace cairn::net {

class OperatorEndpoint {
 public:
  OperatorEndpoint(std::string url, std::string api_key, size_t max_idle = 64);

  const std::string& url() const { return url_; }
  const std::string& api_key() const { return api_key_; }

  // `api_key`: this call's key instead of the endpoint's (null: the endpoint's).
  HttpFetchRequest NewRequest(std::string body, const std::string* api_key = nullptr) const;
  std::string Redact(std::string text) const { return redact_(std::move(text)); }
  const SecretRedactor& redactor() const { return redact_; }

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
  SecretRedactor redact_;
  size_t max_idle_;
  mutable std::mutex mu_;
  mutable std::vector<HttpConnection> idle_;
};

}  // namespace cairn::net
