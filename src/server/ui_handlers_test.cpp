#include "server/ui_handlers.h"

#include <gtest/gtest.h>

#include <string>

#include "web/web_assets.h"

namespace cairn::server {
namespace {

class UiHandlersTest : public ::testing::Test {
 protected:
  void SetUp() override { AddUiRoutes(router_); }

  // Runs GET `path` with `headers` through the router; the response (or the error's status code).
  Result<HttpResponse> Get(const std::string& path, std::vector<std::pair<std::string, std::string>> headers = {},
                           QueryParams query = {}) {
    Router::Match match = router_.Find("GET", path);
    if (match.route == nullptr) return match.error;
    HttpRequest req;
    req.method = "GET";
    req.path = path;
    req.target = path;
    req.query = std::move(query);
    req.headers = std::move(headers);
    req.path_params = match.params;
    return match.route->handler(req);
  }

  static std::string HeaderOf(const HttpResponse& r, const std::string& name) {
    for (const auto& [n, v] : r.headers) {
      if (n == name) return v;
    }
    return "";
  }

  Router router_;
};

const web::WebAsset& Asset(std::string_view name) {
  for (const auto& a : web::WebAssets()) {
    if (a.name == name) return a;
  }
  ADD_FAILURE() << name << " is not embedded";
  static web::WebAsset none;
  return none;
}

TEST_F(UiHandlersTest, UiIsIndexHtmlWithItsETag) {
  auto r = Get("/ui");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->content_type, "text/html; charset=utf-8");
  EXPECT_EQ(r->body, Asset("index.html").body);
  EXPECT_NE(r->body.find("<html"), std::string::npos);
  EXPECT_EQ(HeaderOf(*r, "ETag"), Asset("index.html").etag);
  EXPECT_EQ(HeaderOf(*r, "Cache-Control"), "no-cache");
  EXPECT_NE(HeaderOf(*r, "Content-Security-Policy").find("script-src 'self'"), std::string::npos);
}

TEST_F(UiHandlersTest, ServesEachFileWithItsType) {
  auto js = Get("/ui/app.js");
  ASSERT_TRUE(js.ok());
  EXPECT_EQ(js->content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(js->body, Asset("app.js").body);
  auto css = Get("/ui/style.css");
  ASSERT_TRUE(css.ok());
  EXPECT_EQ(css->content_type, "text/css; charset=utf-8");
  EXPECT_NE(Asset("app.js").etag, Asset("style.css").etag);
}

TEST_F(UiHandlersTest, MatchingIfNoneMatchIsA304WithoutBody) {
  const std::string etag(Asset("app.js").etag);
  for (const std::string& value : {etag, "W/" + etag, "\"other\", " + etag, std::string("*")}) {
    auto r = Get("/ui/app.js", {{"if-none-match", value}});
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, 304) << value;
    EXPECT_TRUE(r->body.empty()) << value;
    EXPECT_EQ(HeaderOf(*r, "ETag"), etag);
  }
  auto stale = Get("/ui/app.js", {{"if-none-match", "\"0123\""}});
  ASSERT_TRUE(stale.ok());
  EXPECT_EQ(stale->status, 200);
  EXPECT_EQ(stale->body, Asset("app.js").body);
}

TEST_F(UiHandlersTest, GzipOnlyWhenAccepted) {
  auto gz = Get("/ui/app.js", {{"accept-encoding", "br, gzip, deflate"}});
  ASSERT_TRUE(gz.ok());
  EXPECT_EQ(HeaderOf(*gz, "Content-Encoding"), "gzip");
  EXPECT_EQ(gz->body, Asset("app.js").gzip_body);
  ASSERT_GE(gz->body.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(gz->body[0]), 0x1f);  // the gzip magic
  EXPECT_EQ(static_cast<unsigned char>(gz->body[1]), 0x8b);
  EXPECT_LT(gz->body.size(), Asset("app.js").body.size());
  EXPECT_EQ(HeaderOf(*gz, "Vary"), "Accept-Encoding");

  for (const char* refusing : {"gzip;q=0", "br", "identity", "gzip ; q=0.0"}) {
    auto plain = Get("/ui/app.js", {{"accept-encoding", refusing}});
    ASSERT_TRUE(plain.ok());
    EXPECT_EQ(HeaderOf(*plain, "Content-Encoding"), "") << refusing;
    EXPECT_EQ(plain->body, Asset("app.js").body) << refusing;
  }
}

TEST_F(UiHandlersTest, UnknownFilesAndQueriesAreRefused) {
  auto missing = Get("/ui/nope.js");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(Get("/ui/..").ok());
  auto query = Get("/ui", {}, {{"x", "1"}});
  ASSERT_FALSE(query.ok());
  EXPECT_EQ(query.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace cairn::server
