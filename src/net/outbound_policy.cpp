#include "net/outbound_policy.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <charconv>
#include <cstring>

#include "net/curl_url.h"

namespace cairn::net {
namespace {

constexpr std::array<uint8_t, 12> kMappedPrefix = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

// Where an IPv6 range carries an IPv4 address that the packet really goes to.
enum class Embedded { kNone, kNat64, k6to4 };

struct RangeSpec {
  const char* cidr;
  const char* what;
  Embedded embedded = Embedded::kNone;
};

// Order matters: the first match names the reason (255.255.255.255 before 240.0.0.0/4).
constexpr RangeSpec kV4Ranges[] = {
    {"0.0.0.0/8", "an unspecified (\"this network\") address"},
    {"10.0.0.0/8", "a private address"},
    {"100.64.0.0/10", "a shared (carrier-grade NAT) address"},
    {"127.0.0.0/8", "a loopback address"},
    {"169.254.0.0/16", "a link-local (cloud metadata) address"},
    {"172.16.0.0/12", "a private address"},
    {"192.0.0.0/24", "an IETF protocol assignment address"},
    {"192.0.2.0/24", "a documentation address"},
    {"192.88.99.0/24", "a 6to4 relay anycast address"},
    {"192.168.0.0/16", "a private address"},
    {"198.18.0.0/15", "a benchmarking address"},
    {"198.51.100.0/24", "a documentation address"},
    {"203.0.113.0/24", "a documentation address"},
    {"224.0.0.0/4", "a multicast address"},
    {"255.255.255.255/32", "the broadcast address"},
    {"240.0.0.0/4", "a reserved address"},
};

constexpr RangeSpec kV6Ranges[] = {
    {"::/128", "the unspecified address"},
    {"::1/128", "a loopback address"},
    {"64:ff9b::/96", "NAT64", Embedded::kNat64},
    {"64:ff9b:1::/48", "a local-use NAT64 address"},
    {"2001::/23", "an IETF protocol assignment address (Teredo and others)"},
    {"2001:db8::/32", "a documentation address"},
    {"2002::/16", "6to4", Embedded::k6to4},
    {"3fff::/20", "a documentation address"},
    {"fc00::/7", "a private (unique local) address"},
    {"fe80::/10", "a link-local address"},
    {"fec0::/10", "a site-local address"},
    {"ff00::/8", "a multicast address"},
};

struct Range {
  Cidr cidr;
  const char* what;
  Embedded embedded;
};

std::vector<Range> BuildRanges(const RangeSpec* begin, const RangeSpec* end) {
  std::vector<Range> out;
  for (const RangeSpec* spec = begin; spec != end; ++spec) {
    // The table is constant and covered by tests; a typo in it fails every test at once.
    out.push_back(Range{Cidr::Parse(spec->cidr).value(), spec->what, spec->embedded});
  }
  return out;
}

const std::vector<Range>& V4Ranges() {
  static const std::vector<Range> ranges = BuildRanges(std::begin(kV4Ranges), std::end(kV4Ranges));
  return ranges;
}

const std::vector<Range>& V6Ranges() {
  static const std::vector<Range> ranges = BuildRanges(std::begin(kV6Ranges), std::end(kV6Ranges));
  return ranges;
}

const Cidr& GlobalUnicast() {
  static const Cidr cidr = Cidr::Parse("2000::/3").value();
  return cidr;
}

// Why an address is refused (absent: it is not special).
struct Finding {
  std::string what;
  std::string range;
  std::optional<IpAddress> embedded;  // the IPv4 address inside a NAT64 or 6to4 address
  std::string via;                    // "NAT64 64:ff9b::/96"
};

std::optional<Finding> ClassifyV4(const IpAddress& address) {
  for (const Range& range : V4Ranges()) {
    if (range.cidr.Contains(address)) return Finding{range.what, range.cidr.ToString(), std::nullopt, ""};
  }
  return std::nullopt;
}

uint32_t ReadV4(const std::array<uint8_t, 16>& bytes, size_t at) {
  return (uint32_t{bytes[at]} << 24) | (uint32_t{bytes[at + 1]} << 16) | (uint32_t{bytes[at + 2]} << 8) | bytes[at + 3];
}

std::optional<Finding> Classify(const IpAddress& address) {
  if (address.is_v4()) return ClassifyV4(address);
  for (const Range& range : V6Ranges()) {
    if (!range.cidr.Contains(address)) continue;
    if (range.embedded == Embedded::kNone) return Finding{range.what, range.cidr.ToString(), std::nullopt, ""};
    IpAddress inner = IpAddress::FromV4(ReadV4(address.bytes(), range.embedded == Embedded::kNat64 ? 12 : 2));
    std::optional<Finding> finding = ClassifyV4(inner);
    if (!finding) return std::nullopt;  // a public IPv4 address reached through NAT64 or 6to4
    finding->embedded = inner;
    finding->via = std::string(range.what) + " " + range.cidr.ToString();
    return finding;
  }
  if (!GlobalUnicast().Contains(address)) {
    return Finding{"a reserved address", "outside the global unicast range 2000::/3", std::nullopt, ""};
  }
  return std::nullopt;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string AllowHint() { return "; allow it with " + std::string(kAllowPrivateNetworkFlag); }

}  // namespace

// ---- IpAddress ----

std::optional<IpAddress> IpAddress::Parse(std::string_view text) {
  if (text.empty() || text.size() >= INET6_ADDRSTRLEN) return std::nullopt;
  std::string copy(text);
  IpAddress out;
  if (copy.find(':') == std::string::npos) {
    in_addr v4{};
    // inet_pton takes the dotted quad only: no octal, hex or short forms that mean other hosts.
    if (inet_pton(AF_INET, copy.c_str(), &v4) != 1) return std::nullopt;
    return FromV4(ntohl(v4.s_addr));
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, copy.c_str(), &v6) != 1) return std::nullopt;
  std::memcpy(out.bytes_.data(), v6.s6_addr, 16);
  out.written_as_v6_ = true;
  return out;
}

std::optional<IpAddress> IpAddress::FromSockaddr(const sockaddr* addr, size_t length) {
  if (addr == nullptr) return std::nullopt;
  if (addr->sa_family == AF_INET && length >= sizeof(sockaddr_in)) {
    sockaddr_in v4{};
    std::memcpy(&v4, addr, sizeof v4);
    return FromV4(ntohl(v4.sin_addr.s_addr));
  }
  if (addr->sa_family == AF_INET6 && length >= sizeof(sockaddr_in6)) {
    sockaddr_in6 v6{};
    std::memcpy(&v6, addr, sizeof v6);
    IpAddress out;
    std::memcpy(out.bytes_.data(), v6.sin6_addr.s6_addr, 16);
    out.written_as_v6_ = true;
    return out;
  }
  return std::nullopt;
}

IpAddress IpAddress::FromV4(uint32_t v4) {
  IpAddress out;
  std::copy(kMappedPrefix.begin(), kMappedPrefix.end(), out.bytes_.begin());
  out.bytes_[12] = static_cast<uint8_t>(v4 >> 24);
  out.bytes_[13] = static_cast<uint8_t>(v4 >> 16);
  out.bytes_[14] = static_cast<uint8_t>(v4 >> 8);
  out.bytes_[15] = static_cast<uint8_t>(v4);
  return out;
}

IpAddress IpAddress::FromBytes(const std::array<uint8_t, 16>& bytes, bool written_as_v6) {
  IpAddress out;
  out.bytes_ = bytes;
  out.written_as_v6_ = written_as_v6 || !out.is_v4();
  return out;
}

bool IpAddress::is_v4() const { return std::equal(kMappedPrefix.begin(), kMappedPrefix.end(), bytes_.begin()); }

uint32_t IpAddress::v4() const { return ReadV4(bytes_, 12); }

std::string IpAddress::ToString() const {
  char text[INET6_ADDRSTRLEN] = {0};
  if (is_v4() && !written_as_v6_) {
    in_addr v4{};
    v4.s_addr = htonl(this->v4());
    inet_ntop(AF_INET, &v4, text, sizeof text);
  } else {
    in6_addr v6{};
    std::memcpy(v6.s6_addr, bytes_.data(), 16);
    inet_ntop(AF_INET6, &v6, text, sizeof text);
  }
  return text;
}

// ---- Cidr ----

Result<Cidr> Cidr::Parse(std::string_view text) {
  auto invalid = [&](const std::string& why) {
    return Status::InvalidArgument("'" + std::string(text) + "' is not a CIDR range (" + why +
                                   "; write it like 10.0.0.0/8, 127.0.0.1 or fd00::/8)");
  };
  size_t slash = text.find('/');
  std::optional<IpAddress> base = IpAddress::Parse(text.substr(0, slash));
  if (!base) return invalid("not an IPv4 or IPv6 address");
  bool v4 = text.substr(0, slash).find(':') == std::string_view::npos;
  int max = v4 ? 32 : 128;
  int length = max;
  if (slash != std::string_view::npos) {
    std::string_view digits = text.substr(slash + 1);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), length);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || length < 0 || length > max) {
      return invalid("the prefix length must be 0 to " + std::to_string(max));
    }
  }
  Cidr out{*base, v4 ? 96 + length : length};
  // Host bits past the prefix are a typo more often than not: refuse and say what was meant.
  std::array<uint8_t, 16> masked = base->bytes();
  for (int bit = out.prefix_length; bit < 128; ++bit) masked[bit / 8] &= static_cast<uint8_t>(~(0x80 >> (bit % 8)));
  if (masked != base->bytes()) {
    IpAddress meant = IpAddress::FromBytes(masked, !v4);
    return Status::InvalidArgument("'" + std::string(text) + "' has bits set past the prefix: did you mean " +
                                   meant.ToString() + "/" + std::to_string(length) + "?");
  }
  return out;
}

