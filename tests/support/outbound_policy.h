// An outbound address policy from its setting's text (net/outbound_policy.h), for tests that
// call loopback servers: Policy("127.0.0.0/8"). Header-only; the user links cairn_net.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string_view>

#include "net/outbound_policy.h"

namespace cairn::test_support {

inline std::shared_ptr<const net::OutboundPolicy> Policy(std::string_view allow_list) {
  Result<net::OutboundPolicy> policy = net::OutboundPolicy::Parse(allow_list);
  EXPECT_TRUE(policy.ok()) << policy.status().ToString();
  return std::make_shared<const net::OutboundPolicy>(policy.ok() ? *policy : net::OutboundPolicy{});
}

}  // namespace cairn::test_support
