#include "net/operator_endpoint.h"

#include "net/outbound_policy.h"

namespace cairn::net {

OperatorEndpoint::OperatorEndpoint(std::string url, std::string api_key, size_t max_idle)
    : url_(std::move(url)), api_key_(std::move(api_key)), max_idle_(max_idle) {}

HttpFetchRequest OperatorEndpoint::NewRequest(std::string body) const {
  HttpFetchRequest request;
  request.method = "POST";
  request.url = url_;
  request.headers.emplace_back("Content-Type", "application/json");
  if (!api_key_.empty()) request.headers.emplace_back("Authorization", "Bearer " + api_key_);
  request.body = std::move(body);
  // The operator's endpoint, not a client's: any address, and the environment's proxies.
  static const auto kAnyAddress = std::make_shared<const OutboundPolicy>(OutboundPolicy::Unrestricted());
  request.policy = kAnyAddress;
  request.environment_proxy = true;
  return request;
}

std::string OperatorEndpoint::Redact(std::string text) const {
  if (api_key_.size() < 4) return text;
  for (size_t at = text.find(api_key_); at != std::string::npos; at = text.find(api_key_, at + 3)) {
    text.replace(at, api_key_.size(), "***");
  }
  return text;
}

OperatorEndpoint::Lease::Lease(const OperatorEndpoint& endpoint) : endpoint_(endpoint) {
  std::lock_guard lock(endpoint_.mu_);
  if (!endpoint_.idle_.empty()) {
    connection_ = std::move(endpoint_.idle_.back());
    endpoint_.idle_.pop_back();
  }
}

OperatorEndpoint::Lease::~Lease() {
  std::lock_guard lock(endpoint_.mu_);
  if (endpoint_.idle_.size() < endpoint_.max_idle_) endpoint_.idle_.push_back(std::move(connection_));
}

}  // namespace cairn::net
