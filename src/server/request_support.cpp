#include "server/request_support.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "base/json_util.h"
#include "model/breadcrumb_codec.h"

namespace cairn::server {
namespace {

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool PrintableAscii(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7F; });
}

// Splits "a,b,c"; empty items are kept so that validation can refuse them.
std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    parts.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return parts;
    start = comma + 1;
  }
}

Result<int64_t> ParseWholeNumber(const std::string& name, const std::string& text) {
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) {
    return Status::InvalidArgument(name + " must be a whole number, got '" + text + "'");
  }
  return value;
}

Status AddTags(const std::string& param, const std::string& value, const model::Limits& limits,
               std::vector<std::string>& out) {
  for (auto& tag : param == "tag" ? std::vector<std::string>{value} : SplitCommas(value)) {
    Status valid = model::ValidateTag(param, tag, limits);
    if (!valid.ok()) return Status::InvalidArgument(valid.message());
    out.push_back(std::move(tag));
  }
  if (out.size() > limits.max_tags) return Status::InvalidArgument(param + ": too many tags");
  return Status::Ok();
}

// Query-string validation failures are 400s (the request is malformed), not 422s.
Status AsBadRequest(Status status) {
  if (status.ok() || status.code() == StatusCode::kInvalidArgument) return status;
  return Status::InvalidArgument(status.message());
}

}  // namespace

Result<boost::json::value> ParseJsonBody(const HttpRequest& request, const model::Limits& limits) {
  auto type = request.Header("content-type");
  std::string media = type ? Lower(type->substr(0, type->find(';'))) : "";
  media.erase(media.find_last_not_of(" \t") + 1);
  if (media != "application/json") {
    return Status(StatusCode::kUnsupportedMediaType,
                  "Content-Type must be application/json, got '" + std::string(type.value_or("")) + "'");
  }
  if (request.body.empty()) return Status::InvalidArgument("request body is empty; expected a JSON object");
  return ParseJson(request.body, limits.max_json_depth);
}

Result<model::WriteContext> WriteContextFrom(const HttpRequest& request) {
  model::WriteContext ctx;
  if (auto actor = request.Header("x-cairn-actor")) {
    if (actor->empty() || actor->size() > 128 || !PrintableAscii(*actor)) {
      return Status::InvalidArgument("X-Cairn-Actor must be 1 to 128 printable ASCII characters");
    }
    ctx.actor = std::string(*actor);
  }
  return ctx;
}

Result<std::optional<int64_t>> ParseIfMatch(const HttpRequest& request) {
  auto header = request.Header("if-match");
  if (!header) return std::optional<int64_t>();
  std::string_view text = *header;
  if (text == "*") return std::optional<int64_t>();  // any current version: the record must exist
  if (text.substr(0, 2) == "W/") text.remove_prefix(2);
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"') text = text.substr(1, text.size() - 2);
  int64_t version = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), version);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || version < 1) {
    return Status::InvalidArgument("If-Match must be a version number such as \"3\", got '" + std::string(*header) + "'");
  }
  return std::optional<int64_t>(version);
}

Result<std::string> ParseIdempotencyKey(const HttpRequest& request) {
  auto header = request.Header("idempotency-key");
  if (!header) return std::string();
  if (header->empty() || header->size() > 255 || !PrintableAscii(*header)) {
    return Status::InvalidArgument("Idempotency-Key must be 1 to 255 printable ASCII characters");
  }
  return std::string(*header);
}

Result<model::BreadcrumbQuery> ParseListQuery(const HttpRequest& request, const model::Limits& limits) {
  model::BreadcrumbQuery query;
  query.limit = limits.default_list_limit;
  std::vector<std::string> seen;
  for (const auto& [name, value] : request.query) {
    bool repeatable = name == "tag";
    if (!repeatable && std::find(seen.begin(), seen.end(), name) != seen.end()) {
      return Status::InvalidArgument("query parameter '" + name + "' given more than once");
    }
    seen.push_back(name);
    if (name == "schema_name") {
      CAIRN_RETURN_IF_ERROR(AsBadRequest(model::ValidateSchemaName(name, value, limits)));
      query.schema_name = value;
    } else if (name == "tag" || name == "all_tags") {
      CAIRN_RETURN_IF_ERROR(AddTags(name, value, limits, query.all_tags));
    } else if (name == "any_tags") {
      CAIRN_RETURN_IF_ERROR(AddTags(name, value, limits, query.any_tags));
    } else if (name == "path") {
      CAIRN_RETURN_IF_ERROR(AsBadRequest(model::ValidatePath(name, value, limits)));
      query.path = value;
    } else if (name == "path_prefix") {
      CAIRN_RETURN_IF_ERROR(AsBadRequest(model::ValidatePath(name, value, limits)));
      query.path_prefix = value;
    } else if (name == "context_match") {
      auto rules_json = ParseJson(value, limits.max_json_depth);
      if (!rules_json.ok()) return Status::InvalidArgument("context_match: " + rules_json.status().message());
      auto rules = model::ParseContextRules(*rules_json, limits);
      if (!rules.ok()) return AsBadRequest(rules.status());
      query.context_match = std::move(rules).value();
    } else if (name == "order") {
      if (value != "asc" && value != "desc") return Status::InvalidArgument("order must be asc or desc");
      query.order = value == "asc" ? model::SortOrder::kOldestFirst : model::SortOrder::kNewestFirst;
    } else if (name == "limit") {
      CAIRN_ASSIGN_OR_RETURN(int64_t limit, ParseWholeNumber(name, value));
      if (limit < 1 || limit > static_cast<int64_t>(limits.max_list_limit)) {
        return Status::InvalidArgument("limit must be between 1 and " + std::to_string(limits.max_list_limit));
      }
      query.limit = static_cast<size_t>(limit);
    } else if (name == "cursor") {
      if (value.empty()) return Status::InvalidArgument("cursor must not be empty");
      query.cursor = value;
    } else if (name == "include_context") {
      if (value != "true" && value != "false") return Status::InvalidArgument("include_context must be true or false");
      query.include_context = value == "true";
    } else {
      return Status::InvalidArgument("unknown query parameter '" + name + "'");
    }
  }
  return query;
}

}  // namespace cairn::server
