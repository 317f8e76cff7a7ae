// GET /breadcrumbs: filters, order, include_context and pagination.
#include <algorithm>
#include <map>
#include <set>

#include "e2e_support.h"

namespace cairn::e2e {
namespace {

class e2e_listing : public ServerTest {
 protected:
  // Four records, created in this order (r1 oldest).
  void CreateFixture() {
    const char* bodies[] = {
        R"({"title":"r1","schema_name":"task.v1","tags":["x","y"],"path":"proj/a",
            "context":{"n":1,"s":"alpha","arr":[1,2],"nested":{"k":true}}})",
        R"({"title":"r2","schema_name":"task.v1","tags":["y"],"path":"proj/a/b",
            "context":{"n":5,"s":"beta","arr":[3]}})",
        R"({"title":"r3","schema_name":"note.v1","tags":["x","z"],"path":"proj/ab",
            "context":{"n":10,"s":"gamma","arr":[2,3],"nested":{"k":false}}})",
        R"({"title":"r4","context":{"other":1}})",
    };
    for (const char* body : bodies) {
      json::object rec = CreateOk(json::parse(body));
      ASSERT_FALSE(rec.empty());
      ids_[StringAt(rec, "title")] = StringAt(rec, "id");
      contexts_[StringAt(rec, "title")] = rec.at("context");
    }
  }

  // Titles of the records a query returns, in the returned order.
  std::vector<std::string> Titles(const std::string& query) {
    std::vector<std::string> out;
    std::map<std::string, std::string> by_id;
    for (const auto& [title, id] : ids_) by_id[id] = title;
    for (const auto& item : ListAll(query, 1000)) {
      auto it = by_id.find(StringAt(item, "id"));
      out.push_back(it == by_id.end() ? "?" + StringAt(item, "id") : it->second);
    }
    return out;
  }

  static std::string Match(const std::string& rules) { return "context_match=" + UrlEncode(rules); }

  std::map<std::string, std::string> ids_;
  std::map<std::string, json::value> contexts_;
};

using Names = std::vector<std::string>;

TEST_F(e2e_listing, EmptyStore) {
  Response r = client().Get("/breadcrumbs");
  ASSERT_EQ(r.status, 200) << r.Describe();
  json::object body = ObjectOf(r);
  ASSERT_TRUE(body.contains("items") && body.at("items").is_array()) << r.body;
  EXPECT_TRUE(body.at("items").as_array().empty());
  ASSERT_TRUE(body.contains("next_cursor"));
  EXPECT_TRUE(body.at("next_cursor").is_null());
}

TEST_F(e2e_listing, OrderAndItemShape) {
  CreateFixture();
  EXPECT_EQ(Titles(""), (Names{"r4", "r3", "r2", "r1"})) << "default order is newest first";
  EXPECT_EQ(Titles("order=desc"), (Names{"r4", "r3", "r2", "r1"}));
  EXPECT_EQ(Titles("order=asc"), (Names{"r1", "r2", "r3", "r4"}));

  // Items are full records without context by default.
  Response r = client().Get("/breadcrumbs?order=asc");
  ASSERT_EQ(r.status, 200);
  json::object body = ObjectOf(r);
  EXPECT_TRUE(body.at("next_cursor").is_null()) << r.body;
  const json::array& items = body.at("items").as_array();
  ASSERT_EQ(items.size(), 4u);
  const json::object& first = items[0].as_object();
  EXPECT_FALSE(first.contains("context")) << JsonText(first);
  for (const char* key : {"id", "schema_name", "title", "tags", "path", "version", "checksum", "created_at",
                          "updated_at", "created_by", "visibility", "sensitivity"}) {
    EXPECT_TRUE(first.contains(key)) << key << " missing in " << JsonText(first);
  }
  EXPECT_EQ(StringAt(first, "title"), "r1");
  EXPECT_EQ(StringAt(first, "path"), "proj/a");
  EXPECT_EQ(IntAt(first, "version"), 1);

  // include_context=true adds it.
  for (const auto& item : ListAll("include_context=true")) {
    ASSERT_TRUE(item.contains("context")) << JsonText(item);
    EXPECT_EQ(item.at("context"), contexts_[StringAt(item, "title")]);
  }
  for (const auto& item : ListAll("include_context=false")) EXPECT_FALSE(item.contains("context"));
}

