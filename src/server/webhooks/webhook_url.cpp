#include "server/webhooks/webhook_url.h"

#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>

namespace cairn::server::webhooks {

Status ValidateWebhookUrl(std::string_view url) {
  if (url.empty()) return Status::Validation("url", "must not be empty");
  if (url.size() > kMaxWebhookUrlBytes) {
    return Status::Validation("url", "longer than " + std::to_string(kMaxWebhookUrlBytes) + " bytes");
  }
  auto parsed = boost::urls::parse_absolute_uri(url);
  if (!parsed) return Status::Validation("url", "not an absolute URL");
  const boost::urls::url_view& u = *parsed;
  if (u.scheme_id() != boost::urls::scheme::http && u.scheme_id() != boost::urls::scheme::https) {
    return Status::Validation("url", "scheme must be http or https");
  }
  if (!u.has_authority() || u.encoded_host().empty()) return Status::Validation("url", "must have a host");
  if (u.has_userinfo()) return Status::Validation("url", "must not contain user info; use the secret");
  if (u.has_port()) {
    // Checked by hand: port_number() wraps values above 65535.
    std::string_view port = u.port();
    long value = 0;
    for (char c : port) value = value * 10 + (c - '0');  // the grammar allows digits only
    if (port.empty() || port.size() > 5 || value < 1 || value > 65535) return Status::Validation("url", "bad port");
  }
  for (char c : url) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return Status::Validation("url", "must not contain spaces or control characters");
  }
  return Status::Ok();
}

Status CheckWebhookDestination(std::string_view url, const net::OutboundPolicy& policy) {
  Status allowed = policy.CheckUrlHost(url);
  if (allowed.ok()) return allowed;
  return Status::InvalidArgument("url: " + allowed.message());
}

}  // namespace cairn::server::webhooks
