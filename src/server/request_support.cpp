#include "server/request_support.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "base/json_util.h"
#include "base/uuid.h"
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

Status AddTags(const std::string& param, const std::string& value, const model::Limits& limits,
               std::vector<std::string>& out) {
  for (auto& tag : param == "tag" ? std::vector<std::string>{value} : SplitCommas(value)) {
    CAIRN_RETURN_IF_ERROR(AsParameterError(model::ValidateTag(param, tag, limits)));
    out.push_back(std::move(tag));
  }
  if (out.size() > limits.max_tags) return BadParameter(param, "too many tags (at most " + std::to_string(limits.max_tags) + ")");
  return Status::Ok();
}

std::string JoinNames(const std::vector<std::string_view>& names) {
  std::string out;
  for (std::string_view name : names) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

bool Contains(QueryReader::Names names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
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
  if (request.principal) {
    ctx.owner_id = request.principal->tenant;
    ctx.actor = request.principal->id;
    ctx.may_define = request.principal->Has(auth::Role::kDeveloper);
    model::AccessScope scope = auth::AccessScopeOf(*request.principal);
    if (!scope.admin) ctx.access = std::move(scope);
  }
  if (auto actor = request.Header("x-cairn-actor")) {
    if (actor->empty() || actor->size() > 128 || !PrintableAscii(*actor)) {
      return Status::InvalidArgument("X-Cairn-Actor must be 1 to 128 printable ASCII characters");
    }
    if (request.principal && !request.principal->Has(auth::Role::kAdmin)) {
      return Status::PermissionDenied("X-Cairn-Actor (acting for someone) needs role admin");
    }
    ctx.actor = std::string(*actor);
  }
  return ctx;
}

Status CheckReadable(const model::WriteContext& ctx, const model::Breadcrumb& crumb) {
  if (!ctx.access || ctx.access->MayRead(crumb.visibility, crumb.created_by, crumb.acl)) return Status::Ok();
  return Status::NotFound("breadcrumb " + crumb.id + " not found");
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

Status BadParameter(const std::string& name, const std::string& problem) {
  return Status(StatusCode::kInvalidArgument, name + ": " + problem, name);
}

Status AsParameterError(Status status) {
  if (status.code() != StatusCode::kValidation) return status;
  return Status(StatusCode::kInvalidArgument, status.message(), status.field());
}

Result<QueryReader> QueryReader::Open(const QueryParams& query, Names single, Names repeatable) {
  for (size_t i = 0; i < query.size(); ++i) {
    const std::string& name = query[i].first;
    if (Contains(single, name)) {
      for (size_t j = 0; j < i; ++j) {
        if (query[j].first == name) return BadParameter(name, "given more than once (it takes one value)");
      }
    } else if (!Contains(repeatable, name)) {
      std::vector<std::string_view> all(single.begin(), single.end());
      all.insert(all.end(), repeatable.begin(), repeatable.end());
      return BadParameter(name, all.empty() ? "unknown query parameter: this route takes none"
                                            : "unknown query parameter (this route takes " + JoinNames(all) + ")");
    }
  }
  return QueryReader(query);
}

const std::string* QueryReader::Find(std::string_view name) const {
  for (const auto& [key, value] : *query_) {
    if (key == name) return &value;
  }
  return nullptr;
}

std::vector<std::string> QueryReader::All(std::string_view name) const {
  std::vector<std::string> out;
  for (const auto& [key, value] : *query_) {
    if (key == name) out.push_back(value);
  }
  return out;
}

Result<std::optional<std::string>> QueryReader::Text(std::string_view name) const {
  const std::string* value = Find(name);
  if (!value) return std::optional<std::string>();
  if (value->empty()) return BadParameter(std::string(name), "must not be empty");
  return std::optional<std::string>(*value);
}

Result<std::optional<std::string>> QueryReader::OneOf(std::string_view name,
                                                      const std::vector<std::string_view>& values) const {
  const std::string* value = Find(name);
  if (!value) return std::optional<std::string>();
  if (std::find(values.begin(), values.end(), *value) == values.end()) {
    return BadParameter(std::string(name), "must be one of " + JoinNames(values) + ", got '" + *value + "'");
  }
  return std::optional<std::string>(*value);
}

Result<std::optional<bool>> QueryReader::Bool(std::string_view name) const {
  CAIRN_ASSIGN_OR_RETURN(std::optional<std::string> value, OneOf(name, {"true", "false"}));
  if (!value) return std::optional<bool>();
  return std::optional<bool>(*value == "true");
}

Result<std::optional<int64_t>> QueryReader::Integer(std::string_view name, int64_t min, int64_t max) const {
  const std::string* text = Find(name);
  if (!text) return std::optional<int64_t>();
  int64_t value = 0;
  // from_chars takes a leading '-' but no '+' or space: only digits (and '-') reach the range check.
  auto [ptr, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (text->empty() || ec != std::errc() || ptr != text->data() + text->size() || value < min || value > max) {
    return BadParameter(std::string(name), "must be a whole number from " + std::to_string(min) + " to " +
                                               std::to_string(max) + ", got '" + *text + "'");
  }
  return std::optional<int64_t>(value);
}

Result<size_t> QueryReader::Limit(size_t fallback, size_t max) const {
  CAIRN_ASSIGN_OR_RETURN(std::optional<int64_t> limit, Integer("limit", 1, static_cast<int64_t>(max)));
  return limit ? static_cast<size_t>(*limit) : fallback;
}

Result<std::optional<std::string>> QueryReader::Cursor(std::string_view name) const {
  const std::string* value = Find(name);
  if (!value) return std::optional<std::string>();
  bool visible = std::all_of(value->begin(), value->end(), [](char c) { return c > 0x20 && c < 0x7F; });
  if (value->empty() || value->size() > 256 || !visible) {
    return BadParameter(std::string(name), "is not a cursor this server issued (pass the previous page's next_cursor)");
  }
  return std::optional<std::string>(*value);
}

Result<std::optional<std::string>> QueryReader::Uuid(std::string_view name) const {
  const std::string* value = Find(name);
  if (!value) return std::optional<std::string>();
  if (!IsUuidString(*value)) return BadParameter(std::string(name), "must be an id (a UUID), got '" + *value + "'");
  return std::optional<std::string>(*value);
}

Status NoQueryParameters(const HttpRequest& request) { return QueryReader::Open(request.query, {}).status(); }

Result<model::BreadcrumbQuery> ParseListQuery(const HttpRequest& request, const model::Limits& limits) {
  CAIRN_ASSIGN_OR_RETURN(QueryReader q, QueryReader::Open(request.query,
                                                          {"schema_name", "all_tags", "any_tags", "path", "path_prefix",
                                                           "context_match", "order", "limit", "cursor",
                                                           "include_context"},
                                                          {"tag"}));
  model::BreadcrumbQuery query;
  if (const std::string* name = q.Find("schema_name")) {
    CAIRN_RETURN_IF_ERROR(AsParameterError(model::ValidateSchemaName("schema_name", *name, limits)));
    query.schema_name = *name;
  }
  for (const std::string& tag : q.All("tag")) CAIRN_RETURN_IF_ERROR(AddTags("tag", tag, limits, query.all_tags));
  if (const std::string* tags = q.Find("all_tags")) CAIRN_RETURN_IF_ERROR(AddTags("all_tags", *tags, limits, query.all_tags));
  if (const std::string* tags = q.Find("any_tags")) CAIRN_RETURN_IF_ERROR(AddTags("any_tags", *tags, limits, query.any_tags));
  for (const char* name : {"path", "path_prefix"}) {
    const std::string* path = q.Find(name);
    if (!path) continue;
    CAIRN_RETURN_IF_ERROR(AsParameterError(model::ValidatePath(name, *path, limits)));
    (std::string_view(name) == "path" ? query.path : query.path_prefix) = *path;
  }
  if (const std::string* rules_text = q.Find("context_match")) {
    auto rules_json = ParseJson(*rules_text, limits.max_json_depth);
    if (!rules_json.ok()) return BadParameter("context_match", "is not valid JSON: " + rules_json.status().message());
    auto rules = model::ParseContextRules(*rules_json, limits);
    if (!rules.ok()) return AsParameterError(rules.status());
    query.context_match = std::move(rules).value();
  }
  CAIRN_ASSIGN_OR_RETURN(std::optional<std::string> order, q.OneOf("order", {"asc", "desc"}));
  query.order = order == "asc" ? model::SortOrder::kOldestFirst : model::SortOrder::kNewestFirst;
  CAIRN_ASSIGN_OR_RETURN(query.limit, q.Limit(limits.default_list_limit, limits.max_list_limit));
  CAIRN_ASSIGN_OR_RETURN(query.cursor, q.Cursor("cursor"));
  CAIRN_ASSIGN_OR_RETURN(std::optional<bool> include_context, q.Bool("include_context"));
  query.include_context = include_context.value_or(false);
  return query;
}

}  // namespace cairn::server