bool Cidr::Contains(const IpAddress& address) const {
  const auto& a = address.bytes();
  const auto& b = base.bytes();
  int full = prefix_length / 8;
  if (!std::equal(a.begin(), a.begin() + full, b.begin())) return false;
  int rest = prefix_length % 8;
  if (rest == 0) return true;
  auto mask = static_cast<uint8_t>(0xff << (8 - rest));
  return (a[full] & mask) == (b[full] & mask);
}

std::string Cidr::ToString() const {
  bool v4 = base.is_v4() && !base.written_as_v6();
  return base.ToString() + "/" + std::to_string(v4 ? prefix_length - 96 : prefix_length);
}

// ---- OutboundPolicy ----

Result<OutboundPolicy> OutboundPolicy::Parse(std::string_view allow_list) {
  OutboundPolicy policy;
  size_t start = 0;
  while (start <= allow_list.size()) {
    size_t comma = allow_list.find(',', start);
    std::string_view entry =
        Trim(allow_list.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (!entry.empty()) {
      Result<Cidr> cidr = Cidr::Parse(entry);
      if (!cidr.ok()) return Status::InvalidArgument(std::string(kAllowPrivateNetworkFlag) + ": " + cidr.status().message());
      policy.allowed_.push_back(*cidr);
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return policy;
}

OutboundPolicy OutboundPolicy::Unrestricted() {
  OutboundPolicy policy;
  policy.unrestricted_ = true;
  return policy;
}

bool OutboundPolicy::Allowed(const IpAddress& address) const {
  if (unrestricted_) return true;
  for (const Cidr& cidr : allowed_) {
    if (cidr.Contains(address)) return true;
  }
  return false;
}

Status OutboundPolicy::Check(const IpAddress& address) const {
  if (Allowed(address)) return Status::Ok();
  std::optional<Finding> finding = Classify(address);
  if (!finding) return Status::Ok();
  if (finding->embedded) {
    if (Allowed(*finding->embedded)) return Status::Ok();
    return Status::InvalidArgument("destination " + address.ToString() + " is " + finding->what + " (" +
                                   finding->embedded->ToString() + " in " + finding->range + ", through " +
                                   finding->via + ")" + AllowHint());
  }
  return Status::InvalidArgument("destination " + address.ToString() + " is " + finding->what + " (" + finding->range +
                                 ")" + AllowHint());
}

Status OutboundPolicy::CheckUrlHost(std::string_view url) const {
  if (unrestricted_) return Status::Ok();
  Result<ParsedUrl> parsed = ParseUrl(url);
  if (!parsed.ok()) return Status::Ok();
  std::string_view host = parsed->host;
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (std::optional<IpAddress> address = IpAddress::Parse(host)) return Check(*address);
  if (host == "localhost" || host.ends_with(".localhost")) {
    if (Allowed(*IpAddress::Parse("127.0.0.1")) || Allowed(*IpAddress::Parse("::1"))) return Status::Ok();
    return Status::InvalidArgument("destination host " + std::string(host) + " is a loopback name" + AllowHint());
  }
  return Status::Ok();
}

std::string OutboundPolicy::Describe() const {
  if (unrestricted_) return "every address (unrestricted)";
  if (allowed_.empty()) return "no special-purpose address";
  std::string out;
  for (const Cidr& cidr : allowed_) out += (out.empty() ? "" : ", ") + cidr.ToString();
  return out;
}

}  // namespace cairn::net
