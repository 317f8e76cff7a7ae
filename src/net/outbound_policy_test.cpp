#include "net/outbound_policy.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

namespace cairn::net {
namespace {

IpAddress Ip(std::string_view text) {
  std::optional<IpAddress> ip = IpAddress::Parse(text);
  EXPECT_TRUE(ip.has_value()) << text;
  return ip.value_or(IpAddress{});
}

OutboundPolicy Allowing(std::string_view list) {
  Result<OutboundPolicy> policy = OutboundPolicy::Parse(list);
  EXPECT_TRUE(policy.ok()) << list << ": " << policy.status().ToString();
  return policy.ok() ? *policy : OutboundPolicy{};
}

struct RefusedCase {
  const char* address;
  const char* reason;  // a piece of the message
};

// Every refused range, at its edges where an edge is easy to get wrong, in both families and in
// the IPv6 shapes that carry an IPv4 address.
TEST(OutboundPolicyTest, RefusesEverySpecialRange) {
  const RefusedCase cases[] = {
      {"0.0.0.0", "unspecified"},
      {"0.255.255.255", "unspecified"},
      {"10.0.0.0", "private address (10.0.0.0/8)"},
      {"10.255.255.255", "private"},
      {"100.64.0.0", "carrier-grade NAT"},
      {"100.127.255.255", "carrier-grade NAT"},
      {"100.100.100.200", "carrier-grade NAT"},  // a cloud metadata endpoint
      {"127.0.0.1", "loopback address (127.0.0.0/8)"},
      {"127.255.255.254", "loopback"},
      {"169.254.169.254", "link-local (cloud metadata) address (169.254.0.0/16)"},
      {"169.254.0.1", "link-local"},
      {"172.16.0.1", "private address (172.16.0.0/12)"},
      {"172.31.255.255", "private"},
      {"192.0.0.192", "IETF protocol assignment"},  // another cloud's metadata endpoint
      {"192.0.2.1", "documentation"},
      {"192.88.99.1", "6to4 relay"},
      {"192.168.1.1", "private address (192.168.0.0/16)"},
      {"198.18.0.1", "benchmarking"},
      {"198.19.255.255", "benchmarking"},
      {"198.51.100.7", "documentation"},
      {"203.0.113.9", "documentation"},
      {"224.0.0.1", "multicast"},
      {"239.255.255.255", "multicast"},
      {"240.0.0.1", "reserved"},
      {"255.255.255.255", "broadcast"},
      // IPv6.
      {"::", "unspecified"},
      {"::1", "loopback address (::1/128)"},
      {"fc00::1", "unique local"},
      {"fd00:ec2::254", "unique local"},  // AWS's IPv6 metadata endpoint
      {"fe80::1", "link-local address (fe80::/10)"},
      {"febf:ffff::1", "link-local"},
      {"fec0::1", "site-local"},
      {"ff02::1", "multicast"},
      {"2001:db8::1", "documentation"},
      {"3fff::1", "documentation"},
      {"2001::1", "Teredo"},
      {"2001:2::1", "IETF protocol assignment"},
      {"64:ff9b:1::1", "local-use NAT64"},
      {"100::1", "reserved"},     // discard-only
      {"::127.0.0.1", "reserved"},  // IPv4-compatible (deprecated)
      {"5f00::1", "reserved"},
      // IPv4-mapped: the IPv4 address decides.
      {"::ffff:127.0.0.1", "loopback address (127.0.0.0/8)"},
      {"::ffff:169.254.169.254", "link-local"},
      {"::ffff:0.0.0.0", "unspecified"},
      {"::ffff:10.1.2.3", "private"},
      // NAT64 and 6to4 carry an IPv4 address the packet is translated to.
      {"64:ff9b::7f00:1", "loopback address (127.0.0.1 in 127.0.0.0/8, through NAT64 64:ff9b::/96)"},
      {"64:ff9b::a9fe:a9fe", "link-local"},
      {"2002:7f00:1::", "loopback address (127.0.0.1 in 127.0.0.0/8, through 6to4 2002::/16)"},
      {"2002:c0a8:101::1", "private"},
  };
  OutboundPolicy policy;
  for (const RefusedCase& c : cases) {
    Status s = policy.Check(Ip(c.address));
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.address;
    EXPECT_NE(s.message().find(c.reason), std::string::npos) << c.address << ": " << s.message();
    EXPECT_NE(s.message().find("--allow-private-network"), std::string::npos) << s.message();
    EXPECT_EQ(s.message().rfind("destination " + std::string(c.address) + " is ", 0), 0u) << s.message();
  }
  // Printed as the standard text form whatever the spelling.
  EXPECT_EQ(policy.Check(Ip("::ffff:7f00:1")).message().rfind("destination ::ffff:127.0.0.1 is a loopback address", 0), 0u);
  EXPECT_EQ(policy.Check(Ip("127.0.0.1")).message(),
            "destination 127.0.0.1 is a loopback address (127.0.0.0/8); allow it with --allow-private-network");
}

TEST(OutboundPolicyTest, PublicAddressesPass) {
  OutboundPolicy policy;
  for (const char* address :
       {"8.8.8.8", "1.1.1.1", "9.255.255.255", "11.0.0.0", "100.63.255.255", "100.128.0.0", "126.255.255.255",
        "128.0.0.0", "169.253.255.255", "169.255.0.0", "172.15.255.255", "172.32.0.0", "192.0.1.0", "192.167.255.255",
        "192.169.0.0", "198.17.255.255", "198.20.0.0", "223.255.255.255", "2606:4700::1111", "2a00:1450::1",
        "2001:4860:4860::8888", "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1"}) {
    EXPECT_TRUE(policy.Check(Ip(address)).ok()) << address << ": " << policy.Check(Ip(address)).message();
  }
}

TEST(OutboundPolicyTest, TheAllowListOpensExactlyItsRanges) {
  OutboundPolicy policy = Allowing(" 127.0.0.0/8 , ,10.1.0.0/16,fd00::/8,::1");
  for (const char* address : {"127.0.0.1", "127.1.2.3", "::ffff:127.0.0.1", "64:ff9b::7f00:1", "2002:7f00:1::",
                              "10.1.255.255", "fd12::1", "::1"}) {
    EXPECT_TRUE(policy.Check(Ip(address)).ok()) << address;
  }
  for (const char* address : {"10.2.0.1", "169.254.169.254", "fc00::1", "::", "0.0.0.0", "192.168.0.1"}) {
    EXPECT_FALSE(policy.Check(Ip(address)).ok()) << address;
  }
  EXPECT_EQ(policy.Describe(), "127.0.0.0/8, 10.1.0.0/16, fd00::/8, ::1/128");

  // One host only: its neighbours stay refused.
  OutboundPolicy one = Allowing("127.0.0.2/32");
  EXPECT_TRUE(one.Check(Ip("127.0.0.2")).ok());
  EXPECT_FALSE(one.Check(Ip("127.0.0.1")).ok());
  EXPECT_FALSE(one.Check(Ip("127.0.0.3")).ok());

  // Everything, spelled as ranges.
  OutboundPolicy all = Allowing("0.0.0.0/0,::/0");
  for (const char* address : {"127.0.0.1", "::1", "169.254.169.254", "fe80::1", "64:ff9b::7f00:1"}) {
    EXPECT_TRUE(all.Check(Ip(address)).ok()) << address;
  }
  EXPECT_TRUE(OutboundPolicy::Unrestricted().Check(Ip("169.254.169.254")).ok());
  EXPECT_EQ(OutboundPolicy{}.Describe(), "no special-purpose address");
}

TEST(OutboundPolicyTest, BadAllowListsNameTheEntry) {
  for (const char* bad : {"127.0.0.1/8", "10.0.0.0/33", "::1/129", "localhost", "10.0.0.0/", "10.0.0.0/x",
                          "010.0.0.1", "0x7f000001", "127.1", "[::1]", "fe80::1%eth0", "10.0.0.0/8/8", "*",
                          "10.0.0.0/-1", "fd00::1/8"}) {
    Result<OutboundPolicy> policy = OutboundPolicy::Parse(bad);
    ASSERT_FALSE(policy.ok()) << bad;
    EXPECT_EQ(policy.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(policy.status().message().find(std::string("'") + bad + "'"), std::string::npos)
        << policy.status().message();
    EXPECT_NE(policy.status().message().find("--allow-private-network"), std::string::npos);
  }
  EXPECT_NE(OutboundPolicy::Parse("127.0.0.1/8").status().message().find("did you mean 127.0.0.0/8?"),
            std::string::npos);
  EXPECT_NE(OutboundPolicy::Parse("fd00::1/8").status().message().find("did you mean fd00::/8?"), std::string::npos);
  EXPECT_TRUE(OutboundPolicy::Parse("").ok());
  EXPECT_TRUE(OutboundPolicy::Parse(" , ").ok());
}

TEST(OutboundPolicyTest, SocketAddressesOfBothFamilies) {
  sockaddr_in v4{};
  v4.sin_family = AF_INET;
  v4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  auto from_v4 = IpAddress::FromSockaddr(reinterpret_cast<sockaddr*>(&v4), sizeof v4);
  ASSERT_TRUE(from_v4.has_value());
  EXPECT_EQ(from_v4->ToString(), "127.0.0.1");
  sockaddr_in6 v6{};
  v6.sin6_family = AF_INET6;
  inet_pton(AF_INET6, "::ffff:169.254.169.254", &v6.sin6_addr);
  auto from_v6 = IpAddress::FromSockaddr(reinterpret_cast<sockaddr*>(&v6), sizeof v6);
  ASSERT_TRUE(from_v6.has_value());
  EXPECT_EQ(from_v6->ToString(), "::ffff:169.254.169.254");
  EXPECT_TRUE(from_v6->is_v4());
  EXPECT_FALSE(OutboundPolicy{}.Check(*from_v6).ok());
  EXPECT_FALSE(IpAddress::FromSockaddr(reinterpret_cast<sockaddr*>(&v6), sizeof v4).has_value());  // too short
  sockaddr unix_like{};
  unix_like.sa_family = AF_UNIX;
  EXPECT_FALSE(IpAddress::FromSockaddr(&unix_like, sizeof unix_like).has_value());
}

// The write-time check: literal hosts only, judged as curl will connect.
TEST(OutboundPolicyTest, LiteralHostsOfUrls) {
  OutboundPolicy strict;
  for (const char* url :
       {"http://127.0.0.1:8080/hook", "https://127.0.0.1/", "http://[::1]:9000/", "http://[::ffff:127.0.0.1]/",
        "http://169.254.169.254/latest/meta-data/", "http://0.0.0.0:8081/", "http://[::]/", "http://10.0.0.5/x",
        "http://192.168.1.1/", "http://[fd00::1]/", "http://[fe80::1]/", "http://224.0.0.1/",
        "http://[64:ff9b::7f00:1]/", "http://0x7f000001/", "http://2130706433/", "http://127.1/",
        "http://0177.0.0.1/", "http://127.0.0.1./", "HTTP://LOCALHOST:8080/", "http://localhost./",
        "http://api.localhost/", "http://a.b.LocalHost/"}) {
    Status s = strict.CheckUrlHost(url);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << url;
    EXPECT_NE(s.message().find("--allow-private-network"), std::string::npos) << url << ": " << s.message();
  }
  EXPECT_EQ(strict.CheckUrlHost("http://localhost:1/").message(),
            "destination host localhost is a loopback name; allow it with --allow-private-network");
  // Names other than localhost are judged when connecting; unparsable URLs by their own checks.
  for (const char* url : {"https://example.com/", "http://8.8.8.8/", "http://[2606:4700::1111]/",
                          "http://localhost.example.com/", "http://mylocalhost/", "not a url", "ftp://127.0.0.1/"}) {
    EXPECT_TRUE(strict.CheckUrlHost(url).ok()) << url;
  }
  OutboundPolicy loopback = Allowing("127.0.0.0/8");
  EXPECT_TRUE(loopback.CheckUrlHost("http://127.0.0.1:8080/").ok());
  EXPECT_TRUE(loopback.CheckUrlHost("http://localhost:8080/").ok());
  EXPECT_FALSE(loopback.CheckUrlHost("http://169.254.169.254/").ok());
  EXPECT_TRUE(Allowing("::1").CheckUrlHost("http://localhost/").ok());
  EXPECT_TRUE(OutboundPolicy::Unrestricted().CheckUrlHost("http://169.254.169.254/").ok());
}

}  // namespace
}  // namespace cairn::net
