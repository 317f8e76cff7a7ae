// A SqliteStore in a temporary directory, the fixture of every test that needs a real store.
//
//   test_support::TempSqliteStore store_{"cairn-host-test"};
//   void SetUp() override { ASSERT_TRUE(store_.Open(clock_, &metrics_)); }
//   (and, for a bus on it: ASSERT_TRUE(test_support::StartLocalBus(*store_, bus_));)
//   ... store_->Create(...), *store_ ...
//
// The store is opened with synchronous=normal: durability against power loss is never what a
// unit test checks. Destroying the fixture closes the store and removes the directory.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

#include "base/clock.h"
#include "base/metrics.h"
#include "bus/local_event_bus.h"
#include "store/sqlite/sqlite_store.h"
#include "support/temp_dir.h"

namespace cairn::test_support {

// Adjusts the options before the store opens (e.g. the idempotency retention).
using SqliteTuning = std::function<void(store::sqlite::SqliteStoreOptions&)>;

// Opens <dir>/cairn.db with the test options.
Result<std::unique_ptr<store::sqlite::SqliteStore>> OpenSqliteStore(const std::string& dir, const Clock& clock,
                                                                    MetricsRegistry* metrics = nullptr,
                                                                    const SqliteTuning& tune = {});

// Starts the in-process bus on `log` (a window of 1,000 events) into `bus`.
::testing::AssertionResult StartLocalBus(store::EventLog& log, std::unique_ptr<bus::LocalEventBus>& bus);

class TempSqliteStore {
 public:
  explicit TempSqliteStore(std::string_view prefix = "cairn-store-test") : dir_(prefix) {}
  ~TempSqliteStore() { Close(); }
  TempSqliteStore(const TempSqliteStore&) = delete;
  TempSqliteStore& operator=(const TempSqliteStore&) = delete;

  // Opens the store (again, after Close); `clock` and `metrics` must outlive it.
  ::testing::AssertionResult Open(const Clock& clock, MetricsRegistry* metrics = nullptr, SqliteTuning tune = {});
  // Closes the store; the files stay, so Open (or Reopen) finds what was written.
  void Close();
  // Close, then Open with the same clock, metrics and tuning.
  ::testing::AssertionResult Reopen();

  store::sqlite::SqliteStore* get() const { return store_.get(); }
  store::sqlite::SqliteStore& operator*() const { return *store_; }
  store::sqlite::SqliteStore* operator->() const { return store_.get(); }
  explicit operator bool() const { return store_ != nullptr; }
  const std::string& dir() const { return dir_.path(); }

 private:
  TempDir dir_;
  const Clock* clock_ = nullptr;
  MetricsRegistry* metrics_ = nullptr;
  SqliteTuning tune_;
  std::unique_ptr<store::sqlite::SqliteStore> store_;
};

}  // namespace cairn::test_support
