// TokenQuota: each tenant's daily budget of LLM tokens (docs/auth.md, "Token quota"), a guard the
// agent loop consults before every model call.
//
// A tenant's quota is its own (the tenant record's daily_token_quota) or the default setting;
// 0 is unlimited. Usage is counted per tenant per UTC day from the usage each model reply reports
// (Record, called when the reply arrives, so every token spent is counted, even of a run that
// fails later), held in memory and queued to the CursorStore under "quota:<tenant>:<YYYY-MM-DD>"
// (SaveCursorSoon): it commits with the run's next write (its snapshot of the reply), not in a
// commit of its own, so a restart, or a kill -9, keeps the count of every reply a run went on
// from. Check refuses (kResourceExhausted, reason "quota_exceeded") once the day's usage reached
// the quota; the next UTC day starts from 0.
//
// Thread-safe. A tenant's Records are serialised; tenants do not wait for each other.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "base/clock.h"
#include "base/metrics.h"
#include "base/status.h"
#include "store/cursor_store.h"

namespace cairn::exec {

class TokenQuota {
 public:
  // A tenant's own quota (nullopt: the default); called on every Check.
  using TenantQuota = std::function<std::optional<int64_t>(const std::string& tenant)>;

  // `cursors`, `clock` and `metrics` (may be null) must outlive the quota. `default_daily`: tokens
  // a day, 0 unlimited. With metrics, every recorded token counts in cairn_llm_tokens_total{tenant}.
  TokenQuota(store::CursorStore& cursors, const Clock& clock, int64_t default_daily, TenantQuota tenant_quota,
             MetricsRegistry* metrics = nullptr);

  struct Usage {
    std::string day;    // "YYYY-MM-DD", UTC
    int64_t used = 0;   // tokens counted today
    int64_t quota = 0;  // 0: unlimited
  };

  // Ok while the tenant's usage today is below its quota; kResourceExhausted with reason
  // "quota_exceeded" and a message saying how much was used and when it resets otherwise.
  Status Check(const std::string& tenant);
  // Adds `tokens` to the tenant's usage today (negative or 0: nothing); durable with the caller's
  // next write (CursorStore::SaveCursorSoon).
  Status Record(const std::string& tenant, int64_t tokens);
  // Today's usage and quota of `tenant`.
  Result<Usage> Today(const std::string& tenant);

  // "YYYY-MM-DD" of `micros` (UTC).
  static std::string Day(int64_t micros);

 private:
  struct Count {
    std::mutex mu;  // held while a Record queues its save, so counts reach the store in order
    std::string day;
    int64_t tokens = 0;
  };
  int64_t QuotaOf(const std::string& tenant) const;
  std::shared_ptr<Count> CountOf(const std::string& tenant);
  // `count` for `day` (loaded from the cursor store when the day changed). Called under count.mu.
  Status Roll(const std::string& tenant, Count& count, const std::string& day);

  store::CursorStore& cursors_;
  const Clock& clock_;
  const int64_t default_daily_;
  TenantQuota tenant_quota_;
  std::unique_ptr<LabeledCounters> tokens_by_tenant_;  // null without metrics
  std::mutex mu_;  // counts_
  std::map<std::string, std::shared_ptr<Count>> counts_;
};

}  // namespace cairn::exec
