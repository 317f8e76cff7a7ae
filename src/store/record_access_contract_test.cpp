// Record access behind the store seam (model/access.h): a query's reader is applied by the backend
// itself and agrees, record for record, with AccessScope::MayRead; events carry the access of the
// record as their write left it; updates and deletes respect WriteContext::access. Run against
// SqliteStore alone and behind the CachedStore.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <set>
#include <string>
#include <vector>

#include "base/clock.h"
#include "model/access.h"
#include "store/cached_store.h"
#include "store/sqlite/sqlite_store.h"
#include "support/sqlite_store.h"

namespace cairn::store {
namespace {

using model::AccessScope;
using model::RecordAcl;
using Ids = std::set<std::string>;

AccessScope Member(std::string principal, std::vector<std::string> roles) {
  AccessScope scope;
  scope.principal = std::move(principal);
  scope.roles = std::move(roles);
  return scope;
}

class RecordAccessContractTest : public ::testing::TestWithParam<bool> {  // param: behind CachedStore
 protected:
  void SetUp() override {
    ASSERT_TRUE(temp_.Open(clock_));
    store_ = temp_.get();
    if (GetParam()) {
      // A second view of the same database through the cache (writes go through it too).
      cached_ = std::make_unique<CachedStore>(std::make_unique<NonOwning>(*temp_), 100, clock_, nullptr);
      store_ = cached_.get();
    }
    // Every combination of visibility, acl and creator.
    const std::vector<std::optional<RecordAcl>> acls = {
        std::nullopt,
        RecordAcl{std::vector<std::string>{"bob"}, std::nullopt},
        RecordAcl{std::vector<std::string>{"role:developer"}, std::nullopt},
        RecordAcl{std::vector<std::string>{}, std::nullopt},
        RecordAcl{std::nullopt, std::vector<std::string>{"bob"}},
    };
    for (const char* visibility : {"public", "team", "private"}) {
      for (const auto& acl : acls) {
        for (const char* creator : {"alice", "bob"}) {
          model::BreadcrumbDraft draft;
          draft.title = std::string("quokka ") + visibility + " by " + creator;
          draft.visibility = visibility;
          draft.acl = acl;
          draft.tags = {"all"};
          auto created = store_->Create(model::WriteContext{"t1", creator}, draft, "");
          ASSERT_TRUE(created.ok()) << created.status().ToString();
          records_.push_back(created->breadcrumb);
        }
      }
    }
  }

  Ids Expected(const AccessScope& scope) const {
    Ids ids;
    for (const auto& crumb : records_) {
      if (scope.MayRead(crumb.visibility, crumb.created_by, crumb.acl)) ids.insert(crumb.id);
    }
    return ids;
  }

  // Every page of a listing with `scope`; each page but the last must be full.
  Ids Listed(const AccessScope& scope) {
    model::BreadcrumbQuery query;
    query.all_tags = {"all"};
    query.reader = scope;
    query.limit = 4;
    Ids ids;
    while (true) {
      auto page = store_->List("t1", query);
      EXPECT_TRUE(page.ok()) << page.status().ToString();
      if (!page.ok()) return ids;
      if (page->next_cursor) {
        EXPECT_EQ(page->items.size(), query.limit) << "a short page";
      }
      for (const auto& crumb : page->items) ids.insert(crumb.id);
      if (!page->next_cursor) return ids;
      query.cursor = page->next_cursor;
    }
  }

  // A store that forwards to one it does not own (so the cache can sit in front of temp_'s).
  class NonOwning final : public Store {
   public:
    explicit NonOwning(Store& inner) : inner_(inner) {}
    Result<CreateResult> Create(const model::WriteContext& c, const model::BreadcrumbDraft& d, const std::string& k) override {
      return inner_.Create(c, d, k);
    }
    Result<model::Breadcrumb> Get(const std::string& o, const std::string& id) override { return inner_.Get(o, id); }
    Result<model::Breadcrumb> Update(const model::WriteContext& c, const std::string& id, const model::BreadcrumbPatch& p,
                                     std::optional<int64_t> v) override {
      return inner_.Update(c, id, p, v);
    }
    Status Delete(const model::WriteContext& c, const std::string& id, std::optional<int64_t> v) override {
      return inner_.Delete(c, id, v);
    }
    Result<std::vector<WriteOutcome>> Apply(const model::WriteContext& c, const std::vector<WriteOp>& ops) override {
      return inner_.Apply(c, ops);
    }
    Result<Page> List(const std::string& o, const model::BreadcrumbQuery& q) override { return inner_.List(o, q); }
    Result<std::vector<model::BreadcrumbVersion>> History(const std::string& o, const std::string& id) override {
      return inner_.History(o, id);
    }
    Result<int64_t> SweepExpired() override { return inner_.SweepExpired(); }
    Result<StoreStats> Stats() override { return inner_.Stats(); }
    void Close() override {}

   private:
    Store& inner_;
  };

