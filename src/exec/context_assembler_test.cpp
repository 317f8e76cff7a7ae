// Context assembly (exec/context_assembler.h) against a real SqliteStore in a temporary
// directory: what each fetch method puts under its key, owner scoping, path globs, context rules
// and tags, and the store query a selector becomes.
#include "exec/context_assembler.h"

#include <gtest/gtest.h>

#include <boost/json/array.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/metrics.h"
#include "exec/context_budget.h"
#include "exec/executor.h"
#include "model/breadcrumb_codec.h"
#include "search/exact_vector_search.h"
#include "search/hashing_embedder.h"
#include "search/record_text.h"
#include "store/sqlite/sqlite_store.h"
#include "support/sqlite_store.h"

namespace cairn::exec {
namespace {

namespace json = boost::json;
using model::FetchMethod;
using model::Selector;
using model::Subscription;
using model::SubscriptionRole;

constexpr int64_t kStart = 1'795'225'252'000'000;

// What to create; built fluently, e.g. Rec().Path("docs/a").Owner("acme").
struct Rec {
  std::optional<std::string> schema = "note.v1";
  std::optional<std::string> path;
  std::vector<std::string> tags;
  std::string context = "{}";
  std::string owner = "default";
  Rec& Schema(std::string v) {
    schema = std::move(v);
    return *this;
  }
  Rec& Path(std::string v) {
    path = std::move(v);
    return *this;
  }
  Rec& Tags(std::vector<std::string> v) {
    tags = std::move(v);
    return *this;
  }
  Rec& Ctx(std::string v) {
    context = std::move(v);
    return *this;
  }
  Rec& Owner(std::string v) {
    owner = std::move(v);
    return *this;
  }
};

Selector SchemaSelector(std::string schema) {
  Selector s;
  s.schema_name = std::move(schema);
  return s;
}

Selector PathSelector(std::string glob) {
  Selector s;
  s.path = std::move(glob);
  return s;
}

Subscription ContextSub(std::string key, FetchMethod fetch, Selector selector, size_t limit = 10) {
  Subscription sub;
  sub.role = SubscriptionRole::kContext;
  sub.key = std::move(key);
  sub.fetch = fetch;
  sub.selector = std::move(selector);
  sub.limit = limit;
  return sub;
}

class ContextAssemblerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(store_.Open(clock_, &metrics_));
  }

  // Creates a record; records created later are "newer" (the store orders by insertion). The
  // clock moves on too, so timestamps differ.
  model::Breadcrumb Create(const Rec& rec, std::string title = "r") {
    model::BreadcrumbDraft draft;
    draft.schema_name = rec.schema;
    draft.title = std::move(title);
    draft.path = rec.path;
    draft.tags = rec.tags;
    draft.context = json::parse(rec.context);
    clock_.Advance(1000);
    auto created = store_->Create(model::WriteContext{rec.owner, "alice"}, draft, "");
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return created.ok() ? created->breadcrumb : model::Breadcrumb{};
  }

  // A trigger event as the bus would carry it (only what matching looks at matters here).
  static model::Event TriggerEvent(std::string schema, std::string owner = "default") {
    model::Event e;
    e.seq = 99;
    e.type = "breadcrumb.created";
    e.breadcrumb_id = "trigger-id";
    e.version = 1;
    e.schema_name = std::move(schema);
    e.title = "the trigger";
    e.owner_id = std::move(owner);
    e.created_by = "alice";
    e.context = json::object{{"q", "hello"}};
    return e;
  }

  json::object Assemble(const std::vector<Subscription>& subs, const std::string& owner = "default",
                        const std::string& trigger_schema = "task.v1") {
    model::Event event = TriggerEvent(trigger_schema, owner);
    return AssembleContext(*store_, owner, event, TriggerView(event), subs);
  }

  std::vector<std::string> FetchIds(const Selector& selector, size_t limit, const std::string& owner = "default") {
    auto found = FetchMatching(*store_, owner, selector, limit);
    EXPECT_TRUE(found.ok()) << found.status().ToString();
    std::vector<std::string> ids;
    if (found.ok()) {
      for (const auto& crumb : *found) ids.push_back(crumb.id);
    }
    return ids;
  }

