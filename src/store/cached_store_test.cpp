#include "store/cached_store.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>

namespace cairn::store {
namespace {

// An in-memory Store that counts point reads and can run a hook inside Get (to interleave a write).
class FakeStore final : public Store {
 public:
  Result<CreateResult> Create(const model::WriteContext& ctx, const model::BreadcrumbDraft& draft,
                              const std::string&) override {
    if (replay) return CreateResult{records.begin()->second, true};
    model::Breadcrumb crumb;
    crumb.id = "id-" + std::to_string(records.size() + 1);
    crumb.owner_id = ctx.owner_id;
    crumb.title = draft.title;
    crumb.version = 1;
    crumb.ttl_micros = draft.ttl_micros;
    records[ctx.owner_id + "/" + crumb.id] = crumb;
    if (after_commit) std::exchange(after_commit, nullptr)();
    return CreateResult{crumb, false};
  }
  Result<model::Breadcrumb> Get(const std::string& owner_id, const std::string& id) override {
    ++gets;
    auto it = records.find(owner_id + "/" + id);
    if (it == records.end()) return Status::NotFound("missing");
    model::Breadcrumb copy = it->second;  // the value read "from disk"
    if (during_get) std::exchange(during_get, nullptr)();
    return copy;
  }
  Result<model::Breadcrumb> Update(const model::WriteContext& ctx, const std::string& id,
                                   const model::BreadcrumbPatch& patch, std::optional<int64_t>) override {
    auto& crumb = records.at(ctx.owner_id + "/" + id);
    if (patch.title.set) crumb.title = patch.title.value;
    ++crumb.version;
    model::Breadcrumb updated = crumb;
    if (after_commit) std::exchange(after_commit, nullptr)();
    return updated;
  }
  Status Delete(const model::WriteContext& ctx, const std::string& id, std::optional<int64_t>) override {
    return records.erase(ctx.owner_id + "/" + id) ? Status::Ok() : Status::NotFound("missing");
  }
  Result<std::vector<WriteOutcome>> Apply(const model::WriteContext&, const std::vector<WriteOp>&) override {
    return Status::Internal("batches are covered by the store contract test");
  }
  Result<Page> List(const std::string&, const model::BreadcrumbQuery&) override { return Page{}; }
  Result<std::vector<model::BreadcrumbVersion>> History(const std::string&, const std::string&) override {
    return std::vector<model::BreadcrumbVersion>{};
  }
  Result<int64_t> SweepExpired() override { return int64_t{0}; }
  Result<StoreStats> Stats() override { return StoreStats{}; }
  void Close() override {}

  std::map<std::string, model::Breadcrumb> records;
  int gets = 0;
  std::function<void()> during_get;
  // Runs inside Create or Update once the change is "committed" (its event published), before it
  // returns.
  std::function<void()> after_commit;
  bool replay = false;  // Create answers as a replay of the first record
};

class CachedStoreTest : public ::testing::Test {
 protected:
  CachedStoreTest() : clock_(1'000'000'000'000'000) {
    auto fake = std::make_unique<FakeStore>();
    fake_ = fake.get();
    cache_ = std::make_unique<CachedStore>(std::move(fake), 64, clock_, nullptr);
  }
  std::string Put(const std::string& title, std::optional<int64_t> ttl = std::nullopt) {
    model::BreadcrumbDraft draft;
    draft.title = title;
    draft.ttl_micros = ttl;
    return cache_->Create(ctx_, draft, "")->breadcrumb.id;
  }
  model::BreadcrumbPatch Title(const std::string& title) {
    model::BreadcrumbPatch patch;
    patch.title.Set(title);
    return patch;
  }

