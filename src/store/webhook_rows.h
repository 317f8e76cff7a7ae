// How webhooks and dead letters are laid out in rows, shared by every backend: the columns a read
// selects and a write stores, how a row decodes, and the rules of the WebhookStore contract
// (webhook_store.h) that do not depend on SQL: the webhook a create stores, what a patch changes,
// a dead letter as stored and as retried, the page of a dead-letter list. The SQL stays with each
// backend.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "base/status.h"
#include "store/stored_row.h"
#include "store/webhook_store.h"

namespace cairn::store {

// The columns of `webhooks`, in the order ReadWebhook() decodes them and a write stores them (12).
const std::string& WebhookColumns();
inline constexpr int kWebhookColumnCount = 12;
// The columns of `webhook_dead_letters`, in the order ReadDeadLetter() decodes them (10).
const std::string& DeadLetterColumns();
inline constexpr int kDeadLetterColumnCount = 10;

// Decodes a row selecting WebhookColumns(). A selector or headers column that does not parse (a
// row written by an older version, see sqlite/unreadable_rows.h) is left null (selector) or empty
// (headers) and, with `damage`, named there: the read succeeds. Without `damage` such a row is
// kInternal.
Result<Webhook> ReadWebhook(const StoredRow& row, std::string* damage = nullptr);
// Decodes a row selecting DeadLetterColumns().
DeadLetter ReadDeadLetter(const StoredRow& row);

// The errors every backend gives for a missing webhook or dead letter, and for an owner at the limit.
Status WebhookNotFound(const std::string& id);
Status DeadLetterNotFound(const std::string& id);
Status TooManyWebhooks(size_t max_per_owner);

// kInvalidArgument for a selector the store could not read back (a non-finite number): checked
// before a write is queued.
Status CheckStorableSelector(const boost::json::value& selector);

// The webhook a create stores: `draft` under `id`, made at `now`, its cursor at `newest_seq` (the
// newest committed event seq, read inside the write's transaction).
Webhook NewWebhook(const WebhookDraft& draft, std::string id, int64_t newest_seq, int64_t now);

// `current` with `patch` applied at `now`; updated_at always moves forward, so a change is visible.
// A patch that turns an inactive webhook on moves its cursor to `newest_seq()` (called only then,
// inside the write's transaction): an inactive webhook receives nothing, so it resumes at the end
// of the log, not with a backlog.
Result<Webhook> PatchedWebhook(Webhook current, const WebhookPatch& patch, int64_t now,
                               const std::function<Result<int64_t>()>& newest_seq);

// `letter` as DeadLetterAndAdvance stores it: under `id`, made at `now`.
DeadLetter NewDeadLetter(DeadLetter letter, std::string id, int64_t now);
// `letter` after another failed attempt at `now`.
DeadLetter DeadLetterAfterAttempt(DeadLetter letter, std::optional<int64_t> status, const std::string& error,
                                  int64_t now);

// Adds the dead letter of `row` to `page`. A list query selects `limit` + 1 rows: the one past
// `limit` is not added but sets page->next_cursor. Returns false once the page is complete (the
// caller stops reading rows).
bool AddDeadLetterRow(const StoredRow& row, size_t limit, DeadLetterPage* page);

}  // namespace cairn::store
