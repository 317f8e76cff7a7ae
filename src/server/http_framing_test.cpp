// The framing check (http_framing.h) over the shapes a request-smuggling probe uses. What Beast's
// parser does with the same headers is checked end to end in tests/e2e/hostile_http_test.cpp.
#include "server/http_framing.h"

#include <gtest/gtest.h>

namespace cairn::server {
namespace {

RequestFraming Te(std::vector<std::string_view> values, unsigned version = 11) {
  RequestFraming framing;
  framing.version = version;
  framing.transfer_encoding = std::move(values);
  return framing;
}

RequestFraming Cl(std::vector<std::string_view> values) {
  RequestFraming framing;
  framing.content_length = std::move(values);
  return framing;
}

void ExpectRefused(const RequestFraming& framing, const std::string& field) {
  Status status = CheckRequestFraming(framing);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
  EXPECT_EQ(status.field(), field) << status.ToString();
}

TEST(RequestFramingTest, NoBodyOrOneClearLengthIsFine) {
  EXPECT_TRUE(CheckRequestFraming({}).ok());
  EXPECT_TRUE(CheckRequestFraming(Cl({"0"})).ok());
  EXPECT_TRUE(CheckRequestFraming(Cl({"13"})).ok());
  EXPECT_TRUE(CheckRequestFraming(Te({"chunked"})).ok());
  EXPECT_TRUE(CheckRequestFraming(Te({"Chunked"})).ok());  // coding names are case-insensitive
  EXPECT_TRUE(CheckRequestFraming(Te({" chunked\t"})).ok());
}

TEST(RequestFramingTest, OnlyChunkedIsATransferCoding) {
  for (std::string_view value : {"gzip", "identity", "gzip, chunked", "chunked, chunked", "chunked, gzip",
                                 "chunked;q=1", "", "chunk", "deflate"}) {
    ExpectRefused(Te({value}), "Transfer-Encoding");
  }
  ExpectRefused(Te({"chunked", "chunked"}), "Transfer-Encoding");  // two fields
  ExpectRefused(Te({"gzip", "chunked"}), "Transfer-Encoding");
  ExpectRefused(Te({"chunked"}, 10), "Transfer-Encoding");  // HTTP/1.0 has no transfer codings
}

TEST(RequestFramingTest, TransferEncodingAndContentLengthTogetherAreRefused) {
  RequestFraming both = Te({"chunked"});
  both.content_length = {"5"};
  ExpectRefused(both, "Content-Length");
}

TEST(RequestFramingTest, ContentLengthsMustBeOneDecimalNumber) {
  EXPECT_TRUE(CheckRequestFraming(Cl({"13", "13"})).ok());  // identical duplicates are one length
  EXPECT_TRUE(CheckRequestFraming(Cl({"13, 13"})).ok());
  EXPECT_TRUE(CheckRequestFraming(Cl({"013", "13"})).ok());  // the same number
  ExpectRefused(Cl({"13", "14"}), "Content-Length");
  ExpectRefused(Cl({"13, 14"}), "Content-Length");
  for (std::string_view bad : {"+5", "-5", "5 5", "0x10", "1e3", "", " ", "5,", ",5", "abc",
                               "99999999999999999999999"}) {
    ExpectRefused(Cl({bad}), "Content-Length");
  }
}

}  // namespace
}  // namespace cairn::server
