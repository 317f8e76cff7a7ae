#include "store/webhook_rows.h"

#include <algorithm>
#include <utility>

#include "base/json_util.h"

namespace cairn::store {
namespace {

// The nesting a read of a selector or headers column accepts.
constexpr size_t kSelectorDepth = 64;

Status UnreadableWebhook(const std::string& id, const std::string& why) {
  return Status::Internal("webhook " + id + " is stored in a form that cannot be read (" + why + ")");
}

}  // namespace

const std::string& WebhookColumns() {
  static const std::string kColumns =
      "id, owner_id, url, selector, secret, active, cursor, created_at, updated_at, created_by, secret_name, headers";
  return kColumns;
}

const std::string& DeadLetterColumns() {
  static const std::string kColumns =
      "id, webhook_id, owner_id, event_seq, payload, attempts, last_status, last_error, created_at, updated_at";
  return kColumns;
}

Result<Webhook> ReadWebhook(const StoredRow& row, std::string* damage) {
  Webhook hook;
  hook.id = std::string(row.Text(0));
  hook.owner_id = std::string(row.Text(1));
  hook.url = std::string(row.Text(2));
  auto selector = ParseJson(row.Text(3), kSelectorDepth);
  if (!selector.ok()) {
    std::string why = "selector: " + selector.status().message();
    if (!damage) return UnreadableWebhook(hook.id, why);
    *damage = std::move(why);
  } else {
    hook.selector = std::move(selector).value();
  }
  hook.secret = row.OptText(4);
  hook.active = row.Bool(5);
  hook.cursor = row.Int(6);
  hook.created_at = row.Int(7);
  hook.updated_at = row.Int(8);
  hook.created_by = row.OptText(9).value_or("");
  hook.secret_name = row.OptText(10);
  auto headers = ParseJson(row.Text(11), kSelectorDepth);
  if (!headers.ok() || !headers->is_object()) {
    std::string why = "headers: " + (headers.ok() ? std::string("not an object") : headers.status().message());
    if (!damage) return UnreadableWebhook(hook.id, why);
    *damage = std::move(why);
  } else {
    hook.headers = std::move(headers).value();
  }
  return hook;
}

DeadLetter ReadDeadLetter(const StoredRow& row) {
  DeadLetter d;
  d.id = std::string(row.Text(0));
  d.webhook_id = std::string(row.Text(1));
  d.owner_id = std::string(row.Text(2));
  d.event_seq = row.Int(3);
  d.payload = std::string(row.Text(4));
  d.attempts = row.Int(5);
  if (!row.IsNull(6)) d.last_status = row.Int(6);
  d.last_error = std::string(row.Text(7));
  d.created_at = row.Int(8);
  d.updated_at = row.Int(9);
  return d;
}

Status WebhookNotFound(const std::string& id) { return Status::NotFound("webhook " + id + " not found"); }

Status DeadLetterNotFound(const std::string& id) { return Status::NotFound("dead letter " + id + " not found"); }

Status TooManyWebhooks(size_t max_per_owner) {
  return Status::Conflict("at most " + std::to_string(max_per_owner) + " webhooks per tenant");
}

Status CheckStorableSelector(const boost::json::value& selector) { return CheckFiniteNumbers(selector, "selector"); }

Webhook NewWebhook(const WebhookDraft& draft, std::string id, int64_t newest_seq, int64_t now) {
  Webhook hook;
  hook.id = std::move(id);
  hook.owner_id = draft.owner_id;
  hook.url = draft.url;
  hook.selector = draft.selector;
  hook.secret = draft.secret;
  hook.secret_name = draft.secret_name;
  hook.headers = draft.headers;
  hook.active = draft.active;
  hook.created_by = draft.created_by;
  hook.cursor = newest_seq;
  hook.created_at = hook.updated_at = now;
  return hook;
}

Result<Webhook> PatchedWebhook(Webhook current, const WebhookPatch& patch, int64_t now,
                               const std::function<Result<int64_t>()>& newest_seq) {
  Webhook hook = std::move(current);
  bool reactivated = patch.active && *patch.active && !hook.active;
  if (patch.url) hook.url = *patch.url;
  if (patch.selector) hook.selector = *patch.selector;
  if (patch.secret) hook.secret = *patch.secret;
  if (patch.secret_name) hook.secret_name = *patch.secret_name;
  if (patch.headers) hook.headers = *patch.headers;
  if (patch.active) hook.active = *patch.active;
  if (reactivated) {
    CAIRN_ASSIGN_OR_RETURN(hook.cursor, newest_seq());
  }
  hook.updated_at = std::max(now, hook.updated_at + 1);
  return hook;
}

DeadLetter NewDeadLetter(DeadLetter letter, std::string id, int64_t now) {
  letter.id = std::move(id);
  letter.created_at = letter.updated_at = now;
  return letter;
}

DeadLetter DeadLetterAfterAttempt(DeadLetter letter, std::optional<int64_t> status, const std::string& error,
                                  int64_t now) {
  letter.attempts += 1;
  letter.last_status = status;
  letter.last_error = error;
  letter.updated_at = now;
  return letter;
}

bool AddDeadLetterRow(const StoredRow& row, size_t limit, DeadLetterPage* page) {
  if (page->items.size() >= limit) {
    if (!page->items.empty()) page->next_cursor = page->items.back().id;
    return false;
  }
  page->items.push_back(ReadDeadLetter(row));
  return true;
}

}  // namespace cairn::store
