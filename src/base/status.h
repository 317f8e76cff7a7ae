// Status and Result<T>: errors as values, everywhere in cairn.
//
// A Status is either ok or carries a code from a small fixed set, a human-readable message and,
// for validation errors, the name of the offending field. The server maps codes to HTTP statuses
// in exactly one place (src/server/error_response.cpp); nothing below the server knows about HTTP.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace cairn {

enum class StatusCode {
  kOk,
  kInvalidArgument,       // malformed input: bad JSON, bad query parameter
  kValidation,            // well-formed input that breaks a rule; field() names the part
  kNotFound,
  kConflict,              // uniqueness violated (path taken, idempotency key reused)
  kFailedPrecondition,    // optimistic concurrency: expected version does not match
  kPayloadTooLarge,
  kUnsupportedMediaType,
  kMethodNotAllowed,
  kHeaderTooLarge,
  kResourceExhausted,     // a queue or rate limit is full; the caller may retry later
  kGone,                  // the resource existed but is no longer retained
  kUnavailable,           // shutting down or a dependency is down
  kInsufficientStorage,   // the disk is full: writes fail until space returns, reads go on
  kInternal,
  kUnauthenticated,       // no credentials, or credentials that are malformed, expired or forged
  kPermissionDenied,      // authenticated, but the principal lacks the role or access needed
};

// The stable snake_case name of a code, used as the `code` of JSON errors.
std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // ok
  Status(StatusCode code, std::string message, std::string field = {})
      : code_(code), message_(std::move(message)), field_(std::move(field)) {}

  static Status Ok() { return {}; }
  static Status InvalidArgument(std::string msg) { return {StatusCode::kInvalidArgument, std::move(msg)}; }
  static Status Validation(std::string field, std::string msg) {
    return {StatusCode::kValidation, field + ": " + msg, field};
  }
  static Status NotFound(std::string msg) { return {StatusCode::kNotFound, std::move(msg)}; }
  static Status Conflict(std::string msg) { return {StatusCode::kConflict, std::move(msg)}; }
  static Status FailedPrecondition(std::string msg) { return {StatusCode::kFailedPrecondition, std::move(msg)}; }
  static Status PayloadTooLarge(std::string msg) { return {StatusCode::kPayloadTooLarge, std::move(msg)}; }
  static Status ResourceExhausted(std::string msg) { return {StatusCode::kResourceExhausted, std::move(msg)}; }
  static Status Unavailable(std::string msg) { return {StatusCode::kUnavailable, std::move(msg)}; }
  static Status InsufficientStorage(std::string msg) { return {StatusCode::kInsufficientStorage, std::move(msg)}; }
  static Status Internal(std::string msg) { return {StatusCode::kInternal, std::move(msg)}; }
  static Status Unauthenticated(std::string msg) { return {StatusCode::kUnauthenticated, std::move(msg)}; }
  static Status PermissionDenied(std::string msg) { return {StatusCode::kPermissionDenied, std::move(msg)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // For kValidation: the dotted path of the field at fault (e.g. "tags[3]"); empty otherwise.
  const std::string& field() const { return field_; }
  // A finer machine-readable reason than the code, e.g. "builtin_definition" for a kConflict;
  // when set it is the `code` of the JSON error (the HTTP status still follows the code).
  const std::string& reason() const { return reason_; }
  Status WithReason(std::string reason) && {
    reason_ = std::move(reason);
    return std::move(*this);
  }
  // The same status (code, field, reason) with `prefix` before its message.
  Status Prefixed(std::string_view prefix) const {
    Status out = *this;
    out.message_ = std::string(prefix) + message_;
    return out;
  }
  std::string ToString() const;
  // Lets generic code treat a Status like a Result: status() of a Status is itself.
  const Status& status() const { return *this; }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  std::string field_;
  std::string reason_;
};

// Result<T>: a value or a non-ok Status. Accessing value() of an error is a programming error.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}           // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {}  // NOLINT: implicit by design

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace cairn

#define CAIRN_CONCAT_INNER(a, b) a##b
#define CAIRN_CONCAT(a, b) CAIRN_CONCAT_INNER(a, b)

// Returns from the enclosing function if `expr` (a Status) is not ok.
#define CAIRN_RETURN_IF_ERROR(expr) CAIRN_RETURN_IF_ERROR_IMPL(CAIRN_CONCAT(cairn_status_, __COUNTER__), expr)
#define CAIRN_RETURN_IF_ERROR_IMPL(tmp, expr) \
  do {                                        \
    ::cairn::Status tmp = (expr);             \
    if (!tmp.ok()) return tmp;                \
  } while (0)

// Declares `lhs` from a Result expression, returning its Status from the enclosing function on error.
#define CAIRN_ASSIGN_OR_RETURN(lhs, expr) \
  CAIRN_ASSIGN_OR_RETURN_IMPL(CAIRN_CONCAT(cairn_result_, __COUNTER__), lhs, expr)
#define CAIRN_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return tmp.status();               \
  lhs = std::move(tmp).value()