  static std::vector<std::string> Ids(const json::value& array) {
    std::vector<std::string> ids;
    for (const auto& item : array.as_array()) ids.emplace_back(item.as_object().at("id").as_string());
    return ids;
  }

  ManualClock clock_{kStart};
  MetricsRegistry metrics_;
  test_support::TempSqliteStore store_{"cairn-ctx-test"};
};

TEST_F(ContextAssemblerTest, LatestIsTheNewestMatchAsAFullView) {
  Create(Rec());
  Create(Rec());
  model::Breadcrumb newest = Create(Rec().Path("notes/3").Tags({"t"}).Ctx(R"({"n":3})"), "third");
  Create(Rec().Schema("other.v1"));  // newer, but another schema

  json::object ctx = Assemble({ContextSub("note", FetchMethod::kLatest, SchemaSelector("note.v1"))});
  ASSERT_TRUE(ctx.contains("note"));
  ASSERT_TRUE(ctx["note"].is_object());
  const json::object& note = ctx["note"].as_object();
  EXPECT_EQ(note.at("id").as_string(), newest.id);
  EXPECT_EQ(note.at("context"), json::parse(R"({"n":3})"));
  // The whole record, exactly as FullView renders the stored one.
  auto stored = store_->Get("default", newest.id);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(ctx["note"], json::value(model::FullView(*stored)));
  for (const char* field : {"version", "path", "tags", "owner_id", "created_by", "trace", "checksum"}) {
    EXPECT_TRUE(note.contains(field)) << field;
  }
  // The trigger is always there, as given.
  model::Event event = TriggerEvent("task.v1");
  EXPECT_EQ(ctx["trigger"], json::value(TriggerView(event)));
}

TEST_F(ContextAssemblerTest, RecentIsNewestFirstAndAtMostLimit) {
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(Create(Rec().Ctx("{\"i\":" + std::to_string(i) + "}")).id);
  Create(Rec().Schema("other.v1"));

  json::object ctx = Assemble({ContextSub("three", FetchMethod::kRecent, SchemaSelector("note.v1"), 3),
                               ContextSub("all", FetchMethod::kRecent, SchemaSelector("note.v1"), 10)});
  ASSERT_TRUE(ctx["three"].is_array());
  EXPECT_EQ(Ids(ctx["three"]), (std::vector<std::string>{ids[4], ids[3], ids[2]}));
  EXPECT_EQ(Ids(ctx["all"]), (std::vector<std::string>{ids[4], ids[3], ids[2], ids[1], ids[0]}));
  // Items are full views too (context included).
  EXPECT_EQ(ctx["three"].as_array()[0].as_object().at("context"), json::parse(R"({"i":4})"));
}

TEST_F(ContextAssemblerTest, SectionsComeInDescendingPriorityThenDefinitionOrder) {
  Create(Rec());
  Subscription first = ContextSub("first", FetchMethod::kLatest, SchemaSelector("note.v1"), 1);
  Subscription second = ContextSub("second", FetchMethod::kLatest, SchemaSelector("note.v1"), 1);
  Subscription urgent = ContextSub("urgent", FetchMethod::kLatest, SchemaSelector("note.v1"), 1);
  Subscription last = ContextSub("last", FetchMethod::kLatest, SchemaSelector("note.v1"), 1);
  urgent.priority = 5;
  last.priority = -1;
  json::object ctx = Assemble({last, first, urgent, second});
  std::vector<std::string> keys;
  for (const auto& [key, value] : ctx) keys.emplace_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"trigger", "urgent", "first", "second", "last"}));
}

TEST_F(ContextAssemblerTest, SameTagPrefixKeepsRecordsOfTheTriggersSession) {
  std::string mine1 = Create(Rec().Tags({"session:a"})).id;
  Create(Rec().Tags({"session:b"}));
  std::string mine2 = Create(Rec().Tags({"session:a", "x"})).id;
  Create(Rec());  // no session at all
  Subscription history = ContextSub("history", FetchMethod::kRecent, SchemaSelector("note.v1"), 10);
  history.same_tag_prefix = "session:";

  model::Event event = TriggerEvent("task.v1");
  event.tags = {"session:a"};
  json::object ctx = AssembleContext(*store_, "default", event, TriggerView(event), {history});
  ASSERT_TRUE(ctx.contains("history"));
  EXPECT_EQ(Ids(ctx["history"]), (std::vector<std::string>{mine2, mine1}));

  // A trigger without a session tag has no history (not everything).
  model::Event lone = TriggerEvent("task.v1");
  json::object none = AssembleContext(*store_, "default", lone, TriggerView(lone), {history});
  EXPECT_FALSE(none.contains("history"));
}

