#include "exec/token_quota.h"

#include <cstdio>
#include <ctime>

namespace cairn::exec {
namespace {

std::string Key(const std::string& tenant, const std::string& day) { return "quota:" + tenant + ":" + day; }

}  // namespace

TokenQuota::TokenQuota(store::CursorStore& cursors, const Clock& clock, int64_t default_daily, TenantQuota tenant_quota,
                       MetricsRegistry* metrics)
    : cursors_(cursors), clock_(clock), default_daily_(default_daily), tenant_quota_(std::move(tenant_quota)) {
  if (metrics) {
    tokens_by_tenant_ = std::make_unique<LabeledCounters>(*metrics, "cairn_llm_tokens_total",
                                                          "LLM tokens used (prompt and completion), by tenant", "tenant");
  }
}

std::string TokenQuota::Day(int64_t micros) {
  std::time_t seconds = static_cast<std::time_t>(micros / 1'000'000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[64];
  std::snprintf(text, sizeof text, "%04d-%02d-%02d", utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday);
  return text;
}

int64_t TokenQuota::QuotaOf(const std::string& tenant) const {
  std::optional<int64_t> own = tenant_quota_ ? tenant_quota_(tenant) : std::nullopt;
  return own.value_or(default_daily_);
}

std::shared_ptr<TokenQuota::Count> TokenQuota::CountOf(const std::string& tenant) {
  std::lock_guard lock(mu_);
  auto& count = counts_[tenant];
  if (!count) count = std::make_shared<Count>();
  return count;
}

Status TokenQuota::Roll(const std::string& tenant, Count& count, const std::string& day) {
  if (count.day == day) return Status::Ok();
  CAIRN_ASSIGN_OR_RETURN(std::optional<int64_t> stored, cursors_.LoadCursor(Key(tenant, day)));
  // A new day: the last one's count is no longer needed (a failure only leaves a small row behind).
  if (!count.day.empty()) (void)cursors_.DeleteCursor(Key(tenant, count.day));
  count.day = day;
  count.tokens = stored.value_or(0);
  return Status::Ok();
}

Status TokenQuota::Check(const std::string& tenant) {
  int64_t quota = QuotaOf(tenant);
  if (quota <= 0) return Status::Ok();
  std::string day = Day(clock_.NowMicros());
  std::shared_ptr<Count> count = CountOf(tenant);
  int64_t used = 0;
  {
    std::lock_guard lock(count->mu);
    CAIRN_RETURN_IF_ERROR(Roll(tenant, *count, day));
    used = count->tokens;
  }
  if (used < quota) return Status::Ok();
  return Status::ResourceExhausted("tenant " + tenant + " used " + std::to_string(used) + " of its " +
                                   std::to_string(quota) + " LLM tokens for " + day +
                                   " (UTC); model calls resume at 00:00 UTC, or a system admin raises daily_token_quota")
      .WithReason("quota_exceeded");
}

Status TokenQuota::Record(const std::string& tenant, int64_t tokens) {
  if (tokens <= 0) return Status::Ok();
  if (tokens_by_tenant_) tokens_by_tenant_->For(tenant).Increment(static_cast<uint64_t>(tokens));
  std::string day = Day(clock_.NowMicros());
  std::shared_ptr<Count> count = CountOf(tenant);
  std::lock_guard lock(count->mu);
  CAIRN_RETURN_IF_ERROR(Roll(tenant, *count, day));
  count->tokens += tokens;
  // Queued under count->mu, so the saves of one tenant's day reach the store in order.
  cursors_.SaveCursorSoon(Key(tenant, day), count->tokens);
  return Status::Ok();
}

Result<TokenQuota::Usage> TokenQuota::Today(const std::string& tenant) {
  Usage usage;
  usage.day = Day(clock_.NowMicros());
  usage.quota = QuotaOf(tenant);
  std::shared_ptr<Count> count = CountOf(tenant);
  std::lock_guard lock(count->mu);
  CAIRN_RETURN_IF_ERROR(Roll(tenant, *count, usage.day));
  usage.used = count->tokens;
  return usage;
}

}  // namespace cairn::exec
