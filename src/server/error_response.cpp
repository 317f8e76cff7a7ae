#include "server/error_response.h"

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <algorithm>
#include <string_view>

namespace cairn::server {
namespace {

// `text` with every ill-formed UTF-8 sequence replaced by U+FFFD, one per maximal ill-formed
// subpart (Unicode 15, 3.9 "U+FFFD Substitution of Maximal Subparts"). Error messages quote
// request text (a path, a parameter, a header) that may be any bytes, and Boost.JSON copies the
// bytes of a string as they are: without this the body would not be JSON.
std::string ValidUtf8(std::string_view text) {
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    auto byte = [&](size_t at) { return static_cast<unsigned char>(text[at]); };
    unsigned char lead = byte(i);
    if (lead < 0x80) {
      out.push_back(static_cast<char>(lead));
      ++i;
      continue;
    }
    // The sequence length and the range of the second byte (which excludes overlong forms,
    // surrogates and code points above U+10FFFF); later bytes are always 80..BF.
    size_t length = 0;
    unsigned char low = 0x80, high = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      if (lead == 0xE0) low = 0xA0;
      if (lead == 0xED) high = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      if (lead == 0xF0) low = 0x90;
      if (lead == 0xF4) high = 0x8F;
    }
    size_t valid = length == 0 ? 0 : 1;  // bytes of the sequence that are well formed so far
    while (valid > 0 && valid < length && i + valid < text.size()) {
      unsigned char next = byte(i + valid);
      if (valid == 1 ? (next < low || next > high) : (next < 0x80 || next > 0xBF)) break;
      ++valid;
    }
    if (length != 0 && valid == length) {
      out.append(text.substr(i, length));
      i += length;
    } else {
      out.append(kReplacement);
      i += std::max<size_t>(valid, 1);
    }
  }
  return out;
}

}  // namespace

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
    case StatusCode::kUnauthenticated: return 401;
    case StatusCode::kPermissionDenied: return 403;
  }
  return 500;
}

HttpResponse ErrorResponse(const Status& status) {
  boost::json::object error{
      {"code", status.reason().empty() ? StatusCodeName(status.code()) : std::string_view(status.reason())},
      {"message", ValidUtf8(status.message())}};
  if (!status.field().empty()) error["field"] = ValidUtf8(status.field());
  HttpResponse response = HttpResponse::Json(HttpStatusFor(status.code()),
                                             boost::json::serialize(boost::json::object{{"error", std::move(error)}}));
  if (status.code() == StatusCode::kResourceExhausted || status.code() == StatusCode::kUnavailable) {
    response.headers.emplace_back("Retry-After", "1");
  }
  if (status.code() == StatusCode::kUnauthenticated) response.headers.emplace_back("WWW-Authenticate", "Bearer");
  return response;
}

}  // namespace cairn::server
