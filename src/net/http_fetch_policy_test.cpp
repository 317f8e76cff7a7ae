// HttpFetch under the outbound address policy: what is refused at connect time (literal
// addresses, names resolving to them, redirect hops, proxies from the environment), with
// servers on loopback addresses standing in for the private network. Everything stays on
// 127.0.0.0/8; a policy that allows exactly one loopback address makes the others "private".
#include <gtest/gtest.h>

#include <cstdlib>

#include "net/http_fetch.h"
#include "support/loopback_http_server.h"
#include "support/outbound_policy.h"

namespace cairn::net {
namespace {

using namespace std::chrono_literals;
using test_support::Policy;
using test_support::ReceivedRequest;
using TestServer = test_support::LoopbackHttpServer;
using test_support::HttpResponse;

HttpFetchRequest Get(std::string url, std::shared_ptr<const OutboundPolicy> policy) {
  HttpFetchRequest request;
  request.url = std::move(url);
  request.timeout = 5s;
  request.policy = std::move(policy);
  return request;
}

TestServer::Answerer Ok() {
  return [](const ReceivedRequest&) { return HttpResponse(200, "OK", {}, "reached"); };
}

void ExpectRefused(const Result<HttpFetchResponse>& response, std::string_view starts_with) {
  ASSERT_FALSE(response.ok()) << "reached: " << response->body;
  EXPECT_EQ(response.status().code(), StatusCode::kInvalidArgument) << response.status().ToString();
  EXPECT_EQ(response.status().message().rfind(starts_with, 0), 0u) << response.status().message();
  EXPECT_NE(response.status().message().find("; allow it with --allow-private-network"), std::string::npos)
      << response.status().message();
}

TEST(HttpFetchPolicyTest, TheDefaultPolicyRefusesLoopbackWithoutSendingAnything) {
  TestServer server(Ok());
  // No policy given: the default, which refuses every special-purpose range.
  auto response = HttpFetch(Get(server.Url("/x"), nullptr));
  ExpectRefused(response, "destination 127.0.0.1 is a loopback address (127.0.0.0/8)");
  EXPECT_TRUE(server.requests().empty());
  ExpectRefused(HttpFetch(Get(server.Url("/x"), Policy(""))), "destination 127.0.0.1 is a loopback address");

  // The same server once its address is allowed, and for an operator destination.
  auto allowed = HttpFetch(Get(server.Url("/x"), Policy("127.0.0.1/32")));
  ASSERT_TRUE(allowed.ok()) << allowed.status().ToString();
  EXPECT_EQ(allowed->body, "reached");
  auto unrestricted =
      HttpFetch(Get(server.Url("/x"), std::make_shared<const OutboundPolicy>(OutboundPolicy::Unrestricted())));
  ASSERT_TRUE(unrestricted.ok()) << unrestricted.status().ToString();
  EXPECT_EQ(server.requests().size(), 2u);
}

TEST(HttpFetchPolicyTest, ANameIsJudgedByTheAddressItResolvesTo) {
  TestServer server(Ok());
  const std::string url = "http://localhost:" + std::to_string(server.port()) + "/by-name";
  auto refused = HttpFetch(Get(url, nullptr));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument) << refused.status().ToString();
  // localhost may resolve to 127.0.0.1, ::1 or both; the first refusal is reported.
  const std::string& message = refused.status().message();
  EXPECT_TRUE(message.starts_with("destination 127.0.0.1 is a loopback address") ||
              message.starts_with("destination ::1 is a loopback address"))
      << message;
  EXPECT_TRUE(server.requests().empty());

