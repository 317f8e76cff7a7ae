// What the PostgreSQL backend adds to the store contracts (store_contract_test.cpp runs those):
// several processes (here: several PgDatabase/PgStore pairs on one database) writing at once get
// one gap-free seq in commit order; other processes' commits reach a commit listener; text
// PostgreSQL cannot hold is refused and changes nothing; a server restart costs at most the
// writes in flight; the lease is held by one holder at a time and handed over when it goes.
#include "store/postgres/pg_store.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "base/clock.h"
#include "store/postgres/pg_lease.h"
#include "support/pg_database.h"
#include "support/postgres_server.h"

namespace cairn::store::postgres {
namespace {

using namespace std::chrono_literals;

model::BreadcrumbDraft Draft(std::string title) {
  model::BreadcrumbDraft draft;
  draft.title = std::move(title);
  draft.context = boost::json::object{{"n", 1}};
  return draft;
}

class PgStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = test_support::OpenFreshPgDatabase(nullptr, &uri_);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    first_ = std::make_unique<PgStore>(*db, PgStoreOptions{}, clock_);
    auto other = test_support::OpenPgDatabase(uri_);
    ASSERT_TRUE(other.ok()) << other.status().ToString();
    second_ = std::make_unique<PgStore>(*other, PgStoreOptions{}, clock_);
  }

  SystemClock clock_;
  std::string uri_;
  std::unique_ptr<PgStore> first_;   // one process
  std::unique_ptr<PgStore> second_;  // another, on the same database
  model::WriteContext ctx_{"default", "alice"};
};

TEST_F(PgStoreTest, TwoProcessesWritingAtOnceShareOneGapFreeSeqInCommitOrder) {
  constexpr int kPerWriter = 150;
  std::set<std::string> created;
  std::mutex mu;
  auto write = [&](PgStore& store, const std::string& who) {
    for (int i = 0; i < kPerWriter; ++i) {
      auto done = store.Create(ctx_, Draft(who + std::to_string(i)), "");
      ASSERT_TRUE(done.ok()) << done.status().ToString();
      std::lock_guard lock(mu);
      created.insert(done->breadcrumb.id);
    }
  };
  std::vector<std::thread> writers;
  for (int t = 0; t < 2; ++t) {
    writers.emplace_back(write, std::ref(*first_), "a" + std::to_string(t));
    writers.emplace_back(write, std::ref(*second_), "b" + std::to_string(t));
  }
  for (auto& writer : writers) writer.join();
  auto events = second_->ReadEvents(0, 10000);
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  ASSERT_EQ(events->size(), created.size());
  std::set<std::string> seen;
  for (size_t i = 0; i < events->size(); ++i) {
    EXPECT_EQ((*events)[i].seq, static_cast<int64_t>(i + 1));
    seen.insert((*events)[i].breadcrumb_id);
  }
  EXPECT_EQ(seen, created);
  EXPECT_EQ(first_->Stats()->last_event_seq, static_cast<int64_t>(created.size()));
}

TEST_F(PgStoreTest, AnotherProcessesCommitReachesTheCommitListenerWithoutItsEvents) {
  std::mutex mu;
  std::condition_variable cv;
  int inexact = 0;
  int exact_events = 0;
  first_->SetCommittedEventsListener([&](std::vector<model::Event> events, bool exact) {
    std::lock_guard lock(mu);
    if (exact) exact_events += static_cast<int>(events.size());
    if (!exact) ++inexact;
    cv.notify_all();
  });
  {
    // Once it listens, the notifier says so (commits before that are to be read from the log).
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, 20s, [&] { return inexact > 0; })) << "the notifier never listened";
    inexact = 0;
  }
  ASSERT_TRUE(first_->Create(ctx_, Draft("mine"), "").ok());
  ASSERT_TRUE(second_->Create(ctx_, Draft("theirs"), "").ok());
  std::unique_lock lock(mu);
  EXPECT_TRUE(cv.wait_for(lock, 20s, [&] { return inexact > 0; })) << "no word of the other process's commit";
  EXPECT_EQ(exact_events, 1);  // its own commit, handed over with its event
  lock.unlock();
  first_->SetCommittedEventsListener(nullptr);
}

