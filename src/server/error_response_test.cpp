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

TEST(ErrorResponseTest, RetryableErrorsCarryRetryAfter) {
  HttpResponse response = ErrorResponse(Status::ResourceExhausted("queue full"));
  ASSERT_EQ(response.headers.size(), 1u);
  EXPECT_EQ(response.headers[0].first, "Retry-After");
}

}  // namespace
}  // namespace cairn::server
