#include "server/webhooks/webhook_codec.h"

#include <boost/json/parse.hpp>

#include "base/json_util.h"
#include "base/time_format.h"
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

Result<std::optional<std::string>> ParseSecret(const json::value& v) {
  if (v.is_null()) return std::optional<std::string>();
  if (!v.is_string()) return Status::Validation("secret", std::string("must be a string or null, got ") + std::string(JsonKindName(v)));
  const auto& s = v.get_string();
  if (s.empty() || s.size() > kMaxSecretBytes) {
    return Status::Validation("secret", "must be 1-" + std::to_string(kMaxSecretBytes) + " bytes");
  }
  return std::optional<std::string>(std::string(s));
}

Result<bool> ParseActive(const json::value& v) {
  if (!v.is_bool()) return Status::Validation("active", std::string("must be a boolean, got ") + std::string(JsonKindName(v)));
  return v.get_bool();
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
      CAIRN_ASSIGN_OR_RETURN(draft.secret, ParseSecret(kv.value()));
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
      CAIRN_ASSIGN_OR_RETURN(patch.secret, ParseSecret(kv.value()));
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
  return json::object{{"id", hook.id},
                      {"url", hook.url},
                      {"selector", hook.selector},
                      {"has_secret", hook.secret.has_value()},
                      {"active", hook.active},
                      {"cursor", hook.cursor},
                      {"created_at", FormatRfc3339Micros(hook.created_at)},
                      {"updated_at", FormatRfc3339Micros(hook.updated_at)}};
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
