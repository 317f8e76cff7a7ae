#include "server/error_response.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

namespace cairn::server {
namespace {

TEST(ErrorResponseTest, MapsEveryCodeToItsHttpStatus) {
  EXPECT_EQ(HttpStatusFor(StatusCode::kInvalidArgument), 400);
  EXPECT_EQ(HttpStatusFor(StatusCode::kNotFound), 404);
  EXPECT_EQ(HttpStatusFor(StatusCode::kMethodNotAllowed), 405);
  EXPECT_EQ(HttpStatusFor(StatusCode::kConflict), 409);
  EXPECT_EQ(HttpStatusFor(StatusCode::kGone), 410);
  EXPECT_EQ(HttpStatusFor(StatusCode::kFailedPrecondition), 412);
  EXPECT_EQ(HttpStatusFor(StatusCode::kPayloadTooLarge), 413);
  EXPECT_EQ(HttpStatusFor(StatusCode::kUnsupportedMediaType), 415);
  EXPECT_EQ(HttpStatusFor(StatusCode::kValidation), 422);
  EXPECT_EQ(HttpStatusFor(StatusCode::kResourceExhausted), 429);
  EXPECT_EQ(HttpStatusFor(StatusCode::kHeaderTooLarge), 431);
  EXPECT_EQ(HttpStatusFor(StatusCode::kInternal), 500);
  EXPECT_EQ(HttpStatusFor(StatusCode::kUnavailable), 503);
}

TEST(ErrorResponseTest, BodyHasCodeMessageAndFieldForValidation) {
  HttpResponse response = ErrorResponse(Status::Validation("tags[2]", "must be a string"));
  EXPECT_EQ(response.status, 422);
  EXPECT_EQ(response.content_type, "application/json");
  auto body = boost::json::parse(response.body).as_object();
  const auto& error = body.at("error").as_object();
  EXPECT_EQ(error.at("code").as_string(), "validation_failed");
  EXPECT_EQ(error.at("message").as_string(), "tags[2]: must be a string");
  EXPECT_EQ(error.at("field").as_string(), "tags[2]");
}

TEST(ErrorResponseTest, NonValidationErrorsHaveNoField) {
  auto body = boost::json::parse(ErrorResponse(Status::NotFound("breadcrumb x not found")).body).as_object();
  EXPECT_FALSE(body.at("error").as_object().contains("field"));
  EXPECT_EQ(body.at("error").as_object().at("code").as_string(), "not_found");
}

// Messages quote request text; whatever its bytes, the body is JSON a strict parser accepts, with
// one U+FFFD per maximal ill-formed subpart and well-formed text (ASCII or not) kept as it was.
TEST(ErrorResponseTest, IllFormedUtf8IsReplacedNeverCopied) {
  const std::string fffd = "\xEF\xBF\xBD";
  const std::pair<std::string, std::string> cases[] = {
      {"plain", "plain"},
      {"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80", "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"},
      {"a\xFF" "b", "a" + fffd + "b"},
      {"\xC3\x28", fffd + "("},                         // a lead byte without its continuation
      {"\xC0\xAF", fffd + fffd},                         // overlong '/'
      {"\xED\xA0\x80", fffd + fffd + fffd},             // a surrogate
      {"\xF4\x90\x80\x80", fffd + fffd + fffd + fffd}, // above U+10FFFF
      {"\xE2\x82", fffd},                                // truncated at the end: one maximal subpart
      {"\xF0\x9F\x98x", fffd + "x"},
      {"\x80\xBF", fffd + fffd},                         // lone continuation bytes
  };
  for (const auto& [input, expected] : cases) {
    HttpResponse response = ErrorResponse(Status(StatusCode::kInvalidArgument, "got '" + input + "'", input));
    boost::system::error_code ec;
    auto body = boost::json::parse(response.body, ec);
    ASSERT_FALSE(ec) << response.body;
    const auto& error = body.as_object().at("error").as_object();
    EXPECT_EQ(error.at("message").as_string(), "got '" + expected + "'");
    EXPECT_EQ(error.at("field").as_string(), expected);
  }
}

TEST(ErrorResponseTest, RetryableErrorsCarryRetryAfter) {
  HttpResponse response = ErrorResponse(Status::ResourceExhausted("queue full"));
  ASSERT_EQ(response.headers.size(), 1u);
  EXPECT_EQ(response.headers[0].first, "Retry-After");
}

}  // namespace
}  // namespace cairn::server
