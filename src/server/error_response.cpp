#include "server/error_response.h"

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

namespace cairn::server {

int HttpStatusFor(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return 200;
    case StatusCode::kInvalidArgument: return 400;
    case StatusCode::kValidation: return 422;
    case StatusCode::kNotFound: return 404;
    case StatusCode::kConflict: return 409;
    case StatusCode::kFailedPrecondition: return 412;
    case StatusCode::kPayloadTooLarge: return 413;
    case StatusCode::kUnsupportedMediaType: return 415;
    case StatusCode::kMethodNotAllowed: return 405;
    case StatusCode::kHeaderTooLarge: return 431;
    case StatusCode::kResourceExhausted: return 429;
    case StatusCode::kGone: return 410;
    case StatusCode::kUnavailable: return 503;
    case StatusCode::kInsufficientStorage: return 507;
    case StatusCode::kInternal: return 500;
  }
  return 500;
}

HttpResponse ErrorResponse(const Status& status) {
  boost::json::object error{
      {"code", status.reason().empty() ? StatusCodeName(status.code()) : std::string_view(status.reason())},
      {"message", status.message()}};
  if (!status.field().empty()) error["field"] = status.field();
  HttpResponse response = HttpResponse::Json(HttpStatusFor(status.code()),
                                             boost::json::serialize(boost::json::object{{"error", std::move(error)}}));
  if (status.code() == StatusCode::kResourceExhausted || status.code() == StatusCode::kUnavailable) {
    response.headers.emplace_back("Retry-After", "1");
  }
  return response;
}

}  // namespace cairn::server
