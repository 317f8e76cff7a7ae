#include "base/status.h"

namespace cairn {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidArgument: return "bad_request";
    case StatusCode::kValidation: return "validation_failed";
    case StatusCode::kNotFound: return "not_found";
    case StatusCode::kConflict: return "conflict";
    case StatusCode::kFailedPrecondition: return "precondition_failed";
    case StatusCode::kPayloadTooLarge: return "payload_too_large";
    case StatusCode::kUnsupportedMediaType: return "unsupported_media_type";
    case StatusCode::kMethodNotAllowed: return "method_not_allowed";
    case StatusCode::kHeaderTooLarge: return "header_too_large";
    case StatusCode::kResourceExhausted: return "too_many_requests";
    case StatusCode::kGone: return "gone";
    case StatusCode::kUnavailable: return "unavailable";
    case StatusCode::kInsufficientStorage: return "insufficient_storage";
    case StatusCode::kUnauthenticated: return "unauthenticated";
    case StatusCode::kPermissionDenied: return "permission_denied";
    case StatusCode::kInternal: return "internal";
  }
  return "internal";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  return std::string(StatusCodeName(code_)) + ": " + message_;
}

}  // namespace cairn