TEST_F(e2e_listing, FieldFilters) {
  CreateFixture();
  EXPECT_EQ(Titles("schema_name=task.v1"), (Names{"r2", "r1"}));
  EXPECT_EQ(Titles("schema_name=note.v1"), (Names{"r3"}));
  EXPECT_EQ(Titles("schema_name=none.v1"), Names{});
  EXPECT_EQ(Titles("tag=x"), (Names{"r3", "r1"}));
  EXPECT_EQ(Titles("tag=x&tag=y"), (Names{"r1"}));
  EXPECT_EQ(Titles("tag=x&tag=q"), Names{});
  EXPECT_EQ(Titles("all_tags=x,y"), (Names{"r1"}));
  EXPECT_EQ(Titles("all_tags=y"), (Names{"r2", "r1"}));
  EXPECT_EQ(Titles("any_tags=y,z"), (Names{"r3", "r2", "r1"}));
  EXPECT_EQ(Titles("any_tags=z"), (Names{"r3"}));
  EXPECT_EQ(Titles("any_tags=q,w"), Names{});
  EXPECT_EQ(Titles("any_tags=z,y&all_tags=x"), (Names{"r3", "r1"}));
  EXPECT_EQ(Titles("path=proj/a"), (Names{"r1"}));
  EXPECT_EQ(Titles("path=" + UrlEncode("proj/a/b")), (Names{"r2"}));
  EXPECT_EQ(Titles("path=proj"), Names{});
  EXPECT_EQ(Titles("path_prefix=proj/a"), (Names{"r2", "r1"})) << "whole segments: proj/ab must not match";
  EXPECT_EQ(Titles("path_prefix=proj"), (Names{"r3", "r2", "r1"}));
  EXPECT_EQ(Titles("path_prefix=proj/a/b"), (Names{"r2"}));
  EXPECT_EQ(Titles("path_prefix=pro"), Names{});
  EXPECT_EQ(Titles("schema_name=task.v1&tag=x"), (Names{"r1"}));
  EXPECT_EQ(Titles("schema_name=task.v1&path_prefix=proj/a&order=asc"), (Names{"r1", "r2"}));
}

TEST_F(e2e_listing, ContextMatchOperators) {
  CreateFixture();
  EXPECT_EQ(Titles(Match(R"({"path":"$.s","op":"eq","value":"beta"})")), (Names{"r2"}));
  EXPECT_EQ(Titles(Match(R"({"path":"$.n","op":"eq","value":10})")), (Names{"r3"}));
  EXPECT_EQ(Titles("tag=x&" + Match(R"({"path":"$.s","op":"ne","value":"alpha"})")), (Names{"r3"}));
  EXPECT_EQ(Titles(Match(R"({"path":"$.n","op":"gt","value":1})")), (Names{"r3", "r2"}));
  EXPECT_EQ(Titles(Match(R"({"path":"$.n","op":"gte","value":5})")), (Names{"r3", "r2"}));
  EXPECT_EQ(Titles(Match(R"({"path":"$.n","op":"lt","value":5})")), (Names{"r1"}));
  EXPECT_EQ(Titles(Match(R"({"path":"$.n","op":"lte","value":5})")), (Names{"r2", "r1"}));
  EXPECT_EQ(Titles(Match(R"({"path":"$.s","op":"in","value":["alpha","gamma","zeta"]})")), (Names{"r3", "r1"}));
  EXPECT_EQ(Titles(Match(R"({"path":"$.arr","op":"contains","value":2})")), (Names{"r3", "r1"}));
  EXPECT_EQ(Titles(Match(R"({"path":"$.arr","op":"contains_any","value":[3,9]})")), (Names{"r3", "r2"}));
  EXPECT_EQ(Titles(Match(R"({"path":"$.nested","op":"exists","value":true})")), (Names{"r3", "r1"}));
  EXPECT_EQ(Titles(Match(R"({"path":"$.nested","op":"exists","value":false})")), (Names{"r4", "r2"}));
  EXPECT_EQ(Titles(Match(R"({"path":"$.nested.k","op":"eq","value":true})")), (Names{"r1"}));
  EXPECT_EQ(Titles(Match(R"({"path":"$.arr[0]","op":"eq","value":3})")), (Names{"r2"}));
  // An array of rules: all must hold.
  EXPECT_EQ(Titles(Match(R"([{"path":"$.n","op":"gte","value":1},{"path":"$.n","op":"lt","value":10}])")),
            (Names{"r2", "r1"}));
  EXPECT_EQ(Titles(Match(R"([{"path":"$.n","op":"gte","value":1},{"path":"$.s","op":"eq","value":"nope"}])")),
            Names{});
  // Combined with field filters and ascending order.
  EXPECT_EQ(Titles("order=asc&any_tags=x,y&" + Match(R"({"path":"$.arr","op":"contains_any","value":[1,3]})")),
            (Names{"r1", "r2", "r3"}));
}

TEST_F(e2e_listing, QueryValuesArePercentDecoded) {
  json::object spaced = CreateOk(json::parse(R"({"title":"s","tags":["with space","caf\u00e9"],"schema_name":"a:b/c"})"));
  json::object other = CreateOk(json::parse(R"({"title":"o","tags":["with"],"schema_name":"a:b"})"));
  ids_["s"] = StringAt(spaced, "id");
  ids_["o"] = StringAt(other, "id");
  EXPECT_EQ(Titles("tag=with%20space"), (Names{"s"}));
  EXPECT_EQ(Titles("tag=with+space"), (Names{"s"})) << "'+' is a space in a query string";
  EXPECT_EQ(Titles("tag=" + UrlEncode("café")), (Names{"s"}));
  EXPECT_EQ(Titles("any_tags=" + UrlEncode("café") + ",with"), (Names{"o", "s"}));
  EXPECT_EQ(Titles("schema_name=" + UrlEncode("a:b/c")), (Names{"s"}));
  EXPECT_EQ(Titles("schema_name=a:b"), (Names{"o"}));
}

