#include "support/sqlite_store.h"

namespace cairn::test_support {

Result<std::unique_ptr<store::sqlite::SqliteStore>> OpenSqliteStore(const std::string& dir, const Clock& clock,
                                                                    MetricsRegistry* metrics, const SqliteTuning& tune) {
  store::sqlite::SqliteStoreOptions options;
  options.path = dir + "/cairn.db";
  options.synchronous = "normal";  // durability against power loss is not under test
  if (tune) tune(options);
  return store::sqlite::SqliteStore::Open(options, clock, metrics);
}

::testing::AssertionResult StartLocalBus(store::EventLog& log, std::unique_ptr<bus::LocalEventBus>& bus) {
  auto started = bus::LocalEventBus::Start(log, 1000, nullptr);
  if (!started.ok()) return ::testing::AssertionFailure() << started.status().ToString();
  bus = std::move(started).value();
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult TempSqliteStore::Open(const Clock& clock, MetricsRegistry* metrics, SqliteTuning tune) {
  Close();
  clock_ = &clock;
  metrics_ = metrics;
  tune_ = std::move(tune);
  if (!dir_.ok()) return ::testing::AssertionFailure() << dir_.error();
  auto opened = OpenSqliteStore(dir_.path(), clock, metrics, tune_);
  if (!opened.ok()) return ::testing::AssertionFailure() << opened.status().ToString();
  store_ = std::move(opened).value();
  return ::testing::AssertionSuccess();
}

void TempSqliteStore::Close() {
  if (!store_) return;
  store_->Close();
  store_.reset();
}

::testing::AssertionResult TempSqliteStore::Reopen() {
  if (!clock_) return ::testing::AssertionFailure() << "Reopen before Open";
  return Open(*clock_, metrics_, tune_);
}

}  // namespace cairn::test_support