  auto allowed = HttpFetch(Get(url, Policy("127.0.0.0/8")));
  ASSERT_TRUE(allowed.ok()) << allowed.status().ToString();
  EXPECT_EQ(server.requests().size(), 1u);
}

// 0.0.0.0 and :: connect to the local host on Linux, and an IPv4-mapped IPv6 address is its IPv4
// address: none of them may pass as "not loopback", even when loopback itself is allowed.
TEST(HttpFetchPolicyTest, UnspecifiedAndMappedAddressesDoNotSlipThrough) {
  TestServer server(Ok());
  const std::string port = std::to_string(server.port());
  auto loopback_only = Policy("127.0.0.0/8");
  ExpectRefused(HttpFetch(Get("http://0.0.0.0:" + port + "/", loopback_only)),
                "destination 0.0.0.0 is an unspecified (\"this network\") address (0.0.0.0/8)");
  ExpectRefused(HttpFetch(Get("http://[::]:" + port + "/", loopback_only)),
                "destination :: is the unspecified address (::/128)");
  ExpectRefused(HttpFetch(Get("http://[::ffff:127.0.0.1]:" + port + "/", nullptr)),
                "destination ::ffff:127.0.0.1 is a loopback address (127.0.0.0/8)");
  ExpectRefused(HttpFetch(Get("http://[::ffff:169.254.169.254]/", loopback_only)),
                "destination ::ffff:169.254.169.254 is a link-local (cloud metadata) address");
  ExpectRefused(HttpFetch(Get("http://169.254.169.254/latest/meta-data/", loopback_only)),
                "destination 169.254.169.254 is a link-local (cloud metadata) address (169.254.0.0/16)");
  ExpectRefused(HttpFetch(Get("http://0x7f000001:" + port + "/", nullptr)), "destination 127.0.0.1 is a loopback");
  EXPECT_TRUE(server.requests().empty());
}

// A receiver the policy allows (127.0.0.2 only) redirects to one it does not (127.0.0.1): the
// hop is refused at its connect, the second server never hears of it.
TEST(HttpFetchPolicyTest, EveryRedirectHopIsChecked) {
  TestServer inside(Ok());  // 127.0.0.1: "the private network"
  const std::string inside_url = inside.Url("/secret");
  const std::string inside_by_name = "http://localhost:" + std::to_string(inside.port()) + "/secret";
  TestServer outside(
      [&](const ReceivedRequest& req) {
        if (req.target == "/to-address") return HttpResponse(302, "Found", {"Location: " + inside_url}, "");
        if (req.target == "/to-name") return HttpResponse(307, "Temporary Redirect", {"Location: " + inside_by_name}, "");
        if (req.target == "/to-self") return HttpResponse(302, "Found", {"Location: /done"}, "");
        return HttpResponse(200, "OK", {}, "outside");
      },
      "127.0.0.2");
  auto only_outside = Policy("127.0.0.2/32");

  HttpFetchRequest request = Get(outside.Url("/to-address"), only_outside);
  request.max_redirects = 3;
  ExpectRefused(HttpFetch(request), "destination 127.0.0.1 is a loopback address (127.0.0.0/8)");
  request.url = outside.Url("/to-name");
  auto by_name = HttpFetch(request);
  ASSERT_FALSE(by_name.ok());
  EXPECT_EQ(by_name.status().code(), StatusCode::kInvalidArgument) << by_name.status().ToString();
  EXPECT_TRUE(inside.requests().empty());

  // Hops within what is allowed are followed; with both allowed the redirect reaches inside.
  request.url = outside.Url("/to-self");
  auto same = HttpFetch(request);
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  EXPECT_EQ(same->body, "outside");
  request.url = outside.Url("/to-address");
  request.policy = Policy("127.0.0.0/8");
  auto followed = HttpFetch(request);
  ASSERT_TRUE(followed.ok()) << followed.status().ToString();
  EXPECT_EQ(followed->body, "reached");
  EXPECT_EQ(inside.requests().size(), 1u);
}

// Sets proxy variables for one test and restores them.
class ProxyEnvironment {
 public:
  explicit ProxyEnvironment(const std::string& proxy) {
    for (const char* name : kNames) {
      const char* old = std::getenv(name);
      saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
      setenv(name, proxy.c_str(), 1);
    }
    for (const char* name : {"no_proxy", "NO_PROXY"}) unsetenv(name);
  }
  ~ProxyEnvironment() {
    for (const auto& [name, value] : saved_) {
      if (value) {
        setenv(name.c_str(), value->c_str(), 1);
      } else {
        unsetenv(name.c_str());
      }
    }
  }

 private:
  static constexpr const char* kNames[] = {"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy",
                                           "ALL_PROXY"};
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// A proxy would be connected to instead of the destination, so the check would judge the proxy's
// address: proxies from the environment are never used.
TEST(HttpFetchPolicyTest, ProxiesFromTheEnvironmentCannotRouteAroundTheCheck) {
  TestServer proxy([](const ReceivedRequest&) { return HttpResponse(200, "OK", {}, "via proxy"); });
  TestServer target(Ok(), "127.0.0.2");
  ProxyEnvironment env(proxy.Url(""));
  auto loopback = Policy("127.0.0.0/8");

  auto refused = HttpFetch(Get("http://169.254.169.254/latest/meta-data/", loopback));
  ExpectRefused(refused, "destination 169.254.169.254 is a link-local (cloud metadata) address");
  auto direct = HttpFetch(Get(target.Url("/direct"), loopback));
  ASSERT_TRUE(direct.ok()) << direct.status().ToString();
  EXPECT_EQ(direct->body, "reached");
  EXPECT_TRUE(proxy.requests().empty());
  ASSERT_EQ(target.requests().size(), 1u);
  EXPECT_EQ(target.requests()[0].target, "/direct");  // origin form: not a proxy request
}

}  // namespace
}  // namespace cairn::net
