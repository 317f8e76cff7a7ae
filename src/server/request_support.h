// Turning HTTP requests into model inputs: JSON bodies (content type, size, depth), the acting
// identity, If-Match, query parameters (QueryReader, the one reader every route uses) and the
// breadcrumb list query. Every failure is a Status with a client-facing message.
#pragma once

#include <boost/json/value.hpp>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "model/breadcrumb.h"
#include "model/limits.h"
#include "model/query.h"
#include "server/http_types.h"

namespace cairn::server {

// Requires `Content-Type: application/json` (kUnsupportedMediaType) and a well-formed body within
// limits.max_json_depth (kInvalidArgument).
Result<boost::json::value> ParseJsonBody(const HttpRequest& request, const model::Limits& limits);

// The tenant and actor of a request: with a principal (--auth=on), its tenant and id, and
// may_define when it is a developer; X-Cairn-Actor then only for admins acting for someone
// (kPermissionDenied otherwise). Without one (--auth=none): owner "default", actor from
// X-Cairn-Actor (default "anonymous"). X-Cairn-Actor: 1-128 printable ASCII characters, else
// kInvalidArgument. `access` is the principal's record-access scope when it is below admin
// (model/access.h): the reader of every list and search, checked on every update and delete.
Result<model::WriteContext> WriteContextFrom(const HttpRequest& request);

// kNotFound (as if it did not exist) when ctx.access may not read `crumb`.
Status CheckReadable(const model::WriteContext& ctx, const model::Breadcrumb& crumb);

// If-Match as a version: absent or `*` → nullopt (no version check); `3`, `"3"` or `W/"3"` → 3;
// anything else kInvalidArgument.
Result<std::optional<int64_t>> ParseIfMatch(const HttpRequest& request);

// Idempotency-Key: absent → ""; 1-255 printable ASCII characters, else kInvalidArgument.
Result<std::string> ParseIdempotencyKey(const HttpRequest& request);

// --- Query parameters ---
//
// One kind of mistake, one status, on every route: a query parameter that the route does not take,
// a single-valued one given twice, or a malformed value is a 400 (kInvalidArgument) whose `field`
// names the parameter (or, for structured values such as context_match, the part of it at fault).

// The 400 for parameter `name`: message "<name>: <problem>", field `name`.
Status BadParameter(const std::string& name, const std::string& problem);

// `status` as a parameter error: kValidation from a validator shared with bodies (a tag, a schema
// name, a selector) becomes kInvalidArgument with the same message and field; any other status
// is returned unchanged.
Status AsParameterError(Status status);

// Reads one request's query strictly. Open() checks names and repetition; the getters check
// values. The reader refers to `query`, which must outlive it.
//
//   CAIRN_ASSIGN_OR_RETURN(QueryReader q, QueryReader::Open(req.query, {"limit", "cursor"}));
//   CAIRN_ASSIGN_OR_RETURN(size_t limit, q.Limit(50, 1000));
class QueryReader {
 public:
  using Names = std::initializer_list<std::string_view>;

  // Refuses a parameter named in neither `single` nor `repeatable`, and a `single` one given more
  // than once. The message of an unknown parameter lists what the route takes.
  static Result<QueryReader> Open(const QueryParams& query, Names single, Names repeatable = {});

  // The value of single-valued parameter `name`, or null when absent.
  const std::string* Find(std::string_view name) const;
  // Every value of `name`, in order.
  std::vector<std::string> All(std::string_view name) const;
  const QueryParams& params() const { return *query_; }

  // A non-empty text.
  Result<std::optional<std::string>> Text(std::string_view name) const;
  // One of `values` (exactly).
  Result<std::optional<std::string>> OneOf(std::string_view name, const std::vector<std::string_view>& values) const;
  // `true` or `false`.
  Result<std::optional<bool>> Bool(std::string_view name) const;
  // A decimal whole number (no "+", spaces, fraction or exponent) from `min` to `max`.
  Result<std::optional<int64_t>> Integer(std::string_view name, int64_t min, int64_t max) const;
  // `limit`: a whole number from 1 to `max`; `fallback` when absent.
  Result<size_t> Limit(size_t fallback, size_t max) const;
  // A cursor as issued by this server: 1 to 256 visible ASCII characters (no space). Whoever issued it
  // decodes it (and refuses, as kInvalidArgument naming the parameter, one it did not issue).
  Result<std::optional<std::string>> Cursor(std::string_view name) const;
  // A UUID (the ids cairn issues), e.g. a filter on a webhook or a cursor that is a record id.
  Result<std::optional<std::string>> Uuid(std::string_view name) const;

 private:
  explicit QueryReader(const QueryParams& query) : query_(&query) {}
  const QueryParams* query_;
};

// For routes that take no query parameters: any parameter is refused as unknown.
Status NoQueryParameters(const HttpRequest& request);

// GET /breadcrumbs parameters (see docs/api.md), read with QueryReader (`tag` is repeatable);
// empty list items ("a,,b") are refused too.
Result<model::BreadcrumbQuery> ParseListQuery(const HttpRequest& request, const model::Limits& limits);

}  // namespace cairn::server
