// JSON <-> webhooks and dead letters: strict parsing of request bodies (unknown fields, wrong
// types and bad values are kValidation naming the field) and the views the API returns. A
// webhook's secret is never part of a view; `has_secret` says whether one is set.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "base/status.h"
#include "model/limits.h"
#include "store/webhook_store.h"

namespace cairn::server::webhooks {

inline constexpr size_t kMaxSecretBytes = 1024;

// POST /webhooks: {url (required), selector? (default {}: every event), secret? (a string, a
// reference {"secret": "NAME"} to a tenant's secret, or null), headers? ({name: string |
// {"secret": NAME, "prefix"?}}, model::ParseHeaderList), active? (default true)}. `owner_id` is
// the tenant of the request.
Result<store::WebhookDraft> ParseWebhookDraft(const boost::json::value& body, const model::Limits& limits,
                                              const std::string& owner_id);

// PATCH /webhooks/{id}: the same fields, all optional, at least one; `secret: null` clears it.
Result<store::WebhookPatch> ParseWebhookPatch(const boost::json::value& body, const model::Limits& limits);

// {id, url, selector, has_secret, headers (references as given, literal values as "***"), active,
// cursor, created_at, updated_at}, and secret ({"secret": NAME}) when the signing secret is a
// reference (a literal secret is never shown).
boost::json::object WebhookView(const store::Webhook& hook);

// {id, webhook_id, event_seq, attempts, last_status, last_error, created_at, updated_at, event}
// where `event` is the payload that was sent, as JSON.
boost::json::object DeadLetterView(const store::DeadLetter& letter);

}  // namespace cairn::server::webhooks
