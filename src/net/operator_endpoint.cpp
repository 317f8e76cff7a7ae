#include "net/operator_endpoint.h"

#include "net/outbound_policy.h"

namespace cairn::net {

OperatorEndpoint::OperatorEndpoint(std::string url, std::string api_key, size_t max_idle)
    : url_(std::move(url)), api_key_(std::move(api_key)), max_idle_(max_idle) {
  // Shorter keys would mask unrelated text (no real key is that short).
  if (api_key_.size() >= 4) redact_.Add(api_key_, "***");
}

HttpFetchRequest OperatorEndpoint::NewRequest(std::string body, const std::string* api_key) const {
  const std::string& key = api_key ? *api_key : api_key_;
  HttpFetchRequest request;
  request.method = "POST";
  request.url = url_;
  request.headers.emplace_back("Content-Type", "application/json");
  if (!key.empty()) request.headers.emplace_back("Authorization", "Bearer " + key);
  request.body = std::move(body);
  // The operator's endpoint, not a client's: any address, and the environment's proxies.
  static const auto kAnyAddress = std::make_shared<const OutboundPolicy>(OutboundPolicy::Unrestricted());
  request.policy = kAnyAddress;
  request.environment_proxy = true;
  return request;
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