TEST_F(PgStoreTest, TextPostgresCannotHoldIsRefusedAndChangesNothing) {
  auto created = first_->Create(ctx_, Draft(std::string("nul\0inside", 10)), "");
  EXPECT_EQ(created.status().code(), StatusCode::kInvalidArgument) << created.status().ToString();
  model::BreadcrumbDraft escaped = Draft("escaped nul in json");
  escaped.context = boost::json::object{{"s", std::string("a\0b", 3)}};
  auto json_nul = first_->Create(ctx_, escaped, "");
  EXPECT_EQ(json_nul.status().code(), StatusCode::kInvalidArgument) << json_nul.status().ToString();
  EXPECT_EQ(first_->Stats()->last_event_seq, 0);
  EXPECT_EQ(first_->Stats()->records, 0);
  EXPECT_TRUE(first_->Create(ctx_, Draft("fine"), "").ok());  // the writer goes on
}

TEST_F(PgStoreTest, AServerRestartCostsAtMostTheWritesInFlight) {
  auto before = first_->Create(ctx_, Draft("before"), "");
  ASSERT_TRUE(before.ok());
  ASSERT_TRUE(first_->Get("default", before->breadcrumb.id).ok());
  std::string why;
  test_support::PostgresServer* server = test_support::PostgresServer::Shared(&why);
  ASSERT_NE(server, nullptr) << why;
  ASSERT_TRUE(server->Restart().ok());
  // Idle connections were dropped by the restart: the writer and the readers open new ones.
  auto after = first_->Create(ctx_, Draft("after"), "");
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  auto read = first_->Get("default", before->breadcrumb.id);
  EXPECT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(first_->Stats()->last_event_seq, 2);
}

TEST(PgLeaseTest, OneHolderAtATimeAndTheNextTakesOverWhenItGoes) {
  std::string uri;
  auto db = test_support::OpenFreshPgDatabase(nullptr, &uri);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  PgLease::Options options{uri, 42, 20ms, 20ms};
  auto holder = std::make_unique<PgLease>(options);
  ASSERT_TRUE(holder->Acquire(nullptr).ok());
  PgLease waiter(options);
  std::mutex mu;
  std::condition_variable cv;
  bool acquired = false;
  std::thread waiting([&] {
    Status got = waiter.Acquire(nullptr);
    std::lock_guard lock(mu);
    acquired = got.ok();
    cv.notify_all();
  });
  {
    std::unique_lock lock(mu);
    EXPECT_FALSE(cv.wait_for(lock, 300ms, [&] { return acquired; })) << "two holders at once";
  }
  holder.reset();  // its connection closes: the server releases the lock
  {
    std::unique_lock lock(mu);
    EXPECT_TRUE(cv.wait_for(lock, 20s, [&] { return acquired; })) << "the lease was not handed over";
  }
  waiting.join();
  EXPECT_TRUE(waiter.held());
}

TEST(PgLeaseTest, AHolderWhoseConnectionBreaksIsToldAtOnce) {
  std::string uri;
  auto db = test_support::OpenFreshPgDatabase(nullptr, &uri);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  PgLease lease({uri, 43, 20ms, 20ms});
  std::mutex mu;
  std::condition_variable cv;
  bool lost = false;
  ASSERT_TRUE(lease.Acquire([&] {
    std::lock_guard lock(mu);
    lost = true;
    cv.notify_all();
  }).ok());
  // An administrator (or a network failure) ends the lease's session.
  auto admin = PgConnection::Open(uri);
  ASSERT_TRUE(admin.ok());
  ASSERT_TRUE((*admin)->Exec("SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' "
                             "AND objid = 43").ok());
  std::unique_lock lock(mu);
  EXPECT_TRUE(cv.wait_for(lock, 20s, [&] { return lost; }));
  EXPECT_FALSE(lease.held());
}

}  // namespace
}  // namespace cairn::store::postgres
