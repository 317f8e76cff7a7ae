// ClaimStore: which triggers each executor has taken on and not yet finished (DESIGN.md §5,
// "exactly one run per trigger per executor").
//
// Contract: a claim is a small row keyed by (consumer, trigger_key), written through the store's
// writer (durable when the call returns) without an event. Claiming a key that is already
// claimed does not fail: it returns the next attempt number, which tells the caller that an
// earlier attempt either finished (its result is in the store) or was interrupted. Calls are
// thread-safe and blocking.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace cairn::store {

struct TriggerClaim {
  std::string consumer;     // the executor's consumer id
  std::string trigger_key;  // "<trigger id>/<version>[/deleted]"
  std::string trigger_id;
  std::string owner_id;
  int64_t trigger_seq = 0;  // the triggering event
  int64_t attempt = 1;
  int64_t claimed_at = 0;   // microseconds since the epoch
};

class ClaimStore {
 public:
  virtual ~ClaimStore() = default;

  // Records the claim. Returns its attempt: 1 for a new claim, previous + 1 for a key already
  // claimed (the stored row is updated with the new attempt, time and seq).
  virtual Result<int64_t> ClaimTrigger(const TriggerClaim& claim) = 0;
  // The claims of `consumer` still recorded, oldest first.
  virtual Result<std::vector<TriggerClaim>> ListClaims(const std::string& consumer) = 0;
  // Forgets the claims (finished runs); keys without a claim are ignored.
  virtual Status ReleaseClaims(const std::string& consumer, const std::vector<std::string>& trigger_keys) = 0;
};

}  // namespace cairn::store