TEST_F(ContextAssemblerTest, NoMatchRecentIsEmptyArrayAndLatestIsAbsent) {
  Create(Rec().Schema("other.v1"));
  json::object ctx = Assemble({ContextSub("recent", FetchMethod::kRecent, SchemaSelector("none.v1"), 5),
                               ContextSub("latest", FetchMethod::kLatest, SchemaSelector("none.v1"))});
  ASSERT_TRUE(ctx.contains("recent"));
  EXPECT_EQ(ctx["recent"], json::array());
  EXPECT_FALSE(ctx.contains("latest"));
  EXPECT_EQ(ctx.size(), 2u);  // trigger + recent
}

TEST_F(ContextAssemblerTest, EventDataIsTheTriggerOnlyWhenItMatchesThatSelector) {
  json::object ctx = Assemble({ContextSub("mine", FetchMethod::kEventData, SchemaSelector("task.v1")),
                               ContextSub("theirs", FetchMethod::kEventData, SchemaSelector("other.v1"))});
  ASSERT_TRUE(ctx.contains("mine"));
  EXPECT_EQ(ctx["mine"], ctx["trigger"]);
  EXPECT_FALSE(ctx.contains("theirs"));
}

TEST_F(ContextAssemblerTest, TriggerSubscriptionsAddNothingButTrigger) {
  Create(Rec());
  Subscription trigger_sub;
  trigger_sub.role = SubscriptionRole::kTrigger;
  trigger_sub.key = "note";
  trigger_sub.fetch = FetchMethod::kLatest;  // ignored for a trigger: it is never fetched
  trigger_sub.selector = SchemaSelector("note.v1");
  json::object ctx = Assemble({trigger_sub});
  EXPECT_EQ(ctx.size(), 1u);
  EXPECT_TRUE(ctx.contains("trigger"));
}

TEST_F(ContextAssemblerTest, RecordsOfAnotherOwnerAreNeverFetched) {
  model::Breadcrumb mine = Create(Rec().Path("docs/a/page"));
  Create(Rec().Path("docs/b/page").Owner("acme"));  // newer, same schema, another tenant
  Create(Rec().Owner("acme"));

  json::object ctx = Assemble({ContextSub("latest", FetchMethod::kLatest, SchemaSelector("note.v1")),
                               ContextSub("recent", FetchMethod::kRecent, SchemaSelector("note.v1"), 10),
                               ContextSub("glob", FetchMethod::kRecent, PathSelector("docs/**"), 10)});
  EXPECT_EQ(ctx["latest"].as_object().at("id").as_string(), mine.id);
  EXPECT_EQ(Ids(ctx["recent"]), (std::vector<std::string>{mine.id}));
  EXPECT_EQ(Ids(ctx["glob"]), (std::vector<std::string>{mine.id}));

  // A tenant with no records sees nothing, although the other two have matches.
  json::object empty = Assemble({ContextSub("latest", FetchMethod::kLatest, SchemaSelector("note.v1")),
                                 ContextSub("recent", FetchMethod::kRecent, SchemaSelector("note.v1"), 10)},
                                "nobody");
  EXPECT_FALSE(empty.contains("latest"));
  EXPECT_EQ(empty["recent"], json::array());
}

class ContextAssemblerGlobTest : public ContextAssemblerTest {
 protected:
  void SetUp() override {
    ContextAssemblerTest::SetUp();
    if (HasFatalFailure()) return;
    a_page_ = Create(Rec().Path("docs/a/page")).id;
    b_page_ = Create(Rec().Path("docs/b/page")).id;
    a_other_ = Create(Rec().Path("docs/a/other")).id;
    deep_page_ = Create(Rec().Path("docs/a/b/page")).id;
    misc_page_ = Create(Rec().Path("misc/x/page")).id;
    docsx_page_ = Create(Rec().Path("docsx/a/page")).id;  // shares the text "docs", not the segment
    Create(Rec());  // no path: never matches a path selector
  }
  std::string a_page_, b_page_, a_other_, deep_page_, misc_page_, docsx_page_;
};

