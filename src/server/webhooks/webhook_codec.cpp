#include "server/webhooks/webhook_codec.h"

#include <boost/json/parse.hpp>

#include "base/json_util.h"
#include "base/time_format.h"
#include "model/secret_ref.h"
#include "model/selector.h"
#include "server/webhooks/webhook_url.h"

namespace cairn::server::webhooks {
namespace json = boost::json;
namespace {

Result<std::string> ParseUrl(const json::value& v) {
  if (!v.is_string()) return Status::Validation("url", std::string("must be a string, got ") + std::string(JsonKindName(v)));
  std::string url(v.get_string());
  CAIRN_RETURN_IF_ERROR(ValidateWebhookUrl(url));
  return url;
}

// The selector is validated here and stored as given; the deliverer parses it again.
Result<json::value> ParseSelectorField(const json::value& v, const model::Limits& limits) {
  auto parsed = model::ParseSelector(v, limits);
  if (!parsed.ok()) {
    const Status& s = parsed.status();
    if (s.code() != StatusCode::kValidation) return s;
    std::string field = s.field().empty() ? "selector" : "selector." + s.field();
    return Status(StatusCode::kValidation, "selector." + s.message(), field);
  }
  return json::value(model::SelectorToJson(*parsed));
}

// The signing secret: a literal string, a reference {"secret": NAME} to a tenant's secret, or
// null (none). Sets both of `literal` and `name` (one of them empty).
Status ParseSecret(const json::value& v, std::optional<std::string>& literal, std::optional<std::string>& name) {
  literal.reset();
  name.reset();
  if (v.is_null()) return Status::Ok();
  if (v.is_string()) {
    const auto& s = v.get_string();
    if (s.empty() || s.size() > kMaxSecretBytes) {
      return Status::Validation("secret", "must be 1-" + std::to_string(kMaxSecretBytes) + " bytes");
    }
    literal = std::string(s);
    return Status::Ok();
  }
  if (!v.is_object()) {
    return Status::Validation("secret", std::string("must be a string, {\"secret\": \"NAME\"} or null, got ") +
                                            std::string(JsonKindName(v)));
  }
  CAIRN_ASSIGN_OR_RETURN(model::SecretOrValue reference, model::ParseSecretReference(v, "secret"));
  name = std::move(reference.secret_name);
  return Status::Ok();
}

// Validated here and stored as given; the deliverer parses it again (ParseHeaderList).
Result<json::value> ParseHeadersField(const json::value& v) {
  CAIRN_ASSIGN_OR_RETURN(model::HeaderList headers, model::ParseHeaderList(v, "headers"));
  return model::HeaderListToJson(headers);
}

Result<bool> ParseActive(const json::value& v) {
  if (!v.is_bool()) return Status::Validation("active", std::string("must be a boolean, got ") + std::string(JsonKindName(v)));
  return v.get_bool();
}

// The headers for a view: references as they are, literal values masked (they may be credentials).
json::value RedactedHeaders(const json::value& headers) {
  if (!headers.is_object()) return json::object{};
  json::object out;
  for (const auto& [name, value] : headers.as_object()) out[name] = value.is_string() ? json::value("***") : value;
  return out;
}

}  // namespace

Result<store::WebhookDraft> ParseWebhookDraft(const json::value& body, const model::Limits& limits,
                                              const std::string& owner_id) {
  if (!body.is_object()) return Status::Validation("body", "must be a JSON object");
  store::WebhookDraft draft;
  draft.owner_id = owner_id;
  draft.selector = json::object{};
  bool has_url = false;
  for (const auto& kv : body.get_object()) {
    if (kv.key() == "url") {
      CAIRN_ASSIGN_OR_RETURN(draft.url, ParseUrl(kv.value()));
      has_url = true;
    } else if (kv.key() == "selector") {
      CAIRN_ASSIGN_OR_RETURN(draft.selector, ParseSelectorField(kv.value(), limits));
    } else if (kv.key() == "secret") {
      CAIRN_RETURN_IF_ERROR(ParseSecret(kv.value(), draft.secret, draft.secret_name));
    } else if (kv.key() == "headers") {
      CAIRN_ASSIGN_OR_RETURN(draft.headers, ParseHeadersField(kv.value()));
    } else if (kv.key() == "active") {
      CAIRN_ASSIGN_OR_RETURN(draft.active, ParseActive(kv.value()));
    } else {
      return Status::Validation(std::string(kv.key()), "unknown field");
    }
  }
  if (!has_url) return Status::Validation("url", "is required");
  return draft;
}

Result<store::WebhookPatch> ParseWebhookPatch(const json::value& body, const model::Limits& limits) {
  if (!body.is_object()) return Status::Validation("body", "must be a JSON object");
  store::WebhookPatch patch;
  for (const auto& kv : body.get_object()) {
    if (kv.key() == "url") {
      CAIRN_ASSIGN_OR_RETURN(patch.url, ParseUrl(kv.value()));
    } else if (kv.key() == "selector") {
      CAIRN_ASSIGN_OR_RETURN(patch.selector, ParseSelectorField(kv.value(), limits));
    } else if (kv.key() == "secret") {
      std::optional<std::string> literal, name;
      CAIRN_RETURN_IF_ERROR(ParseSecret(kv.value(), literal, name));
      patch.secret = std::move(literal);
      patch.secret_name = std::move(name);
    } else if (kv.key() == "headers") {
      CAIRN_ASSIGN_OR_RETURN(patch.headers, ParseHeadersField(kv.value()));
    } else if (kv.key() == "active") {
      CAIRN_ASSIGN_OR_RETURN(patch.active, ParseActive(kv.value()));
    } else {
      return Status::Validation(std::string(kv.key()), "unknown field");
    }
  }
  if (body.get_object().empty()) return Status::Validation("body", "names no field to update");
  return patch;
}

json::object WebhookView(const store::Webhook& hook) {
  json::object view{{"id", hook.id},
                      {"url", hook.url},
                      {"selector", hook.selector},
                      {"has_secret", hook.secret.has_value() || hook.secret_name.has_value()},
                      {"headers", RedactedHeaders(hook.headers)},
                      {"active", hook.active},
                      {"cursor", hook.cursor},
                      {"created_at", FormatRfc3339Micros(hook.created_at)},
                      {"updated_at", FormatRfc3339Micros(hook.updated_at)}};
  // A reference is shown (a name, not a value); a literal secret never is.
  if (hook.secret_name) view["secret"] = json::object{{"secret", *hook.secret_name}};
  return view;
}

json::object DeadLetterView(const store::DeadLetter& letter) {
  auto parsed = ParseJson(letter.payload, 1000);
  // Never expected: the payload is JSON the server serialised. Shown as text if it is not.
  json::value event = parsed.ok() ? std::move(parsed).value() : json::value(letter.payload);
  return json::object{{"id", letter.id},
                      {"webhook_id", letter.webhook_id},
                      {"event_seq", letter.event_seq},
                      {"attempts", letter.attempts},
                      {"last_status", letter.last_status ? json::value(*letter.last_status) : json::value(nullptr)},
                      {"last_error", letter.last_error},
                      {"created_at", FormatRfc3339Micros(letter.created_at)},
                      {"updated_at", FormatRfc3339Micros(letter.updated_at)},
                      {"event", std::move(event)}};
}

}  // namespace cairn::server::webhooks
