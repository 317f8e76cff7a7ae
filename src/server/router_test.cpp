#include "server/router.h"

#include <gtest/gtest.h>

namespace cairn::server {
namespace {

Handler Returns(int status) {
  return [status](const HttpRequest&) -> Result<HttpResponse> { return HttpResponse::Json(status, "{}"); };
}

class RouterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    router_.Add("GET", "/breadcrumbs", Dispatch::kWorker, Returns(200));
    router_.Add("POST", "/breadcrumbs", Dispatch::kWorker, Returns(201));
    router_.Add("GET", "/breadcrumbs/{id}", Dispatch::kInline, Returns(200));
    router_.Add("PATCH", "/breadcrumbs/{id}", Dispatch::kWorker, Returns(200));
    router_.Add("GET", "/breadcrumbs/{id}/full", Dispatch::kInline, Returns(200));
  }
  Router router_;
};

TEST_F(RouterTest, MatchesLiteralAndPlaceholderRoutes) {
  auto list = router_.Find("GET", "/breadcrumbs");
  ASSERT_NE(list.route, nullptr);
  EXPECT_EQ(list.route->pattern, "/breadcrumbs");

  auto one = router_.Find("GET", "/breadcrumbs/abc");
  ASSERT_NE(one.route, nullptr);
  EXPECT_EQ(one.route->pattern, "/breadcrumbs/{id}");
  ASSERT_EQ(one.params.size(), 1u);
  EXPECT_EQ(one.params[0], "abc");

  auto full = router_.Find("GET", "/breadcrumbs/abc/full");
  ASSERT_NE(full.route, nullptr);
  EXPECT_EQ(full.route->pattern, "/breadcrumbs/{id}/full");
}

TEST_F(RouterTest, ToleratesOneTrailingSlash) {
  EXPECT_NE(router_.Find("GET", "/breadcrumbs/").route, nullptr);
}

TEST_F(RouterTest, UnknownPathIsNotFound) {
  auto match = router_.Find("GET", "/nope");
  EXPECT_EQ(match.route, nullptr);
  EXPECT_EQ(match.error.code(), StatusCode::kNotFound);
  EXPECT_EQ(router_.Find("GET", "/breadcrumbs/a/b/c").error.code(), StatusCode::kNotFound);
  EXPECT_EQ(router_.Find("GET", "/breadcrumbs/a/history").error.code(), StatusCode::kNotFound);
}

TEST_F(RouterTest, WrongMethodIsMethodNotAllowedWithAllowList) {
  auto match = router_.Find("DELETE", "/breadcrumbs/abc");
  EXPECT_EQ(match.route, nullptr);
  EXPECT_EQ(match.error.code(), StatusCode::kMethodNotAllowed);
  EXPECT_EQ(match.allow, "GET, HEAD, PATCH");
  EXPECT_EQ(router_.Find("PUT", "/breadcrumbs").allow, "GET, HEAD, POST");
}

TEST_F(RouterTest, HeadIsAnsweredByTheGetRoute) {
  auto head = router_.Find("HEAD", "/breadcrumbs/abc/full");
  ASSERT_NE(head.route, nullptr);
  EXPECT_EQ(head.route->method, "GET");
  EXPECT_EQ(head.params, (std::vector<std::string>{"abc"}));
  router_.Add("POST", "/only-post", Dispatch::kWorker, Returns(201));
  auto refused = router_.Find("HEAD", "/only-post");
  EXPECT_EQ(refused.error.code(), StatusCode::kMethodNotAllowed);
  EXPECT_EQ(refused.allow, "POST");
}

TEST_F(RouterTest, EmptyPlaceholderSegmentDoesNotMatch) {
  EXPECT_EQ(router_.Find("GET", "/breadcrumbs//full").route, nullptr);
}

}  // namespace
}  // namespace cairn::server

namespace cairn::server {
namespace {

// docs/rcrt.md: an /rcrt route needs what the native route it calls needs.
TEST(RouteAccess, RcrtRoutesNeedWhatTheirNativeRoutesNeed) {
  using K = RouteAccess::Kind;
  using auth::Role;
  auto is = [](RouteAccess access, K kind, Role role) { return access.kind == kind && (kind == K::kPublic || access.role == role); };
  EXPECT_TRUE(is(AccessFor("GET", "/rcrt/health"), K::kPublic, Role::kReader));
  EXPECT_TRUE(is(AccessFor("POST", "/rcrt/auth/token"), K::kPublic, Role::kReader));
  EXPECT_TRUE(is(AccessFor("POST", "/rcrt/tenants/{id}"), K::kSystemAdmin, Role::kAdmin));
  EXPECT_TRUE(is(AccessFor("POST", "/rcrt/agents/{id}"), K::kRole, Role::kAdmin));
  EXPECT_TRUE(is(AccessFor("POST", "/rcrt/agents/{id}/secret"), K::kRole, Role::kAdmin));
  EXPECT_TRUE(is(AccessFor("POST", "/rcrt/agents/{id}/webhooks"), K::kRole, Role::kDeveloper));
  EXPECT_TRUE(is(AccessFor("POST", "/rcrt/breadcrumbs"), K::kRole, Role::kUser));
  EXPECT_TRUE(is(AccessFor("GET", "/rcrt/breadcrumbs/{id}"), K::kRole, Role::kReader));
  EXPECT_TRUE(is(AccessFor("GET", "/rcrt/events/stream"), K::kRole, Role::kReader));
  // Only the /rcrt prefix is stripped: a native-looking tail elsewhere is not public.
  EXPECT_TRUE(is(AccessFor("GET", "/other/health"), K::kRole, Role::kReader));
}

}  // namespace
}  // namespace cairn::server