TEST_F(ContextAssemblerGlobTest, SingleSegmentWildcardWithLiteralPrefix) {
  EXPECT_EQ(FetchIds(PathSelector("docs/*/page"), 10), (std::vector<std::string>{b_page_, a_page_}));
}

TEST_F(ContextAssemblerGlobTest, DoubleWildcardSpansAnyDepthUnderThePrefix) {
  EXPECT_EQ(FetchIds(PathSelector("docs/**"), 10),
            (std::vector<std::string>{deep_page_, a_other_, b_page_, a_page_}));
  EXPECT_EQ(FetchIds(PathSelector("docs/a/**"), 10), (std::vector<std::string>{deep_page_, a_other_, a_page_}));
}

TEST_F(ContextAssemblerGlobTest, GlobStartingWithAWildcard) {
  EXPECT_EQ(FetchIds(PathSelector("*/x/page"), 10), (std::vector<std::string>{misc_page_}));
  EXPECT_EQ(FetchIds(PathSelector("**/page"), 10),
            (std::vector<std::string>{docsx_page_, misc_page_, deep_page_, b_page_, a_page_}));
  EXPECT_EQ(FetchIds(PathSelector("**/page"), 2), (std::vector<std::string>{docsx_page_, misc_page_}));
}

TEST_F(ContextAssemblerGlobTest, LiteralPathIsExact) {
  EXPECT_EQ(FetchIds(PathSelector("docs/a/page"), 10), (std::vector<std::string>{a_page_}));
  EXPECT_EQ(FetchIds(PathSelector("docs/a"), 10), (std::vector<std::string>{}));  // not a prefix match
}

TEST_F(ContextAssemblerGlobTest, GlobsThroughAssembleContext) {
  json::object ctx = Assemble({ContextSub("latest", FetchMethod::kLatest, PathSelector("docs/*/page")),
                               ContextSub("recent", FetchMethod::kRecent, PathSelector("*/*/page"), 10)});
  EXPECT_EQ(ctx["latest"].as_object().at("id").as_string(), b_page_);
  EXPECT_EQ(Ids(ctx["recent"]), (std::vector<std::string>{docsx_page_, misc_page_, b_page_, a_page_}));
}

// "latest" promises the newest matching record. With a glob the store query cannot express, the
// matching record may sit behind many newer records that share the literal prefix (or, for a glob
// starting with a wildcard, behind any newer records at all); it must still be found.
TEST_F(ContextAssemblerGlobTest, LatestFindsAGlobMatchBehindManyNewerNonMatches) {
  for (int i = 0; i < 15; ++i) Create(Rec().Path("docs/a/other" + std::to_string(i)));
  json::object ctx = Assemble({ContextSub("prefixed", FetchMethod::kLatest, PathSelector("docs/*/page")),
                               ContextSub("wild", FetchMethod::kLatest, PathSelector("**/page"))});
  EXPECT_TRUE(ctx.contains("prefixed")) << "newest match for docs/*/page not found";
  if (ctx.contains("prefixed")) {
    EXPECT_EQ(ctx["prefixed"].as_object().at("id").as_string(), b_page_);
  }
  EXPECT_TRUE(ctx.contains("wild")) << "newest match for **/page not found";
  if (ctx.contains("wild")) {
    EXPECT_EQ(ctx["wild"].as_object().at("id").as_string(), docsx_page_);
  }
  EXPECT_EQ(FetchIds(PathSelector("docs/*/page"), 1), (std::vector<std::string>{b_page_}));
}

