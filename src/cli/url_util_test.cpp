#include "cli/url_util.h"

#include <gtest/gtest.h>

namespace cairn::cli {
namespace {

TEST(PercentEncodeTest, KeepsUnreservedAndEncodesEverythingElse) {
  EXPECT_EQ(PercentEncode("AZaz09-._~"), "AZaz09-._~");
  EXPECT_EQ(PercentEncode("a b/c?d&e=f#g%h+i"), "a%20b%2Fc%3Fd%26e%3Df%23g%25h%2Bi");
  EXPECT_EQ(PercentEncode("caf\xC3\xA9"), "caf%C3%A9");
  EXPECT_EQ(PercentEncode(std::string("\0\x7f", 2)), "%00%7F");
  EXPECT_EQ(PercentEncode(""), "");
}

TEST(NormalizeServerUrlTest, AcceptsAndNormalises) {
  EXPECT_EQ(*NormalizeServerUrl("http://127.0.0.1:8081"), "http://127.0.0.1:8081");
  EXPECT_EQ(*NormalizeServerUrl("http://127.0.0.1:8081/"), "http://127.0.0.1:8081");
  EXPECT_EQ(*NormalizeServerUrl("localhost:9000"), "http://localhost:9000");
  EXPECT_EQ(*NormalizeServerUrl("HTTPS://example.com/api//"), "HTTPS://example.com/api");
  EXPECT_EQ(*NormalizeServerUrl("http://[::1]:8081"), "http://[::1]:8081");
}

TEST(NormalizeServerUrlTest, Rejects) {
  for (const char* bad : {"", "ftp://x", "http://", "http:///path", "http://a b", "http://h/?q=1", "http://h#f"}) {
    auto url = NormalizeServerUrl(bad);
    ASSERT_FALSE(url.ok()) << bad;
    EXPECT_EQ(url.status().code(), StatusCode::kInvalidArgument);
  }
}

TEST(QueryStringTest, BuildsInOrderWithRepeatsAndEncoding) {
  QueryString query;
  EXPECT_EQ(query.Build(), "");
  query.Add("tag", "a b");
  query.Add("tag", "x&y=z");
  query.Add("context_match", R"({"op":"eq"})");
  EXPECT_EQ(query.Build(), "?tag=a%20b&tag=x%26y%3Dz&context_match=%7B%22op%22%3A%22eq%22%7D");
}

}  // namespace
}  // namespace cairn::cli
