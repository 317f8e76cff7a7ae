// PgShardLeases (store/postgres/pg_shard_leases.h) on the tests' own PostgreSQL server, a fresh
// database per test: processes (here: several PgShardLeases on one database) hold disjoint shards,
// share them fairly as they join, keep a shard given up until its work says it ended, take over
// the shards of one that goes, and a holder whose connection breaks is told.
#include "store/postgres/pg_shard_leases.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "store/postgres/pg_lease.h"
#include "support/pg_database.h"
#include "support/postgres_server.h"

namespace cairn::store::postgres {
namespace {

using namespace std::chrono_literals;

constexpr int kShards = 8;

// The shards each member works on, as its callbacks were told, checked to never overlap.
class Board {
 public:
  PgShardLeases::Callbacks For(const std::string& member) {
    PgShardLeases::Callbacks callbacks;
    callbacks.take = [this, member](int shard) {
      std::lock_guard lock(mu_);
      for (const auto& [other, shards] : working_) {
        if (other != member && shards.count(shard)) overlaps_.push_back(shard);
      }
      working_[member].insert(shard);
      cv_.notify_all();
    };
    callbacks.release = [this, member](int shard) {
      std::lock_guard lock(mu_);
      releasing_[member].insert(shard);
      cv_.notify_all();
    };
    // A shard's work ends when the test lets it (`hold_work`), as runs in flight would.
    callbacks.released = [this, member](int shard) {
      std::lock_guard lock(mu_);
      if (hold_work_) return false;
      working_[member].erase(shard);
      releasing_[member].erase(shard);
      cv_.notify_all();
      return true;
    };
    callbacks.on_lost = [this, member] {
      std::lock_guard lock(mu_);
      lost_.insert(member);
      working_.erase(member);
      cv_.notify_all();
    };
    return callbacks;
  }
  // Waits until `pred` (called with the board locked) holds.
  template <typename Pred>
  bool Await(Pred pred, std::chrono::milliseconds timeout = 20s) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return pred(); });
  }
  size_t Working(const std::string& member) { return working_[member].size(); }  // with the board locked
  size_t Releasing(const std::string& member) { return releasing_[member].size(); }
  bool Lost(const std::string& member) { return lost_.count(member) > 0; }
  void Forget(const std::string& member) {
    std::lock_guard lock(mu_);
    working_.erase(member);
  }
  void HoldWork(bool hold) {
    std::lock_guard lock(mu_);
    hold_work_ = hold;
  }
  std::vector<int> Overlaps() {
    std::lock_guard lock(mu_);
    return overlaps_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::set<int>> working_;
  std::map<std::string, std::set<int>> releasing_;
  std::set<std::string> lost_;
  std::vector<int> overlaps_;
  bool hold_work_ = false;
};

class PgShardLeasesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = test_support::OpenFreshPgDatabase(nullptr, &uri_);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
  }
  std::unique_ptr<PgShardLeases> Leases(int64_t legacy_key = 0) {
    PgShardLeases::Options options;
    options.legacy_key = legacy_key;
    options.uri = uri_;
    options.shard_key = 5000;
    options.member_key = 9000;
    options.shards = kShards;
    options.max_members = 4;
    options.period = 20ms;
    options.purpose = "test shards";
    return std::make_unique<PgShardLeases>(options);
  }
  std::string uri_;
  Board board_;
};

TEST_F(PgShardLeasesTest, MembersShareTheShardsFairlyAndTakeOverThoseOfOneThatGoes) {
  auto a = Leases();
  a->Start(board_.For("a"));
  ASSERT_TRUE(board_.Await([&] { return board_.Working("a") == kShards; })) << "a alone takes every shard";

  auto b = Leases();
  b->Start(board_.For("b"));
  ASSERT_TRUE(board_.Await([&] { return board_.Working("a") == 4 && board_.Working("b") == 4; }))
      << "two members hold half each";
  auto c = Leases();
  c->Start(board_.For("c"));
  // ceil(8 / 3) = 3: two hold 3, one holds 2; every shard held once.
  ASSERT_TRUE(board_.Await([&] {
    return board_.Working("a") + board_.Working("b") + board_.Working("c") == kShards && board_.Working("a") <= 3 &&
           board_.Working("b") <= 3 && board_.Working("c") <= 3;
  }));

  c->Halt();  // no more callbacks from c; it still holds its locks
  board_.Forget("c");
  c.reset();  // its connection closes: the server releases its locks
  ASSERT_TRUE(board_.Await([&] { return board_.Working("a") == 4 && board_.Working("b") == 4; }))
      << "the shards of the member that went are taken over";
  EXPECT_EQ(b->members(), 2);
  EXPECT_TRUE(board_.Overlaps().empty()) << "a shard was worked on by two members at once";
}

TEST_F(PgShardLeasesTest, AShardGivenUpStaysLockedUntilItsWorkEnded) {
  auto a = Leases();
  a->Start(board_.For("a"));
  ASSERT_TRUE(board_.Await([&] { return board_.Working("a") == kShards; }));
  board_.HoldWork(true);  // a's runs in flight go on
  auto b = Leases();
  b->Start(board_.For("b"));
  ASSERT_TRUE(board_.Await([&] { return board_.Releasing("a") == 4; })) << "a gives half up";
  EXPECT_FALSE(board_.Await([&] { return board_.Working("b") > 0; }, 300ms))
      << "b took a shard whose work had not ended";
  EXPECT_EQ(a->held(), static_cast<size_t>(kShards));
  board_.HoldWork(false);
  ASSERT_TRUE(board_.Await([&] { return board_.Working("a") == 4 && board_.Working("b") == 4; }));
  EXPECT_TRUE(board_.Overlaps().empty());
}

// A process of an older version did the whole work under one lease: never both at once.
TEST_F(PgShardLeasesTest, NoShardIsTakenWhileAnOlderProcessHoldsTheWholeWorksLease) {
  auto older = std::make_unique<PgLease>(PgLease::Options{uri_, 7000, 20ms, 20ms});
  ASSERT_TRUE(older->Acquire(nullptr).ok());
  auto a = Leases(7000);
  a->Start(board_.For("a"));
  EXPECT_FALSE(board_.Await([&] { return board_.Working("a") > 0; }, 300ms)) << "a shard taken beside the older process";
  older.reset();
  ASSERT_TRUE(board_.Await([&] { return board_.Working("a") == kShards; }));
  // And an older process started now cannot take the whole work's lease.
  PgLease later(PgLease::Options{uri_, 7000, 20ms, 20ms});
  std::thread stopper([&] {
    std::this_thread::sleep_for(300ms);  // the bound of the wait that must not succeed
    later.RequestStop();
  });
  EXPECT_FALSE(later.Acquire(nullptr).ok());
  stopper.join();
}

TEST_F(PgShardLeasesTest, AHolderWhoseConnectionBreaksIsTold) {
  auto a = Leases();
  a->Start(board_.For("a"));
  ASSERT_TRUE(board_.Await([&] { return board_.Working("a") == kShards; }));
  auto admin = PgConnection::Open(uri_);
  ASSERT_TRUE(admin.ok());
  ASSERT_TRUE((*admin)->Exec("SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' "
                             "AND objid = 9000 AND database = (SELECT oid FROM pg_database WHERE datname = "
                             "current_database())").ok());
  EXPECT_TRUE(board_.Await([&] { return board_.Lost("a"); }));
  EXPECT_EQ(a->held(), 0u);
}

}  // namespace
}  // namespace cairn::store::postgres
