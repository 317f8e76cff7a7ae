// OutboundPolicy: which addresses a client-defined destination may reach (DESIGN.md §8, trust
// boundaries). A webhook, an http tool, the http_request built-in (and later MCP over HTTP) send
// requests wherever a client points them; without this, a client could make the server call its
// own loopback services, the private network behind it or the cloud metadata endpoint
// (169.254.169.254) and read the answer back.
//
// The policy refuses the special-purpose ranges below unless the operator lists them in
// --allow-private-network (comma-separated CIDRs, default empty). It is enforced on the resolved
// address of every connection HttpFetch opens (http_fetch.h), redirect hops included, so a DNS
// name that resolves to 127.0.0.1 is refused like the literal; CheckUrlHost() additionally refuses
// a literal host when a definition is written, so the mistake is reported at once.
//
// Refused, first match names the reason (IANA special-purpose registries, RFC 6890 and later):
//   IPv4                                        IPv6
//   0.0.0.0/8        unspecified ("this network")  ::/128          unspecified
//   10.0.0.0/8       private (RFC 1918)            ::1/128         loopback
//   100.64.0.0/10    shared (carrier-grade NAT)    ::ffff:0:0/96   IPv4-mapped: judged as the IPv4 address
//   127.0.0.0/8      loopback                      64:ff9b::/96    NAT64: judged as the embedded IPv4 address
//   169.254.0.0/16   link-local (cloud metadata)   64:ff9b:1::/48  local-use NAT64
//   172.16.0.0/12    private (RFC 1918)            2001::/23       IETF protocol assignments (Teredo, ...)
//   192.0.0.0/24     IETF protocol assignments     2001:db8::/32   documentation
//   192.0.2.0/24     documentation                 2002::/16       6to4: judged as the embedded IPv4 address
//   192.88.99.0/24   6to4 relay anycast            3fff::/20       documentation
//   192.168.0.0/16   private (RFC 1918)            fc00::/7        private (unique local)
//   198.18.0.0/15    benchmarking                  fe80::/10       link-local
//   198.51.100.0/24  documentation                 fec0::/10       site-local (deprecated)
//   203.0.113.0/24   documentation                 ff00::/8        multicast
//   224.0.0.0/4      multicast                     anything else outside 2000::/3 (global unicast):
//   255.255.255.255  broadcast                     reserved (::/96 IPv4-compatible, 100::/64, ...)
//   240.0.0.0/4      reserved
// An embedded IPv4 address that is public passes (64:ff9b::808:808 is 8.8.8.8 through NAT64).
//
// Thread-safe: immutable after construction; one instance is shared by every user.
#pragma once

#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace cairn::net {

// The operator setting that widens the policy, named in every refusal. Declared as a setting in
// src/app/serve_settings.cpp ("allow_private_network").
inline constexpr std::string_view kAllowPrivateNetworkFlag = "--allow-private-network";

// An IPv4 or IPv6 address. IPv4 is held IPv4-mapped (::ffff:a.b.c.d), so one table and one
// allow-list cover both families and ::ffff:127.0.0.1 is 127.0.0.1 everywhere.
class IpAddress {
 public:
  // "127.0.0.1" (dotted quad only) or "::1" (no brackets, no zone); nullopt for anything else.
  static std::optional<IpAddress> Parse(std::string_view text);
  // An AF_INET or AF_INET6 socket address; nullopt for other families or a short length.
  static std::optional<IpAddress> FromSockaddr(const sockaddr* addr, size_t length);

  bool is_v4() const;  // IPv4 or IPv4-mapped
  // The IPv4 address as the last four bytes (valid when is_v4()).
  uint32_t v4() const;
  const std::array<uint8_t, 16>& bytes() const { return bytes_; }
  // As it came: dotted quad for IPv4, RFC 5952 text for IPv6 (a mapped one as "::ffff:127.0.0.1").
  std::string ToString() const;

  bool written_as_v6() const { return written_as_v6_; }

  static IpAddress FromV4(uint32_t v4);
  // `written_as_v6` only decides how an IPv4-mapped address prints.
  static IpAddress FromBytes(const std::array<uint8_t, 16>& bytes, bool written_as_v6);

 private:
  std::array<uint8_t, 16> bytes_{};
  bool written_as_v6_ = false;  // only for ToString()
};

// An address range: `prefix_length` bits of `base` (over the 16-byte form; an IPv4 /8 is /104).
struct Cidr {
  IpAddress base;
  int prefix_length = 0;

  // "10.0.0.0/8", "fd00::/8", or a single address ("10.1.2.3" is /32, "::1" is /128). Host bits
  // beyond the prefix are refused ("127.0.0.1/8": did you mean 127.0.0.0/8?). kInvalidArgument.
  static Result<Cidr> Parse(std::string_view text);
  bool Contains(const IpAddress& address) const;
  std::string ToString() const;  // in the family it was written in
};

class OutboundPolicy {
 public:
  // The default: every special range refused, nothing listed.
  OutboundPolicy() = default;

  // `allow_list`: comma-separated CIDRs (spaces around entries and empty entries ignored; empty
  // allows nothing special). kInvalidArgument naming the entry and the flag.
  static Result<OutboundPolicy> Parse(std::string_view allow_list);

  // Allows every address: for operator destinations (their URLs come from settings, not from
  // clients), and nothing else.
  static OutboundPolicy Unrestricted();

  // Ok when `address` is not in a refused range, or is in an allowed one. Otherwise
  // kInvalidArgument: "destination 127.0.0.1 is a loopback address (127.0.0.0/8); allow it with
  // --allow-private-network".
  Status Check(const IpAddress& address) const;

  // The write-time check of a client-defined URL. kInvalidArgument when its literal host is
  // refused: an IP address in a refused range (curl's parser normalises "0x7f000001" and "127.1"
  // to 127.0.0.1), or the name "localhost" or "*.localhost" (loopback by definition, RFC 6761)
  // unless 127.0.0.1 or ::1 is allowed. Ok for any other name (checked when connecting) and for
  // a URL that does not parse (the caller's URL validation and HttpFetch report those).
  Status CheckUrlHost(std::string_view url) const;

  bool unrestricted() const { return unrestricted_; }
  const std::vector<Cidr>& allowed() const { return allowed_; }
  // "nothing special allowed", "127.0.0.0/8, ::1/128" or "everything (unrestricted)", for logs.
  std::string Describe() const;

 private:
  bool Allowed(const IpAddress& address) const;

  bool unrestricted_ = false;
  std::vector<Cidr> allowed_;
};

}  // namespace cairn::net