  ManualClock clock_{1'795'225'252'000'000};
  test_support::TempSqliteStore temp_{"cairn-access-test"};
  std::unique_ptr<CachedStore> cached_;
  Store* store_ = nullptr;
  std::vector<model::Breadcrumb> records_;
};

const std::vector<AccessScope>& Scopes() {
  static const std::vector<AccessScope> scopes = {
      Member("bob", {"reader", "user"}), Member("alice", {"reader", "user"}),
      Member("dana", {"reader", "user", "developer"}), Member("rita", {"reader"}), AccessScope::Everything()};
  return scopes;
}

TEST_P(RecordAccessContractTest, ListsHoldExactlyWhatTheReaderMayRead) {
  for (const AccessScope& scope : Scopes()) {
    Ids expected = Expected(scope);
    EXPECT_EQ(Listed(scope), expected) << scope.principal;
    EXPECT_FALSE(expected.empty());
  }
  EXPECT_EQ(Expected(AccessScope::Everything()).size(), records_.size());
  EXPECT_LT(Expected(Member("rita", {"reader"})).size(), records_.size()) << "the fixture must hide something";
}

TEST_P(RecordAccessContractTest, TextSearchHoldsExactlyWhatTheReaderMayRead) {
  for (const AccessScope& scope : Scopes()) {
    TextSearchQuery query;
    query.text = "quokka";
    query.limit = kMaxSearchLimit;
    query.reader = scope;
    auto hits = temp_->SearchText("t1", query);
    ASSERT_TRUE(hits.ok()) << hits.status().ToString();
    Ids found;
    for (const auto& hit : *hits) found.insert(hit.breadcrumb.id);
    EXPECT_EQ(found, Expected(scope)) << scope.principal;
  }
}

TEST_P(RecordAccessContractTest, TheAclIsStoredAndReadBack) {
  for (const auto& crumb : records_) {
    auto read = store_->Get("t1", crumb.id);
    ASSERT_TRUE(read.ok());
    EXPECT_EQ(read->acl, crumb.acl) << crumb.title;
  }
}

TEST_P(RecordAccessContractTest, EventsCarryTheAccessOfTheirRecord) {
  auto events = temp_->ReadEvents(0, 1000);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), records_.size());
  for (size_t i = 0; i < records_.size(); ++i) {
    const model::Event& event = (*events)[i];
    ASSERT_EQ(event.breadcrumb_id, records_[i].id);
    for (const AccessScope& scope : Scopes()) {
      EXPECT_EQ(event.MayBeReadBy(scope), scope.MayRead(records_[i].visibility, records_[i].created_by, records_[i].acl))
          << records_[i].title << " for " << scope.principal;
    }
  }
}

TEST_P(RecordAccessContractTest, WritesRespectTheWritersAccessAndChangeNothingWhenRefused) {
  model::WriteContext bob{"t1", "bob"};
  bob.access = Member("bob", {"reader", "user"});
  model::BreadcrumbPatch retitle;
  retitle.title.Set("changed");
  for (const auto& crumb : records_) {
    Status expected = model::CheckWrite(*bob.access, {crumb.id, crumb.visibility, crumb.created_by, crumb.acl}, false);
    auto updated = store_->Update(bob, crumb.id, retitle, std::nullopt);
    EXPECT_EQ(updated.status().code(), expected.code()) << crumb.title << ": " << updated.status().ToString();
    auto now = store_->Get("t1", crumb.id);
    ASSERT_TRUE(now.ok());
    EXPECT_EQ(now->version, expected.ok() ? 2 : 1) << crumb.title;
  }
  // Only the creator (or an admin) changes who may read.
  model::BreadcrumbPatch open_up;
  open_up.visibility.Set("public");
  const model::Breadcrumb& alices_team = records_[10];  // team, no acl, by alice
  ASSERT_EQ(alices_team.visibility, "team");
  ASSERT_EQ(alices_team.created_by, "alice");
  EXPECT_EQ(store_->Update(bob, alices_team.id, open_up, std::nullopt).status().code(), StatusCode::kPermissionDenied);
  const model::Breadcrumb& private_by_alice = records_[20];  // private, no acl, by alice
  ASSERT_EQ(private_by_alice.visibility, "private");
  EXPECT_EQ(store_->Delete(bob, private_by_alice.id, std::nullopt).code(), StatusCode::kNotFound);
  EXPECT_TRUE(store_->Get("t1", private_by_alice.id).ok());
}

TEST_P(RecordAccessContractTest, SecretAndCreatorFilters) {
  model::BreadcrumbDraft draft;
  draft.title = "quokka secret";
  draft.sensitivity = "secret";
  draft.tags = {"all"};
  ASSERT_TRUE(store_->Create(model::WriteContext{"t1", "carol"}, draft, "").ok());
  model::BreadcrumbQuery query;
  query.all_tags = {"all"};
  query.limit = 1000;
  query.exclude_secret = true;
  auto without = store_->List("t1", query);
  ASSERT_TRUE(without.ok());
  EXPECT_EQ(without->items.size(), records_.size());
  query.exclude_secret = false;
  query.created_by = "carol";
  auto by_carol = store_->List("t1", query);
  ASSERT_TRUE(by_carol.ok());
  ASSERT_EQ(by_carol->items.size(), 1u);
  EXPECT_EQ(by_carol->items[0].sensitivity, "secret");
}

INSTANTIATE_TEST_SUITE_P(Backends, RecordAccessContractTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& param) { return param.param ? "Cached" : "Sqlite"; });

}  // namespace
}  // namespace cairn::store