TEST_F(ContextAssemblerTest, ContextRulesAndTagsApply) {
  std::string low = Create(Rec().Tags({"team:a"}).Ctx(R"({"priority":1,"kind":"bug"})")).id;
  std::string high_a = Create(Rec().Tags({"team:a", "urgent"}).Ctx(R"({"priority":5,"kind":"bug"})")).id;
  std::string high_b = Create(Rec().Tags({"team:b"}).Ctx(R"({"priority":7,"kind":"feature"})")).id;
  std::string untagged = Create(Rec().Ctx(R"({"priority":9,"kind":"bug"})")).id;

  Selector rules = SchemaSelector("note.v1");
  rules.context_match = {model::ContextRule{"$.priority", model::RuleOp::kGte, json::value(5)},
                         model::ContextRule{"$.kind", model::RuleOp::kEq, json::value("bug")}};
  EXPECT_EQ(FetchIds(rules, 10), (std::vector<std::string>{untagged, high_a}));

  Selector all = SchemaSelector("note.v1");
  all.all_tags = {"team:a", "urgent"};
  EXPECT_EQ(FetchIds(all, 10), (std::vector<std::string>{high_a}));

  Selector any = SchemaSelector("note.v1");
  any.any_tags = {"team:b", "urgent"};
  EXPECT_EQ(FetchIds(any, 10), (std::vector<std::string>{high_b, high_a}));

  Selector both = any;
  both.context_match = {model::ContextRule{"$.priority", model::RuleOp::kLt, json::value(6)}};
  json::object ctx = Assemble({ContextSub("latest", FetchMethod::kLatest, both),
                               ContextSub("recent", FetchMethod::kRecent, rules, 10)});
  EXPECT_EQ(ctx["latest"].as_object().at("id").as_string(), high_a);
  EXPECT_EQ(Ids(ctx["recent"]), (std::vector<std::string>{untagged, high_a}));
  (void)low;
}

TEST(QueryForSelectorTest, LiteralPathBecomesAnExactPath) {
  model::BreadcrumbQuery q = QueryForSelector(PathSelector("docs/a/page"), 7);
  EXPECT_EQ(q.path, "docs/a/page");
  EXPECT_FALSE(q.path_prefix.has_value());
  EXPECT_EQ(q.limit, 7u);
  EXPECT_EQ(q.order, model::SortOrder::kNewestFirst);
  EXPECT_TRUE(q.include_context);
}

TEST(QueryForSelectorTest, GlobBecomesItsLiteralPrefix) {
  model::BreadcrumbQuery star = QueryForSelector(PathSelector("docs/*/page"), 1);
  EXPECT_FALSE(star.path.has_value());
  EXPECT_EQ(star.path_prefix, "docs");

  model::BreadcrumbQuery deep = QueryForSelector(PathSelector("docs/a/**"), 1);
  EXPECT_FALSE(deep.path.has_value());
  EXPECT_EQ(deep.path_prefix, "docs/a");

  // Nothing literal before the first wildcard: no path condition at all (filtered afterwards).
  for (const char* glob : {"**/page", "*/x/page", "**"}) {
    model::BreadcrumbQuery q = QueryForSelector(PathSelector(glob), 1);
    EXPECT_FALSE(q.path.has_value()) << glob;
    EXPECT_FALSE(q.path_prefix.has_value()) << glob;
  }
}

TEST(QueryForSelectorTest, CopiesSchemaTagsAndRulesButNotTypes) {
  Selector s = SchemaSelector("note.v1");
  s.all_tags = {"a", "b"};
  s.any_tags = {"c"};
  s.context_match = {model::ContextRule{"$.x", model::RuleOp::kEq, json::value(1)}};
  s.types = {"breadcrumb.updated"};
  model::BreadcrumbQuery q = QueryForSelector(s, 3);
  EXPECT_EQ(q.schema_name, "note.v1");
  EXPECT_EQ(q.all_tags, s.all_tags);
  EXPECT_EQ(q.any_tags, s.any_tags);
  EXPECT_EQ(q.context_match, s.context_match);
  EXPECT_FALSE(q.path.has_value());
  EXPECT_FALSE(q.path_prefix.has_value());
  EXPECT_FALSE(q.cursor.has_value());
}

}  // namespace
}  // namespace cairn::exec