TEST_F(e2e_listing, ListingReflectsUpdatesAndDeletes) {
  CreateFixture();
  json::object patched = PatchOk(ids_["r2"], json::parse(R"({"tags":["z"],"context":{"n":100}})"));
  EXPECT_EQ(IntAt(patched, "version"), 2);
  EXPECT_EQ(Titles("any_tags=z"), (Names{"r3", "r2"}));
  EXPECT_EQ(Titles(Match(R"({"path":"$.n","op":"gt","value":50})")), (Names{"r2"}));
  ASSERT_EQ(client().Delete("/breadcrumbs/" + ids_["r3"]).status, 204);
  EXPECT_EQ(Titles("any_tags=z"), (Names{"r2"}));
  EXPECT_EQ(Titles("order=asc"), (Names{"r1", "r2", "r4"}));
  for (const auto& item : ListAll("tag=z")) EXPECT_EQ(IntAt(item, "version"), 2);
}

class e2e_pagination : public ServerTest {};

// 1,000 records, paged through with several limits in both orders: every id exactly once, in order.
TEST_F(e2e_pagination, ThousandRecordsEveryIdExactlyOnceInOrder) {
  constexpr int kRecords = 1000;
  std::vector<std::string> created;  // creation order
  std::vector<std::string> tagged;   // the ones tagged "third"
  created.reserve(kRecords);
  for (int i = 0; i < kRecords; ++i) {
    json::object body{{"title", "item " + std::to_string(i)}, {"context", json::object{{"i", i}}}};
    if (i % 3 == 0) body["tags"] = json::array{"third"};
    Response r = client().Post("/breadcrumbs", json::serialize(body));
    ASSERT_EQ(r.status, 201) << "record " << i << ": " << r.Describe();
    created.push_back(StringAt(ObjectOf(r), "id"));
    if (i % 3 == 0) tagged.push_back(created.back());
  }
  ASSERT_EQ(std::set<std::string>(created.begin(), created.end()).size(), created.size()) << "ids must be unique";
  std::vector<std::string> newest_first(created.rbegin(), created.rend());
  std::vector<std::string> tagged_newest_first(tagged.rbegin(), tagged.rend());

  struct Case {
    std::string query;
    int limit;
    const std::vector<std::string>* expected;
    int expected_pages;
  };
  const std::vector<Case> cases = {
      {"", 100, &newest_first, 10},          {"order=asc", 100, &created, 10},
      {"", 37, &newest_first, 28},           {"order=asc", 37, &created, 28},
      {"", 1000, &newest_first, 1},          {"order=asc", 999, &created, 2},
      {"tag=third", 37, &tagged_newest_first, 10}, {"tag=third&order=asc", 100, &tagged, 4},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE("query '" + c.query + "' limit " + std::to_string(c.limit));
    int pages = 0;
    std::vector<std::string> got;
    for (const auto& item : ListAll(c.query, c.limit, &pages)) got.push_back(StringAt(item, "id"));
    std::set<std::string> unique(got.begin(), got.end());
    EXPECT_EQ(unique.size(), got.size()) << "duplicates across pages";
    EXPECT_EQ(got.size(), c.expected->size()) << "gaps or extras";
    EXPECT_TRUE(got == *c.expected) << "not every id exactly once in order";
    // A last page may legitimately be empty (if the server cannot know it is the last one).
    EXPECT_TRUE(pages == c.expected_pages || pages == c.expected_pages + 1)
        << pages << " pages, expected " << c.expected_pages;
  }

  // Full pages are exactly `limit` long, and the default limit is 50.
  Response r = client().Get("/breadcrumbs?limit=37");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(ObjectOf(r).at("items").as_array().size(), 37u);
  r = client().Get("/breadcrumbs");
  ASSERT_EQ(r.status, 200);
  json::object page = ObjectOf(r);
  EXPECT_EQ(page.at("items").as_array().size(), 50u);
  EXPECT_TRUE(page.at("next_cursor").is_string());

  // A cursor keeps working while new records arrive: the next page continues where it stopped
  // and (newest first) does not show records created after the first page was read.
  json::object first = ObjectOf(client().Get("/breadcrumbs?limit=10"));
  ASSERT_TRUE(first.at("next_cursor").is_string());
  CreateTitled("late arrival");
  json::object second = ObjectOf(client().Get(
      "/breadcrumbs?limit=10&cursor=" + UrlEncode(std::string(first.at("next_cursor").as_string()))));
  ASSERT_EQ(second.at("items").as_array().size(), 10u);
  for (size_t i = 0; i < 10; ++i) {
    EXPECT_EQ(StringAt(second.at("items").as_array()[i].as_object(), "id"), newest_first[10 + i]);
  }
}

}  // namespace
}  // namespace cairn::e2e
