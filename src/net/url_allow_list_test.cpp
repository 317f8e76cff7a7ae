#include "net/url_allow_list.h"

#include <gtest/gtest.h>

namespace cairn::net {
namespace {

struct AllowCase {
  const char* url;
  std::vector<std::string> allow_list;
  bool allowed;
};

TEST(UrlAllowedTest, Table) {
  const std::vector<std::string> v1 = {"https://api.example.com/v1/"};
  const std::vector<AllowCase> cases = {
      // Safe by default; "*" is every http(s) URL and nothing else.
      {"https://api.example.com/", {}, false},
      {"https://anything.net/x", {"*"}, true},
      {"http://10.0.0.1:9/", {"*"}, true},
      {"ftp://example.com/", {"*"}, false},
      {"file:///etc/passwd", {"*"}, false},
      {"javascript:alert(1)", {"*"}, false},
      {"gopher://example.com/", {"*"}, false},
      {"api.example.com/v1", {"*"}, false},
      {"http:/api.example.com/", {"*"}, false},
      {"https://bücher.example/", {"*"}, false},  // IDN hosts must be given in punycode
      {"", {"*"}, false},
      // URL prefixes: scheme, host, effective port and path prefix.
      {"https://api.example.com/v1/users", v1, true},
      {"HTTPS://API.Example.COM/v1/users", v1, true},
      {"https://api.example.com:443/v1/users?q=1", v1, true},
      {"https://api.example.com/v2/users", v1, false},
      {"https://api.example.com/v1", v1, false},
      {"http://api.example.com/v1/users", v1, false},
      {"https://api.example.com:8443/v1/users", v1, false},
      {"https://api.example.com/v1/../admin", v1, false},
      {"https://api.example.com/v1/%2e%2e/admin", v1, false},
      {"https://api.example.com/v1/a%2Fb", v1, false},
      {"https://api.example.com/v1", {"https://api.example.com/v1"}, true},
      {"https://api.example.com/v1/x", {"https://api.example.com/v1"}, true},
      {"https://api.example.com/v1beta", {"https://api.example.com/v1"}, false},
      {"https://api.example.com/anything", {"https://api.example.com"}, true},
      // The host checked is the host contacted.
      {"https://api.example.com.evil.net/v1/", v1, false},
      {"https://api.example.com.evil.net/", {"api.example.com"}, false},
      {"https://api.example.com@evil.net/v1/", v1, false},
      {"https://api.example.com@evil.net/", {"api.example.com"}, false},
      {"https://api.example.com:443@evil.net/", {"*.example.com"}, false},
      {"https://evil.net\\@api.example.com/", {"api.example.com"}, false},
      {"https://evil.net#@api.example.com/", {"api.example.com"}, false},
      {"https://evil.net?@api.example.com/", {"api.example.com"}, false},
      {"https://user:pw@api.example.com/v1/", {"api.example.com"}, true},
      {"http://API.Example.COM./", {"api.example.com"}, true},
      // Host patterns: either scheme, any port unless one is named.
      {"http://localhost:8080/x", {"localhost:8080"}, true},
      {"http://localhost:8081/x", {"localhost:8080"}, false},
      {"http://localhost/x", {"localhost:8080"}, false},
      {"http://localhost/x", {"localhost:80"}, true},
      {"https://127.0.0.1:9999/", {"127.0.0.1"}, true},
      {"http://127.0.0.2/", {"127.0.0.1"}, false},
      {"http://0x7f000001/", {"127.0.0.1"}, true},  // curl connects to 127.0.0.1 for this
      {"http://[::1]:8080/", {"[::1]:8080"}, true},
      {"http://[::1]:8080/", {"[::1]"}, true},
      {"http://[::1]:8081/", {"[::1]:8080"}, false},
      // Wildcard subdomains: any depth, never the bare domain or a look-alike.
      {"https://a.example.com/", {"*.example.com"}, true},
      {"https://a.b.example.com/", {"*.example.com"}, true},
      {"https://example.com/", {"*.example.com"}, false},
      {"https://badexample.com/", {"*.example.com"}, false},
      {"https://example.com.evil.net/", {"*.example.com"}, false},
      {"https://a.example.com/", {"*.example.com:443"}, true},
      {"https://a.example.com:8443/", {"*.example.com:443"}, false},
      {"http://1.0.0.1/", {"*.0.0.1"}, false},
      // Entries that are not a prefix or a host pattern match nothing.
      {"https://example.com/x", {"example.com/x"}, false},
      {"https://example.com/x", {"https://u@example.com/"}, false},
      {"https://example.com/x", {"https://example.com/?q"}, false},
      {"https://example.com/x", {""}, false},
      {"https://example.com/x", {"*example.com"}, false},
      {"https://a.b.com/x", {"*.*.com"}, false},
      {"https://example.com/x", {"ftp://example.com/"}, false},
      // Any matching entry is enough.
      {"https://b.com/x/y", {"a.com", "https://b.com/x/"}, true},
      {"https://c.com/x/y", {"a.com", "https://b.com/x/"}, false},
  };
  for (const AllowCase& c : cases) {
    std::string list;
    for (const std::string& e : c.allow_list) list += "'" + e + "' ";
    EXPECT_EQ(UrlAllowed(c.url, c.allow_list), c.allowed) << c.url << " with [ " << list << "]";
  }
}

}  // namespace
}  // namespace cairn::net