namespace cairn::exec {
namespace {

// fetch: search and vector, through a Searcher over the same store (vectors put directly, as the
// embedding worker would).
class SimilarContextTest : public ContextAssemblerTest {
 protected:
  model::Breadcrumb CreateEmbedded(const Rec& rec, std::string title) {
    model::Breadcrumb crumb = Create(rec, std::move(title));
    EXPECT_TRUE(store_->PutVectors(embedder_.model(),
                                   {{crumb.owner_id, crumb.id, crumb.version, embedder_.EmbedOne(search::RecordText(crumb))}},
                                   {}, "", 0).ok());
    return crumb;
  }
  json::object AssembleAbout(const std::string& question, const std::vector<Subscription>& subs,
                             const search::Searcher* searcher) {
    model::Event event = TriggerEvent("question.v1");
    event.breadcrumb_id = trigger_.id;
    event.title = "a question";
    event.context = json::object{{"text", question}};
    return AssembleContext(*store_, "default", event, TriggerView(event), subs, searcher);
  }
  std::vector<std::string> Titles(const json::value& array) {
    std::vector<std::string> titles;
    for (const auto& item : array.as_array()) titles.emplace_back(item.as_object().at("title").as_string());
    return titles;
  }

  search::HashingEmbedder embedder_;
  model::Breadcrumb trigger_;
};

TEST_F(SimilarContextTest, SearchAndVectorFetchTheMostSimilarMatchingRecordsNotTheTrigger) {
  CreateEmbedded(Rec().Ctx(R"({"text":"boats in the Lisbon harbour"})"), "harbour");
  CreateEmbedded(Rec().Ctx(R"({"text":"quarterly tax filing"})"), "tax");
  CreateEmbedded(Rec().Ctx(R"({"text":"the harbour of Porto"})").Tags({"north"}), "porto");
  CreateEmbedded(Rec().Schema("other.v1").Ctx(R"({"text":"Lisbon harbour boats again"})"), "other schema");
  trigger_ = CreateEmbedded(Rec().Schema("question.v1").Ctx(R"({"text":"Which boats are in the Lisbon harbour?"})"),
                            "the question");
  search::ExactVectorSearch vectors(*store_, *store_, embedder_);
  search::Searcher searcher(*store_, &vectors);
  Selector notes = SchemaSelector("note.v1");
  Selector anything;
  json::object ctx = AssembleAbout("Which boats are in the Lisbon harbour?",
                                   {ContextSub("text", FetchMethod::kSearch, notes, 2),
                                    ContextSub("similar", FetchMethod::kVector, notes, 2),
                                    ContextSub("all", FetchMethod::kVector, anything, 10)},
                                   &searcher);
  ASSERT_TRUE(ctx.contains("text")) << json::serialize(ctx);
  EXPECT_EQ(Titles(ctx["text"]), (std::vector<std::string>{"harbour", "porto"}));
  ASSERT_TRUE(ctx.contains("similar"));
  EXPECT_EQ(Titles(ctx["similar"]).front(), "harbour");
  EXPECT_EQ(Titles(ctx["similar"]).size(), 2u);
  std::vector<std::string> all = Titles(ctx["all"]);
  EXPECT_EQ(all.size(), 4u);  // everything but the trigger itself
  EXPECT_EQ(std::count(all.begin(), all.end(), "the question"), 0);
  // The selector's other parts still apply: any_tags is checked on the results.
  Selector north = SchemaSelector("note.v1");
  north.any_tags = {"north"};
  json::object tagged = AssembleAbout("harbour", {ContextSub("north", FetchMethod::kVector, north, 5)}, &searcher);
  EXPECT_EQ(Titles(tagged["north"]), std::vector<std::string>{"porto"});
}

TEST_F(SimilarContextTest, AQueryExpressionChoosesTheSearchText) {
  CreateEmbedded(Rec().Ctx(R"({"text":"boats in the Lisbon harbour"})"), "harbour");
  CreateEmbedded(Rec().Ctx(R"({"text":"quarterly tax filing"})"), "tax");
  search::ExactVectorSearch vectors(*store_, *store_, embedder_);
  search::Searcher searcher(*store_, &vectors);
  auto subs = model::ParseSubscriptions(json::parse(R"([
      {"schema_name": "note.v1", "role": "context", "key": "by_topic", "fetch": "search", "limit": 1, "query": "record.context.topic"},
      {"schema_name": "note.v1", "role": "context", "key": "by_default", "fetch": "search", "limit": 1},
      {"schema_name": "note.v1", "role": "context", "key": "near", "fetch": {"method": "vector", "limit": 1, "query": "'tax filing'"}},
      {"schema_name": "note.v1", "role": "context", "key": "broken", "fetch": "search", "query": "record.context.missing.deeper"},
      {"schema_name": "note.v1", "role": "context", "key": "number", "fetch": "search", "query": "1 + 2"}])"),
                                        "selectors", model::Limits{});
  ASSERT_TRUE(subs.ok()) << subs.status().ToString();
  model::Event event = TriggerEvent("question.v1");
  event.title = "a question";
  event.context = json::object{{"text", "Which boats are in the Lisbon harbour?"}, {"topic", "tax"}};
  json::object ctx = AssembleContext(*store_, "default", event, TriggerView(event), *subs, &searcher);
  EXPECT_EQ(Titles(ctx["by_topic"]), std::vector<std::string>{"tax"});       // the query's words
  EXPECT_EQ(Titles(ctx["by_default"]), std::vector<std::string>{"harbour"});  // the trigger's own text
  EXPECT_EQ(Titles(ctx["near"]), std::vector<std::string>{"tax"});
  // A query that fails, or gives no string, leaves its key out (and is logged).
  EXPECT_FALSE(ctx.contains("broken")) << json::serialize(ctx);
  EXPECT_FALSE(ctx.contains("number")) << json::serialize(ctx);
  EXPECT_FALSE(SearchText((*subs)[4], event).ok());
}

TEST_F(SimilarContextTest, WithoutASearcherOrVectorsTheKeyIsAbsent) {
  CreateEmbedded(Rec().Ctx(R"({"text":"harbour"})"), "harbour");
  search::Searcher text_only(*store_, nullptr);
  std::vector<Subscription> subs = {ContextSub("similar", FetchMethod::kVector, SchemaSelector("note.v1"), 2),
                                    ContextSub("text", FetchMethod::kSearch, SchemaSelector("note.v1"), 2)};
  json::object ctx = AssembleAbout("harbour", subs, &text_only);
  EXPECT_FALSE(ctx.contains("similar"));
  EXPECT_EQ(Titles(ctx["text"]), std::vector<std::string>{"harbour"});
  json::object none = AssembleAbout("harbour", subs, nullptr);
  EXPECT_FALSE(none.contains("similar"));
  EXPECT_FALSE(none.contains("text"));
}

// The context budget (context_budget.h) on contexts assembled from real records.
class ContextBudgetTest : public ContextAssemblerTest {
 protected:
  // A record of about 100 bytes of text, so a few of them make a measurable context.
  std::string Note(int i) {
    return Create(Rec().Ctx("{\"text\":\"" + std::string(100, static_cast<char>('a' + i % 26)) + "\"}"),
                  "note " + std::to_string(i))
        .id;
  }
};

TEST_F(ContextBudgetTest, NoBudgetOrAContextWithinItChangesNothing) {
  for (int i = 0; i < 3; ++i) Note(i);
  std::vector<Subscription> subs = {ContextSub("notes", FetchMethod::kRecent, SchemaSelector("note.v1"), 3)};
  json::object ctx = Assemble(subs);
  json::object before = ctx;
  EXPECT_TRUE(ApplyContextBudget(ctx, subs, 0).empty());
  EXPECT_TRUE(ApplyContextBudget(ctx, subs, EstimateTokens(ctx)).empty());
  EXPECT_EQ(ctx, before);
}

TEST_F(ContextBudgetTest, EstimateIsCompactJsonBytesOverFourRoundedUp) {
  EXPECT_EQ(EstimateTokens(json::value("")), 1);        // "" is 2 bytes
  EXPECT_EQ(EstimateTokens(json::value("ab")), 1);      // 4 bytes
  EXPECT_EQ(EstimateTokens(json::value("abc")), 2);     // 5 bytes
  EXPECT_EQ(EstimateTokens(json::parse("[1,2,3,4]")), 3);  // 9 bytes
}

TEST_F(ContextBudgetTest, LowerPrioritySectionsGoFirstOldestRecordsFirst) {
  std::vector<std::string> ids;
  for (int i = 0; i < 6; ++i) ids.push_back(Note(i));
  Subscription keep = ContextSub("keep", FetchMethod::kRecent, SchemaSelector("note.v1"), 2);
  keep.priority = 10;
  Subscription trim = ContextSub("trim", FetchMethod::kRecent, SchemaSelector("note.v1"), 6);
  std::vector<Subscription> subs = {trim, keep};
  json::object full = Assemble(subs);
  ASSERT_EQ(full["trim"].as_array().size(), 6u);
  // Room for everything but about two and a half of the lower section's records.
  int64_t record_tokens = EstimateTokens(full["trim"].as_array()[0]);
  int64_t budget = EstimateTokens(full) - record_tokens * 5 / 2;

  json::object ctx = full;
  json::array dropped = ApplyContextBudget(ctx, subs, budget);
  EXPECT_LE(EstimateTokens(ctx), budget);
  // The higher-priority section is whole; the other lost its 3 oldest records, newest kept.
  EXPECT_EQ(ctx["keep"], full["keep"]);
  EXPECT_EQ(Ids(ctx["trim"]), (std::vector<std::string>{ids[5], ids[4], ids[3]}));
  ASSERT_EQ(dropped.size(), 1u);
  const json::object& entry = dropped[0].as_object();
  EXPECT_EQ(entry.at("key").as_string(), "trim");
  EXPECT_EQ(entry.at("fetch").as_string(), "recent");
  EXPECT_EQ(entry.at("dropped").as_int64(), 3);
  EXPECT_EQ(entry.at("kept").as_int64(), 3);
  EXPECT_EQ(entry.at("ids"), json::parse("[\"" + ids[0] + "\",\"" + ids[1] + "\",\"" + ids[2] + "\"]"));
}

TEST_F(ContextBudgetTest, ObjectSectionsGoWholeAndTheTriggerAlwaysStays) {
  for (int i = 0; i < 3; ++i) Note(i);
  Subscription latest = ContextSub("latest", FetchMethod::kLatest, SchemaSelector("note.v1"));
  latest.priority = 1;
  Subscription recent = ContextSub("recent", FetchMethod::kRecent, SchemaSelector("note.v1"), 3);
  std::vector<Subscription> subs = {latest, recent};
  json::object ctx = Assemble(subs);
  json::value trigger = ctx["trigger"];
  std::string latest_id(ctx["latest"].as_object().at("id").as_string());

  json::array dropped = ApplyContextBudget(ctx, subs, 1);  // smaller than the trigger alone
  EXPECT_EQ(ctx["trigger"], trigger);
  EXPECT_FALSE(ctx.contains("latest"));
  ASSERT_TRUE(ctx["recent"].is_array());  // emptied, still there
  EXPECT_TRUE(ctx["recent"].as_array().empty());
  ASSERT_EQ(dropped.size(), 2u);
  EXPECT_EQ(dropped[0].as_object().at("key").as_string(), "recent");  // priority 0 before 1
  EXPECT_EQ(dropped[0].as_object().at("dropped").as_int64(), 3);
  EXPECT_EQ(dropped[1].as_object().at("key").as_string(), "latest");
  EXPECT_EQ(dropped[1].as_object().at("dropped").as_int64(), 1);
  EXPECT_EQ(dropped[1].as_object().at("ids"), json::parse("[\"" + latest_id + "\"]"));
}

TEST_F(ContextBudgetTest, AmongEqualPrioritiesTheLaterDefinedSectionGoesFirst) {
  for (int i = 0; i < 2; ++i) Note(i);
  std::vector<Subscription> subs = {ContextSub("a", FetchMethod::kRecent, SchemaSelector("note.v1"), 2),
                                    ContextSub("b", FetchMethod::kRecent, SchemaSelector("note.v1"), 2)};
  json::object full = Assemble(subs);
  json::object ctx = full;
  int64_t budget = EstimateTokens(full) - EstimateTokens(full["b"]) + 3;
  json::array dropped = ApplyContextBudget(ctx, subs, budget);
  EXPECT_LE(EstimateTokens(ctx), budget);
  EXPECT_EQ(ctx["a"], full["a"]);
  EXPECT_TRUE(ctx["b"].as_array().empty());
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_EQ(dropped[0].as_object().at("key").as_string(), "b");
}

}  // namespace
}  // namespace cairn::exec
