// WebhookStore: webhook endpoints, their delivery cursors and the dead-letter records of
// deliveries that gave up (DESIGN.md §4).
//
// Contract:
// - Every call is scoped to `owner_id` except the ones the deliverer uses (ListAllWebhooks and
//   the cursor/dead-letter writes by webhook id); a record of another owner is kNotFound.
// - A webhook's `cursor` is the seq of the last event it is done with (delivered, dead-lettered
//   or not matching). It only moves forward. A new webhook starts at the newest committed seq
//   (it never replays history); so does one that is re-activated (events while it was inactive
//   are not delivered).
// - DeadLetterAndAdvance records the dead letter and moves the cursor in one transaction.
// - Deleting a webhook deletes its dead letters.
// - Calls are thread-safe and blocking.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace cairn::store {

struct Webhook {
  std::string id;  // UUIDv7
  std::string owner_id;
  std::string url;
  boost::json::value selector;  // the selector as given (validated by the caller), an object
  std::optional<std::string> secret;       // the signing secret given literally, or
  std::optional<std::string> secret_name = std::nullopt;  // the name of the tenant's secret that signs (never both)
  boost::json::value headers = boost::json::object{};  // extra request headers as given (validated
                                                       // by the caller): name → string | {"secret": ...}
  bool active = true;
  int64_t cursor = 0;
  int64_t created_at = 0;  // microseconds since the epoch
  int64_t updated_at = 0;
  // The principal that created it: it gets only the events of records that principal may read
  // (model/access.h). Empty for webhooks made before record access was enforced.
  std::string created_by = {};
};

struct WebhookDraft {
  std::string owner_id;
  std::string url;
  boost::json::value selector;
  std::optional<std::string> secret;
  bool active = true;
  std::string created_by = {};  // Webhook::created_by
  std::optional<std::string> secret_name = std::nullopt;
  boost::json::value headers = boost::json::object{};
};

// Fields to change; unset ones stay. `secret` set to nullopt inside clears it.
struct WebhookPatch {
  std::optional<std::string> url;
  std::optional<boost::json::value> selector;
  std::optional<std::optional<std::string>> secret;
  std::optional<std::optional<std::string>> secret_name = std::nullopt;
  std::optional<boost::json::value> headers = std::nullopt;
  std::optional<bool> active;
};

struct DeadLetter {
  std::string id;  // UUIDv7, so ids sort by creation
  std::string webhook_id;
  std::string owner_id;
  int64_t event_seq = 0;
  std::string payload;             // the exact body that was sent (re-sent on retry)
  int64_t attempts = 0;            // attempts made so far, retries through the API included
  std::optional<int64_t> last_status;  // the last HTTP status, if there was a response
  std::string last_error;
  int64_t created_at = 0;
  int64_t updated_at = 0;
};

struct DeadLetterPage {
  std::vector<DeadLetter> items;
  std::optional<std::string> next_cursor;  // the id to pass as `after` for the next page
};

class WebhookStore {
 public:
  virtual ~WebhookStore() = default;

  // Creates a webhook whose cursor is the newest committed event seq. kConflict when the owner
  // already has `max_per_owner` webhooks.
  virtual Result<Webhook> CreateWebhook(const WebhookDraft& draft, size_t max_per_owner) = 0;
  virtual Result<Webhook> GetWebhook(const std::string& owner_id, const std::string& id) = 0;
  // Oldest first.
  virtual Result<std::vector<Webhook>> ListWebhooks(const std::string& owner_id) = 0;
  // Every owner's webhooks (for the deliverer), oldest first.
  virtual Result<std::vector<Webhook>> ListAllWebhooks() = 0;
  virtual Result<Webhook> UpdateWebhook(const std::string& owner_id, const std::string& id,
                                        const WebhookPatch& patch) = 0;
  virtual Status DeleteWebhook(const std::string& owner_id, const std::string& id) = 0;

  // Moves the cursor of webhook `id` to `seq` if that is forward. kNotFound if it was deleted.
  virtual Status AdvanceWebhookCursor(const std::string& id, int64_t seq) = 0;
  // Stores `letter` (id, timestamps filled in) and advances its webhook's cursor to
  // letter.event_seq, atomically. kNotFound if the webhook was deleted. Returns the stored record.
  virtual Result<DeadLetter> DeadLetterAndAdvance(DeadLetter letter) = 0;

  // Dead letters of `owner_id` (of one webhook if `webhook_id` is set), oldest first, after the id
  // `after` (empty: from the start), at most `limit`.
  virtual Result<DeadLetterPage> ListDeadLetters(const std::string& owner_id,
                                                 const std::optional<std::string>& webhook_id,
                                                 const std::string& after, size_t limit) = 0;
  virtual Result<DeadLetter> GetDeadLetter(const std::string& owner_id, const std::string& id) = 0;
  // Records another failed attempt on a dead letter; returns the updated record.
  virtual Result<DeadLetter> RecordDeadLetterAttempt(const std::string& owner_id, const std::string& id,
                                                     std::optional<int64_t> status, const std::string& error) = 0;
  virtual Status DeleteDeadLetter(const std::string& owner_id, const std::string& id) = 0;
};

}  // namespace cairn::store
