// GET /breadcrumbs/search against the real binary: a write is searchable at once, updated, deleted
// and expired records are not found, filters and bad parameters (400 naming the field).
#include <chrono>
#include <thread>

#include "e2e_support.h"

namespace cairn::e2e {
namespace {

using Names = std::vector<std::string>;

class e2e_search : public ServerTest {
 protected:
  json::object Search(const std::string& query) {
    Response r = client().Get("/breadcrumbs/search?" + query);
    EXPECT_EQ(r.status, 200) << query << ": " << r.Describe();
    return ObjectOf(r);
  }
  Names Titles(const std::string& query) {
    Names titles;
    json::object out = Search(query);
    if (!out.contains("items")) return titles;
    for (const auto& item : out.at("items").as_array()) titles.push_back(StringAt(item.as_object(), "title"));
    return titles;
  }
};

TEST_F(e2e_search, AWriteIsSearchableAtOnceAndItsOldTextGoesWithIt) {
  json::object rec = CreateOk(json::parse(
      R"({"title":"Plan the trip","schema_name":"task.v1","tags":["travel"],
          "context":{"city":"Lisbon","notes":[{"text":"visit the tram museum"}]}})"));
  const std::string id = StringAt(rec, "id");
  EXPECT_EQ(Titles("q=lisbon&mode=text"), Names{"Plan the trip"});
  EXPECT_EQ(Titles("q=tram+museum&mode=text"), Names{"Plan the trip"});

  json::object out = Search("q=lisbon&mode=text");
  EXPECT_EQ(StringAt(out, "mode"), "text");
  const json::object& item = out.at("items").as_array().at(0).as_object();
  EXPECT_EQ(StringAt(item, "id"), id);
  EXPECT_EQ(StringAt(item, "schema_name"), "task.v1");
  EXPECT_EQ(item.at("tags"), json::parse(R"(["travel"])"));
  EXPECT_GT(item.at("score").to_number<double>(), 0);
  EXPECT_NE(StringAt(item, "snippet").find("**Lisbon**"), std::string::npos) << StringAt(item, "snippet");
  EXPECT_FALSE(item.contains("context"));
  json::object with_context = Search("q=lisbon&mode=text&include_context=true");
  EXPECT_EQ(with_context.at("items").as_array().at(0).as_object().at("context").as_object().at("city"), "Lisbon");

  PatchOk(id, json::parse(R"({"context":{"city":"Porto"}})"));
  EXPECT_TRUE(Titles("q=lisbon&mode=text").empty());
  EXPECT_EQ(Titles("q=porto&mode=text"), Names{"Plan the trip"});

  ASSERT_EQ(client().Delete("/breadcrumbs/" + id).status, 204);
  EXPECT_TRUE(Titles("q=porto&mode=text").empty());
}

TEST_F(e2e_search, FiltersApplyAndTheBestComeFirst) {
  CreateOk(json::parse(R"({"title":"otter report","schema_name":"note.v1","tags":["river"],"path":"zoo/a"})"));
  CreateOk(json::parse(R"({"title":"weekly","schema_name":"note.v1","context":{"body":"an otter was seen"},"path":"zoo/b/c"})"));
  CreateOk(json::parse(R"({"title":"otter","schema_name":"task.v1","tags":["river"],"path":"zoox"})"));
  EXPECT_EQ(Titles("q=otter&mode=text&limit=1").size(), 1u);
  Names all = Titles("q=otter+report&mode=text");
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0], "otter report");
  EXPECT_EQ(Titles("q=otter&mode=text&schema_name=task.v1"), Names{"otter"});
  Names river = Titles("q=otter&mode=text&tag=river&schema_name=note.v1");
  EXPECT_EQ(river, Names{"otter report"});
  Names zoo = Titles("q=otter&mode=text&path=zoo");
  std::sort(zoo.begin(), zoo.end());
  EXPECT_EQ(zoo, (Names{"otter report", "weekly"}));
}

TEST_F(e2e_search, ExpiredRecordsAreNotFound) {
  const auto expiry = std::chrono::system_clock::now() + std::chrono::milliseconds(1500);
  json::object rec = CreateOk(json::object{{"title", "ephemeral albatross"}, {"ttl", Rfc3339Utc(expiry)}});
  CreateTitled("lasting albatross");
  EXPECT_EQ(Titles("q=albatross&mode=text").size(), 2u);
  // The wait is for the ttl itself: the server runs on this machine's clock.
  std::this_thread::sleep_until(expiry + std::chrono::milliseconds(50));
  EXPECT_EQ(Titles("q=albatross&mode=text"), Names{"lasting albatross"});
}

TEST_F(e2e_search, BadParametersAre400NamingTheField) {
  CreateTitled("anything");
  struct Case {
    std::string query;
    std::string field;
  };
  const std::vector<Case> cases = {
      {"", "q"},
      {"q=", "q"},
      {"q=%22%2A%28%29", "q"},  // no word in it
      {"q=" + std::string(1025, 'a'), "q"},
      {"q=a&mode=semantic", "mode"},
      {"q=a&limit=0", "limit"},
      {"q=a&limit=201", "limit"},
      {"q=a&limit=ten", "limit"},
      {"q=a&include_context=yes", "include_context"},
      {"q=a&schema_name=" + std::string(300, 's'), "schema_name"},
      {"q=a&path=%2Fabs", "path"},
      {"q=a&colour=red", "colour"},
      {"q=a&q=b", "q"},
      {"q=a&mode=text&qvec=%5B1%2C2%5D", "qvec"},
      {"q=a&mode=hybrid&qvec=nope", "qvec"},
      {"mode=vector&qvec=%5B%5D", "qvec"},
      {"mode=vector&qvec=%5B1e60%5D", "qvec"},
  };
  for (const Case& c : cases) {
    Response r = client().Get("/breadcrumbs/search" + (c.query.empty() ? "" : "?" + c.query));
    EXPECT_TRUE(IsError(r, 400, "bad_request", c.field)) << c.query.substr(0, 60);
  }
  // Hostile text is words, never FTS5 syntax or SQL.
  for (const char* hostile : {"title%3Aanything", "%22anything", "anything%29+OR+%28", "NEAR%28anything",
                              "anything%27%3B+DROP+TABLE+breadcrumbs%3B--", "any%00thing"}) {
    Response r = client().Get(std::string("/breadcrumbs/search?mode=text&q=") + hostile);
    EXPECT_EQ(r.status, 200) << hostile << ": " << r.Describe();
  }
  EXPECT_EQ(Titles("mode=text&q=title%3Aanything"), Names{"anything"});
}

}  // namespace
}  // namespace cairn::e2e