  ManualClock clock_;
  FakeStore* fake_ = nullptr;
  std::unique_ptr<CachedStore> cache_;
  model::WriteContext ctx_;
};

TEST_F(CachedStoreTest, SecondReadIsServedFromMemory) {
  std::string id = Put("a");
  ASSERT_TRUE(cache_->Update(ctx_, id, Title("b"), std::nullopt).ok());  // no longer cached
  ASSERT_EQ(cache_->Get("default", id)->title, "b");
  ASSERT_EQ(cache_->Get("default", id)->title, "b");
  EXPECT_EQ(fake_->gets, 1);
}

TEST_F(CachedStoreTest, CreatedRecordIsServedFromMemory) {
  std::string id = Put("a");
  ASSERT_EQ(cache_->Get("default", id)->title, "a");
  EXPECT_EQ(fake_->gets, 0);
}

TEST_F(CachedStoreTest, CreateThatRacedWithAnUpdateOfItIsNotCached) {
  std::string id;
  // A subscriber of the create's event updates the record before Create returns.
  fake_->after_commit = [&] {
    id = fake_->records.rbegin()->second.id;
    ASSERT_TRUE(cache_->Update(ctx_, id, Title("b"), std::nullopt).ok());
  };
  ASSERT_EQ(Put("a"), id);
  EXPECT_EQ(cache_->Get("default", id)->title, "b");
  EXPECT_EQ(fake_->gets, 1);
}

TEST_F(CachedStoreTest, AsyncCreatesAreCachedUnlessTheyRacedWithAWrite) {
  model::BreadcrumbDraft draft;
  draft.title = "a";
  std::string cached_id;
  cache_->CreateAsync(ctx_, draft, "", [&](Result<CreateResult> result) { cached_id = result->breadcrumb.id; });
  ASSERT_EQ(cache_->Get("default", cached_id)->title, "a");
  EXPECT_EQ(fake_->gets, 0);

  std::string raced_id;
  fake_->after_commit = [&] {
    raced_id = fake_->records.rbegin()->second.id;
    ASSERT_TRUE(cache_->Update(ctx_, raced_id, Title("b"), std::nullopt).ok());
  };
  std::string answered_id;
  cache_->CreateAsync(ctx_, draft, "", [&](Result<CreateResult> result) { answered_id = result->breadcrumb.id; });
  ASSERT_EQ(answered_id, raced_id);
  EXPECT_EQ(cache_->Get("default", raced_id)->title, "b");
  EXPECT_EQ(fake_->gets, 1);
}

TEST_F(CachedStoreTest, ReplayedCreateIsNotCached) {
  std::string id = Put("a");
  ASSERT_TRUE(cache_->Update(ctx_, id, Title("b"), std::nullopt).ok());
  fake_->replay = true;
  model::BreadcrumbDraft draft;
  draft.title = "a";
  auto replayed = cache_->Create(ctx_, draft, "key");
  ASSERT_TRUE(replayed.ok());
  EXPECT_TRUE(replayed->replayed);
  EXPECT_EQ(cache_->Get("default", id)->title, "b");
  EXPECT_EQ(fake_->gets, 1);
}

TEST_F(CachedStoreTest, ReadsBetweenCommitAndReturnSeeTheNewVersionAndFillNothing) {
  std::string id = Put("a");
  ASSERT_EQ(cache_->Get("default", id)->title, "a");  // cached
  std::string seen;
  fake_->after_commit = [&] { seen = cache_->Get("default", id)->title; };  // a subscriber of the event
  ASSERT_TRUE(cache_->Update(ctx_, id, Title("b"), std::nullopt).ok());
  EXPECT_EQ(seen, "b");
  int gets = fake_->gets;
  EXPECT_EQ(cache_->Get("default", id)->title, "b");
  EXPECT_EQ(cache_->Get("default", id)->title, "b");
  EXPECT_EQ(fake_->gets, gets + 1);  // filled again after the write, once
}

TEST_F(CachedStoreTest, UpdateIsVisibleToTheNextRead) {
  std::string id = Put("a");
  ASSERT_TRUE(cache_->Get("default", id).ok());
  ASSERT_TRUE(cache_->Update(ctx_, id, Title("b"), std::nullopt).ok());
  auto read = cache_->Get("default", id);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->title, "b");
  EXPECT_EQ(read->version, 2);
}

TEST_F(CachedStoreTest, DeleteIsVisibleToTheNextRead) {
  std::string id = Put("a");
  ASSERT_TRUE(cache_->Get("default", id).ok());
  ASSERT_TRUE(cache_->Delete(ctx_, id, std::nullopt).ok());
  EXPECT_EQ(cache_->Get("default", id).status().code(), StatusCode::kNotFound);
}

TEST_F(CachedStoreTest, ExpiredRecordIsHiddenEvenWhenCached) {
  std::string id = Put("a", clock_.NowMicros() + 1000);
  ASSERT_TRUE(cache_->Get("default", id).ok());
  clock_.Advance(1000);
  fake_->records.clear();  // the sweep would remove it; the cache must not resurrect it
  EXPECT_EQ(cache_->Get("default", id).status().code(), StatusCode::kNotFound);
}

TEST_F(CachedStoreTest, ReadThatRacedWithAWriteIsNotCached) {
  std::string id = Put("first");
  ASSERT_TRUE(cache_->Update(ctx_, id, Title("old"), std::nullopt).ok());  // not cached now
  // The inner read returns the old record, but an update lands before the fill.
  fake_->during_get = [&] { ASSERT_TRUE(cache_->Update(ctx_, id, Title("new"), std::nullopt).ok()); };
  EXPECT_EQ(cache_->Get("default", id)->title, "old");  // what the raced read saw
  EXPECT_EQ(cache_->Get("default", id)->title, "new");  // not the stale fill
  EXPECT_EQ(fake_->gets, 2);
}

TEST_F(CachedStoreTest, OwnersDoNotShareEntries) {
  std::string id = Put("a");
  ASSERT_TRUE(cache_->Get("default", id).ok());
  EXPECT_EQ(cache_->Get("other", id).status().code(), StatusCode::kNotFound);
}

TEST_F(CachedStoreTest, LeastRecentlyUsedEntriesAreEvicted) {
  std::vector<std::string> ids;
  for (int i = 0; i < 400; ++i) ids.push_back(Put("r" + std::to_string(i)));
  for (const auto& id : ids) ASSERT_TRUE(cache_->Get("default", id).ok());
  int before = fake_->gets;
  ASSERT_TRUE(cache_->Get("default", ids.front()).ok());  // long evicted (capacity 64)
  EXPECT_EQ(fake_->gets, before + 1);
  ASSERT_TRUE(cache_->Get("default", ids.back()).ok());  // just read: still cached
  EXPECT_EQ(fake_->gets, before + 1);
}

TEST(CachedStoreCapacityTest, ZeroCapacityCachesNothing) {
  ManualClock clock(0);
  auto fake = std::make_unique<FakeStore>();
  FakeStore* inner = fake.get();
  CachedStore cache(std::move(fake), 0, clock, nullptr);
  model::BreadcrumbDraft draft;
  draft.title = "a";
  std::string id = cache.Create({}, draft, "")->breadcrumb.id;
  ASSERT_TRUE(cache.Get("default", id).ok());
  ASSERT_TRUE(cache.Get("default", id).ok());
  EXPECT_EQ(inner->gets, 2);
}

}  // namespace
}  // namespace cairn::store
