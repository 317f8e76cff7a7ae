// Every route of docs/api.md and the shape of its success response.
#include <chrono>
#include <cstdio>
#include <ctime>
#include <map>
#include <regex>
#include <set>
#include <thread>

#include "e2e_support.h"

namespace cairn::e2e {
namespace {

const std::regex kUuidV7("^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$");
const std::regex kTimestamp(R"(^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}(Z|\+00:00)$)");
const std::regex kChecksum("^sha256:[0-9a-f]{64}$");

const std::vector<std::string> kFullRecordKeys = {
    "id",         "schema_name", "title",       "description", "tags",    "context",  "path",
    "llm_hints",  "version",     "checksum",    "visibility",  "sensitivity", "acl", "ttl", "owner_id",
    "created_by", "updated_by",  "trace",       "created_at",  "updated_at", "size_bytes"};

std::set<std::string> KeysOf(const json::object& obj) {
  std::set<std::string> keys;
  for (const auto& kv : obj) keys.insert(std::string(kv.key()));
  return keys;
}

std::set<std::string> AllowSet(const Response& r) {
  std::set<std::string> out;
  std::string allow = r.Header("allow").value_or("");
  size_t pos = 0;
  while (pos <= allow.size()) {
    size_t comma = allow.find(',', pos);
    if (comma == std::string::npos) comma = allow.size();
    std::string token = allow.substr(pos, comma - pos);
    token.erase(0, token.find_first_not_of(' '));
    token.erase(token.find_last_not_of(' ') + 1);
    if (!token.empty()) out.insert(token);
    pos = comma + 1;
  }
  return out;
}

// Parses Prometheus text into sample lines: "name{labels}" -> value.
std::vector<std::pair<std::string, double>> Samples(const std::string& text) {
  std::vector<std::pair<std::string, double>> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.empty() || line[0] == '#') continue;
    size_t space = line.rfind(' ');
    if (space == std::string::npos) continue;
    try {
      out.emplace_back(line.substr(0, space), std::stod(line.substr(space + 1)));
    } catch (...) {
    }
  }
  return out;
}

class e2e_routes : public ServerTest {};

TEST_F(e2e_routes, HealthReportsOkVersionAndUptime) {
  Response r = client().Get("/health");
  ASSERT_EQ(r.status, 200) << r.Describe();
  EXPECT_NE(r.Header("content-type").value_or("").find("application/json"), std::string::npos);
  json::object body = ObjectOf(r);
  EXPECT_EQ(StringAt(body, "status"), "ok");
  EXPECT_FALSE(StringAt(body, "version").empty()) << r.body;
  ASSERT_TRUE(body.contains("uptime_seconds")) << r.body;
  EXPECT_TRUE(body.at("uptime_seconds").is_number()) << r.body;
  EXPECT_GE(body.at("uptime_seconds").to_number<double>(), 0.0);
}

TEST_F(e2e_routes, MetricsCountRequestsByRouteAndGaugeRecords) {
  json::object a = CreateTitled("one");
  json::object b = CreateTitled("two");
  json::object c = CreateTitled("three");
  ASSERT_FALSE(c.empty());
  const std::string id = StringAt(a, "id");
  ASSERT_EQ(client().Get("/breadcrumbs/" + id).status, 200);
  ASSERT_EQ(client().Get("/breadcrumbs/" + id + "/full").status, 200);
  ASSERT_EQ(client().Get("/health").status, 200);
  ASSERT_EQ(client().Delete("/breadcrumbs/" + StringAt(b, "id")).status, 204);

  Response r = client().Get("/metrics");
  ASSERT_EQ(r.status, 200) << r.Describe();
  EXPECT_NE(r.Header("content-type").value_or("").find("text/plain"), std::string::npos)
      << "Content-Type: " << r.Header("content-type").value_or("(none)");
  EXPECT_NE(r.body.find("# TYPE"), std::string::npos) << r.body;

  // Request counts by route: a counter sample for POST /breadcrumbs of at least 3.
  // Summed per counter family, over any other labels (such as status).
  auto samples = Samples(r.body);
  std::map<std::string, double> posts_by_family;
  bool saw_get_by_id = false;
  for (const auto& [key, value] : samples) {
    std::string name = key.substr(0, key.find('{'));
    bool is_counter = r.body.find("# TYPE " + name + " counter") != std::string::npos;
    if (is_counter && key.find("route=\"/breadcrumbs\"") != std::string::npos &&
        key.find("method=\"POST\"") != std::string::npos) {
      posts_by_family[name] += value;
    }
    if (key.find("route=\"/breadcrumbs/{id}") != std::string::npos) saw_get_by_id = true;
  }
  double posts = 0;
  for (const auto& [name, total] : posts_by_family) posts = std::max(posts, total);
  EXPECT_GE(posts, 3) << "no request counter with route=\"/breadcrumbs\",method=\"POST\" >= 3 in:\n" << r.body;
  EXPECT_TRUE(saw_get_by_id) << "no sample labelled route=\"/breadcrumbs/{id}...\" in:\n" << r.body;
  // Routes are labelled by template, never by the raw id (unbounded cardinality).
  EXPECT_EQ(r.body.find(id), std::string::npos) << "a record id leaked into a metric label";

  // A records gauge: 3 created, 1 deleted.
  bool found_gauge = false;
  for (const auto& [key, value] : samples) {
    std::string name = key.substr(0, key.find('{'));
    if (name.find("record") == std::string::npos) continue;
    if (r.body.find("# TYPE " + name + " gauge") == std::string::npos) continue;
    found_gauge = true;
    EXPECT_EQ(value, 2) << key << " should count the 2 live records";
  }
  EXPECT_TRUE(found_gauge) << "no gauge with \"record\" in its name:\n" << r.body;
}

TEST_F(e2e_routes, CreateReturnsTheFullRecord) {
  json::value body = json::parse(R"({
      "title": "Write the plan",
      "schema_name": "task.v1",
      "description": "first step",
      "tags": ["b", "a", "b"],
      "context": {"b": {"d": [1, 2], "c": "x"}, "a": 1},
      "path": "proj/plan",
      "visibility": "private",
      "sensitivity": "pii"})");
  Response r = client().Post("/breadcrumbs", json::serialize(body), {{"X-Cairn-Actor", "agent:planner"}});
  ASSERT_EQ(r.status, 201) << r.Describe();
  json::object rec = ObjectOf(r);
  for (const auto& key : kFullRecordKeys) EXPECT_TRUE(rec.contains(key)) << "missing " << key << ": " << r.body;
  EXPECT_EQ(KeysOf(rec), std::set<std::string>(kFullRecordKeys.begin(), kFullRecordKeys.end())) << r.body;

  const std::string id = StringAt(rec, "id");
  EXPECT_TRUE(std::regex_match(id, kUuidV7)) << id;
  auto location = r.Header("location");
  ASSERT_TRUE(location.has_value());
  const std::string suffix = "/breadcrumbs/" + id;
  EXPECT_TRUE(location->size() >= suffix.size() && location->compare(location->size() - suffix.size(), suffix.size(), suffix) == 0)
      << "Location: " << *location;
  EXPECT_EQ(r.Header("etag").value_or(""), "\"1\"");
  EXPECT_NE(r.Header("content-type").value_or("").find("application/json"), std::string::npos);

  EXPECT_EQ(IntAt(rec, "version"), 1);
  EXPECT_EQ(StringAt(rec, "title"), "Write the plan");
  EXPECT_EQ(StringAt(rec, "schema_name"), "task.v1");
  EXPECT_EQ(StringAt(rec, "description"), "first step");
  EXPECT_EQ(StringAt(rec, "path"), "proj/plan");
  EXPECT_EQ(StringAt(rec, "visibility"), "private");
  EXPECT_EQ(StringAt(rec, "sensitivity"), "pii");
  EXPECT_TRUE(rec.at("ttl").is_null());
  EXPECT_TRUE(rec.at("llm_hints").is_null());
  EXPECT_EQ(StringAt(rec, "owner_id"), "default");
  EXPECT_EQ(StringAt(rec, "created_by"), "agent:planner");
  EXPECT_EQ(StringAt(rec, "updated_by"), "agent:planner");
  ASSERT_TRUE(rec.at("tags").is_array());
  std::set<std::string> tags;
  for (const auto& t : rec.at("tags").as_array()) tags.insert(std::string(t.as_string()));
  EXPECT_EQ(rec.at("tags").as_array().size(), 2u) << "duplicate tags must collapse: " << r.body;
  EXPECT_EQ(tags, (std::set<std::string>{"a", "b"}));
  EXPECT_EQ(rec.at("context"), body.at("context"));

  // sha256 of the canonical context (sorted keys, no whitespace).
  EXPECT_TRUE(std::regex_match(StringAt(rec, "checksum"), kChecksum)) << StringAt(rec, "checksum");
  EXPECT_EQ(StringAt(rec, "checksum"), "sha256:" + Sha256Hex(R"({"a":1,"b":{"c":"x","d":[1,2]}})"));

  EXPECT_TRUE(std::regex_match(StringAt(rec, "created_at"), kTimestamp)) << StringAt(rec, "created_at");
  EXPECT_TRUE(std::regex_match(StringAt(rec, "updated_at"), kTimestamp)) << StringAt(rec, "updated_at");
  EXPECT_EQ(StringAt(rec, "created_at"), StringAt(rec, "updated_at"));

  ASSERT_TRUE(rec.at("trace").is_object()) << r.body;
  const json::object& trace = rec.at("trace").as_object();
  EXPECT_FALSE(StringAt(trace, "trace_id").empty()) << r.body;
  ASSERT_TRUE(trace.contains("caused_by"));
  EXPECT_TRUE(trace.at("caused_by").is_null()) << r.body;
  EXPECT_EQ(IntAt(trace, "depth"), 0);
  EXPECT_GT(IntAt(rec, "size_bytes"), 0);

  // The full view is the same record.
  Response full = client().Get("/breadcrumbs/" + id + "/full");
  ASSERT_EQ(full.status, 200) << full.Describe();
  EXPECT_EQ(full.Json(), r.Json());
  EXPECT_EQ(full.Header("etag").value_or(""), "\"1\"");
}

TEST_F(e2e_routes, CreateDefaults) {
  json::object rec = CreateTitled("minimal");
  ASSERT_FALSE(rec.empty());
  EXPECT_EQ(StringAt(rec, "created_by"), "anonymous");
  EXPECT_EQ(StringAt(rec, "updated_by"), "anonymous");
  EXPECT_EQ(StringAt(rec, "visibility"), "team");
  EXPECT_EQ(StringAt(rec, "sensitivity"), "low");
  EXPECT_EQ(rec.at("context"), json::value(json::object{}));
  EXPECT_EQ(StringAt(rec, "checksum"), "sha256:" + Sha256Hex("{}"));
  EXPECT_TRUE(rec.at("schema_name").is_null());
  EXPECT_TRUE(rec.at("description").is_null());
  EXPECT_TRUE(rec.at("path").is_null());
  EXPECT_TRUE(rec.at("tags").is_array() && rec.at("tags").as_array().empty()) << JsonText(rec);
}

TEST_F(e2e_routes, CreateWithTraceAndTtl) {
  json::object parent = CreateTitled("parent");
  const std::string parent_id = StringAt(parent, "id");
  json::value body = json::parse(R"({"title":"child","ttl":"2999-01-01T00:00:00Z","trace":{"trace_id":"t-1","caused_by":")" +
                                 parent_id + R"(","depth":3}})");
  json::object rec = CreateOk(body);
  ASSERT_FALSE(rec.empty());
  ASSERT_TRUE(rec.at("trace").is_object());
  EXPECT_EQ(StringAt(rec.at("trace").as_object(), "trace_id"), "t-1");
  EXPECT_EQ(StringAt(rec.at("trace").as_object(), "caused_by"), parent_id);
  EXPECT_EQ(IntAt(rec.at("trace").as_object(), "depth"), 3);
  EXPECT_TRUE(rec.at("ttl").is_string()) << JsonText(rec);
  EXPECT_EQ(StringAt(rec, "ttl").substr(0, 10), "2999-01-01");
  EXPECT_EQ(client().Get("/breadcrumbs/" + StringAt(rec, "id")).status, 200);
}

// The record disappears from every read once its ttl passes. (The wait is for the ttl itself:
// the server runs on this machine's clock.)
TEST_F(e2e_routes, ExpiredRecordDisappearsFromReads) {
  const auto expiry = std::chrono::system_clock::now() + std::chrono::milliseconds(1500);
  json::object keep = CreateTitled("keeps");
  json::object rec = CreateOk(json::object{{"title", "ephemeral"}, {"ttl", Rfc3339Utc(expiry)}, {"path", "tmp/x"}});
  const std::string id = StringAt(rec, "id");
  ASSERT_FALSE(id.empty());
  EXPECT_EQ(client().Get("/breadcrumbs/" + id).status, 200);
  EXPECT_EQ(ListIds().size(), 2u);

  std::this_thread::sleep_until(expiry + std::chrono::milliseconds(50));
  EXPECT_TRUE(IsError(client().Get("/breadcrumbs/" + id), 404, "not_found"));
  EXPECT_TRUE(IsError(client().Get("/breadcrumbs/" + id + "/full"), 404, "not_found"));
  EXPECT_TRUE(IsError(client().Patch("/breadcrumbs/" + id, R"({"title":"revive"})"), 404, "not_found"));
  EXPECT_EQ(ListIds(), std::vector<std::string>{StringAt(keep, "id")});
  EXPECT_TRUE(ListIds("path=tmp/x").empty());
}

TEST_F(e2e_routes, GetReturnsTheContextViewWithHintsApplied) {
  json::value body = json::parse(R"({
      "title": "hinted",
      "schema_name": "note.v1",
      "tags": ["t"],
      "context": {"a": 1, "name": "Ann", "b": {"c": {"x": 1, "secret": 2}, "d": 3}, "e": 4},
      "llm_hints": {"include": ["a", "name", "b.c"], "exclude": ["b.c.secret"],
                    "template": "A={{a}} N={{name}} X={{b.c.x}} S={{b.c.secret}} E={{e}} M={{missing}}"}})");
  json::object rec = CreateOk(body);
  const std::string id = StringAt(rec, "id");
  ASSERT_FALSE(id.empty());

  Response r = client().Get("/breadcrumbs/" + id);
  ASSERT_EQ(r.status, 200) << r.Describe();
  EXPECT_EQ(r.Header("etag").value_or(""), "\"1\"");
  json::object view = ObjectOf(r);
  EXPECT_EQ(KeysOf(view), (std::set<std::string>{"id", "schema_name", "title", "tags", "version", "updated_at",
                                                 "context", "rendered"}))
      << r.body;
  EXPECT_EQ(StringAt(view, "id"), id);
  EXPECT_EQ(StringAt(view, "title"), "hinted");
  EXPECT_EQ(StringAt(view, "schema_name"), "note.v1");
  EXPECT_EQ(IntAt(view, "version"), 1);
  EXPECT_EQ(StringAt(view, "updated_at"), StringAt(rec, "updated_at"));
  EXPECT_EQ(view.at("tags"), json::value(json::array{"t"}));
  EXPECT_EQ(view.at("context"), json::parse(R"({"a":1,"name":"Ann","b":{"c":{"x":1}}})")) << r.body;
  EXPECT_EQ(StringAt(view, "rendered"), "A=1 N=Ann X=1 S= E= M=") << r.body;

  // The full view keeps the whole context.
  EXPECT_EQ(FullOk(id).at("context"), body.at("context"));
}

TEST_F(e2e_routes, GetWithoutHintsReturnsTheWholeContext) {
  json::value context = json::parse(R"({"k":[1,{"z":null}],"s":"v"})");
  json::object rec = CreateOk(json::object{{"title", "plain"}, {"context", context}});
  Response r = client().Get("/breadcrumbs/" + StringAt(rec, "id"));
  ASSERT_EQ(r.status, 200) << r.Describe();
  json::object view = ObjectOf(r);
  EXPECT_EQ(view.at("context"), context);
  EXPECT_FALSE(view.contains("rendered")) << r.body;
  EXPECT_EQ(KeysOf(view),
            (std::set<std::string>{"id", "schema_name", "title", "tags", "version", "updated_at", "context"}));
}

TEST_F(e2e_routes, HintsWithOnlyExcludeOrOnlyTemplate) {
  json::object only_exclude = CreateOk(json::parse(
      R"({"title":"e","context":{"a":1,"b":{"c":2,"d":3}},"llm_hints":{"exclude":["b.d"]}})"));
  Response r = client().Get("/breadcrumbs/" + StringAt(only_exclude, "id"));
  ASSERT_EQ(r.status, 200) << r.Describe();
  EXPECT_EQ(ObjectOf(r).at("context"), json::parse(R"({"a":1,"b":{"c":2}})")) << r.body;

  json::object only_template = CreateOk(json::parse(
      R"({"title":"t","context":{"a":{"b":[1,2]},"s":"x"},"llm_hints":{"template":"{{s}}:{{a}}"}})"));
  r = client().Get("/breadcrumbs/" + StringAt(only_template, "id"));
  ASSERT_EQ(r.status, 200) << r.Describe();
  json::object view = ObjectOf(r);
  EXPECT_EQ(view.at("context"), json::parse(R"({"a":{"b":[1,2]},"s":"x"})"));
  EXPECT_EQ(StringAt(view, "rendered"), R"(x:{"b":[1,2]})") << r.body;
}

TEST_F(e2e_routes, PatchBumpsTheVersionAndHonoursIfMatch) {
  json::object rec = CreateOk(json::parse(R"({"title":"v1","description":"d","context":{"n":1},"tags":["a"]})"),
                              {{"X-Cairn-Actor", "creator"}});
  const std::string id = StringAt(rec, "id");
  ASSERT_FALSE(id.empty());

  // No If-Match: applies to the current version.
  Response r = client().Patch("/breadcrumbs/" + id, R"({"title":"v2"})", {{"X-Cairn-Actor", "editor"}});
  ASSERT_EQ(r.status, 200) << r.Describe();
  json::object v2 = ObjectOf(r);
  EXPECT_EQ(IntAt(v2, "version"), 2);
  EXPECT_EQ(StringAt(v2, "title"), "v2");
  EXPECT_EQ(StringAt(v2, "description"), "d") << "fields not in the patch stay";
  EXPECT_EQ(v2.at("context"), json::parse(R"({"n":1})"));
  EXPECT_EQ(v2.at("tags"), json::value(json::array{"a"}));
  EXPECT_EQ(StringAt(v2, "checksum"), StringAt(rec, "checksum"));
  EXPECT_EQ(StringAt(v2, "id"), id);
  EXPECT_EQ(StringAt(v2, "created_at"), StringAt(rec, "created_at"));
  EXPECT_GE(StringAt(v2, "updated_at"), StringAt(rec, "updated_at"));
  EXPECT_EQ(StringAt(v2, "created_by"), "creator");
  EXPECT_EQ(StringAt(v2, "updated_by"), "editor");

  // Unquoted If-Match.
  r = client().Patch("/breadcrumbs/" + id, R"({"context":{"n":2}})", {{"If-Match", "2"}});
  ASSERT_EQ(r.status, 200) << r.Describe();
  json::object v3 = ObjectOf(r);
  EXPECT_EQ(IntAt(v3, "version"), 3);
  EXPECT_EQ(StringAt(v3, "checksum"), "sha256:" + Sha256Hex(R"({"n":2})"));
  EXPECT_EQ(StringAt(v3, "updated_by"), "anonymous");

  // Quoted If-Match (the ETag as returned).
  r = client().Patch("/breadcrumbs/" + id, R"({"tags":["x","y"],"description":null})", {{"If-Match", "\"3\""}});
  ASSERT_EQ(r.status, 200) << r.Describe();
  json::object v4 = ObjectOf(r);
  EXPECT_EQ(IntAt(v4, "version"), 4);
  EXPECT_TRUE(v4.at("description").is_null()) << "null clears a nullable field: " << r.body;
  EXPECT_EQ(v4.at("tags"), json::value(json::array{"x", "y"}));

  // Stale If-Match: 412 and nothing changes.
  json::object before = FullOk(id);
  for (std::string stale : {"1", "\"3\"", "5"}) {
    r = client().Patch("/breadcrumbs/" + id, R"({"title":"lost update"})", {{"If-Match", stale}});
    EXPECT_TRUE(IsError(r, 412, "precondition_failed")) << "If-Match: " << stale;
  }
  EXPECT_EQ(FullOk(id), before);

  // The GET views follow.
  Response view = client().Get("/breadcrumbs/" + id);
  EXPECT_EQ(IntAt(ObjectOf(view), "version"), 4);
  EXPECT_EQ(view.Header("etag").value_or(""), "\"4\"");
}

TEST_F(e2e_routes, PatchUnknownIdIs404) {
  CreateTitled("exists");
  Response r = client().Patch("/breadcrumbs/0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", R"({"title":"x"})");
  EXPECT_TRUE(IsError(r, 404, "not_found"));
  r = client().Patch("/breadcrumbs/0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", R"({"title":"x"})", {{"If-Match", "1"}});
  EXPECT_TRUE(IsError(r, 404, "not_found"));
}

TEST_F(e2e_routes, HistoryListsEveryVersionOldestFirst) {
  json::object rec = CreateOk(json::parse(R"({"title":"h1","tags":["a"],"context":{"step":1}})"),
                              {{"X-Cairn-Actor", "u1"}});
  const std::string id = StringAt(rec, "id");
  PatchOk(id, json::parse(R"({"context":{"step":2}})"), {{"X-Cairn-Actor", "u2"}});
  PatchOk(id, json::parse(R"({"title":"h3","tags":["b"],"context":{"step":3,"done":true}})"),
          {{"X-Cairn-Actor", "u3"}});
  json::object current = FullOk(id);

  Response r = client().Get("/breadcrumbs/" + id + "/history");
  ASSERT_EQ(r.status, 200) << r.Describe();
  json::object body = ObjectOf(r);
  EXPECT_EQ(StringAt(body, "id"), id);
  ASSERT_TRUE(body.contains("versions") && body.at("versions").is_array()) << r.body;
  const json::array& versions = body.at("versions").as_array();
  ASSERT_EQ(versions.size(), 3u) << r.body;
  const char* contexts[] = {R"({"step":1})", R"({"step":2})", R"({"done":true,"step":3})"};
  const char* titles[] = {"h1", "h1", "h3"};
  const char* actors[] = {"u1", "u2", "u3"};
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(versions[i].is_object());
    const json::object& v = versions[i].as_object();
    EXPECT_EQ(KeysOf(v), (std::set<std::string>{"version", "title", "tags", "context", "checksum", "updated_by",
                                              "updated_at"}))
        << json::serialize(v);
    EXPECT_EQ(IntAt(v, "version"), static_cast<int64_t>(i + 1));
    EXPECT_EQ(StringAt(v, "title"), titles[i]);
    EXPECT_EQ(v.at("context"), json::parse(contexts[i]));
    EXPECT_EQ(StringAt(v, "checksum"), "sha256:" + Sha256Hex(contexts[i]));
    EXPECT_EQ(StringAt(v, "updated_by"), actors[i]);
    EXPECT_TRUE(std::regex_match(StringAt(v, "updated_at"), kTimestamp));
  }
  EXPECT_EQ(versions[0].as_object().at("tags"), json::value(json::array{"a"}));
  EXPECT_EQ(versions[2].as_object().at("tags"), json::value(json::array{"b"}));
  EXPECT_EQ(StringAt(versions[0].as_object(), "updated_at"), StringAt(rec, "created_at"));
  EXPECT_EQ(StringAt(versions[2].as_object(), "updated_at"), StringAt(current, "updated_at"));
  EXPECT_EQ(StringAt(versions[2].as_object(), "checksum"), StringAt(current, "checksum"));
  EXPECT_LE(StringAt(versions[0].as_object(), "updated_at"), StringAt(versions[1].as_object(), "updated_at"));
  EXPECT_LE(StringAt(versions[1].as_object(), "updated_at"), StringAt(versions[2].as_object(), "updated_at"));
}

TEST_F(e2e_routes, DeleteThenEverythingIs404) {
  json::object keep = CreateTitled("keep");
  json::object rec = CreateTitled("doomed");
  const std::string id = StringAt(rec, "id");
  Response r = client().Delete("/breadcrumbs/" + id);
  ASSERT_EQ(r.status, 204) << r.Describe();
  EXPECT_TRUE(r.body.empty()) << r.body;

  EXPECT_TRUE(IsError(client().Get("/breadcrumbs/" + id), 404, "not_found"));
  EXPECT_TRUE(IsError(client().Get("/breadcrumbs/" + id + "/full"), 404, "not_found"));
  EXPECT_TRUE(IsError(client().Patch("/breadcrumbs/" + id, R"({"title":"zombie"})"), 404, "not_found"));
  EXPECT_TRUE(IsError(client().Delete("/breadcrumbs/" + id), 404, "not_found"));
  EXPECT_EQ(ListIds(), std::vector<std::string>{StringAt(keep, "id")});
  EXPECT_EQ(client().Get("/breadcrumbs/" + StringAt(keep, "id")).status, 200);
}

TEST_F(e2e_routes, DeleteHonoursIfMatch) {
  json::object rec = CreateTitled("guarded");
  const std::string id = StringAt(rec, "id");
  PatchOk(id, json::parse(R"({"title":"guarded v2"})"));

  EXPECT_TRUE(IsError(client().Delete("/breadcrumbs/" + id, {{"If-Match", "1"}}), 412, "precondition_failed"));
  EXPECT_TRUE(IsError(client().Delete("/breadcrumbs/" + id, {{"If-Match", "\"1\""}}), 412, "precondition_failed"));
  json::object still = FullOk(id);
  EXPECT_EQ(IntAt(still, "version"), 2);
  EXPECT_EQ(StringAt(still, "title"), "guarded v2");

  Response r = client().Delete("/breadcrumbs/" + id, {{"If-Match", "\"2\""}});
  EXPECT_EQ(r.status, 204) << r.Describe();
  EXPECT_TRUE(IsError(client().Get("/breadcrumbs/" + id), 404, "not_found"));
  EXPECT_TRUE(IsError(client().Delete("/breadcrumbs/0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"), 404, "not_found"));
}

TEST_F(e2e_routes, IdempotencyKeyReplaysTheSameRecord) {
  const std::string body = R"({"title":"once","context":{"n":1}})";
  Response first = client().Post("/breadcrumbs", body, {{"Idempotency-Key", "key-1"}});
  ASSERT_EQ(first.status, 201) << first.Describe();
  EXPECT_FALSE(first.Header("idempotent-replayed").has_value() &&
               first.Header("idempotent-replayed").value() == "true");
  Response second = client().Post("/breadcrumbs", body, {{"Idempotency-Key", "key-1"}});
  ASSERT_EQ(second.status, 200) << second.Describe();
  EXPECT_EQ(second.Header("idempotent-replayed").value_or("(absent)"), "true");
  EXPECT_EQ(StringAt(ObjectOf(second), "id"), StringAt(ObjectOf(first), "id"));
  EXPECT_EQ(second.Json(), first.Json());
  EXPECT_EQ(ListIds().size(), 1u);

  // Same key, different body: 409 and no new record.
  Response clash = client().Post("/breadcrumbs", R"({"title":"twice"})", {{"Idempotency-Key", "key-1"}});
  EXPECT_TRUE(IsError(clash, 409, "conflict"));
  EXPECT_EQ(ListIds().size(), 1u);

  // Another key: a new record.
  Response other = client().Post("/breadcrumbs", body, {{"Idempotency-Key", "key-2"}});
  EXPECT_EQ(other.status, 201) << other.Describe();
  EXPECT_NE(StringAt(ObjectOf(other), "id"), StringAt(ObjectOf(first), "id"));
  // No key: a new record each time.
  EXPECT_EQ(client().Post("/breadcrumbs", body).status, 201);
  EXPECT_EQ(client().Post("/breadcrumbs", body).status, 201);
  EXPECT_EQ(ListIds().size(), 4u);
}

TEST_F(e2e_routes, PathIsUniqueAcrossRecords) {
  json::object a = CreateOk(json::parse(R"({"title":"a","path":"team/alpha/doc"})"));
  ASSERT_FALSE(a.empty());
  auto before = StoreSnapshot();
  EXPECT_TRUE(IsError(client().Post("/breadcrumbs", R"({"title":"b","path":"team/alpha/doc"})"), 409, "conflict"));
  EXPECT_EQ(StoreSnapshot(), before);

  json::object b = CreateOk(json::parse(R"({"title":"b","path":"team/alpha/other"})"));
  const std::string bid = StringAt(b, "id");
  before = StoreSnapshot();
  EXPECT_TRUE(IsError(client().Patch("/breadcrumbs/" + bid, R"({"path":"team/alpha/doc"})"), 409, "conflict"));
  EXPECT_EQ(StoreSnapshot(), before);

  // Re-setting one's own path is not a conflict; clearing frees it.
  EXPECT_EQ(IntAt(PatchOk(StringAt(a, "id"), json::parse(R"({"path":"team/alpha/doc","title":"a2"})")), "version"), 2);
  PatchOk(StringAt(a, "id"), json::parse(R"({"path":null})"));
  EXPECT_EQ(StringAt(PatchOk(bid, json::parse(R"({"path":"team/alpha/doc"})")), "path"), "team/alpha/doc");
}

TEST_F(e2e_routes, DeletedRecordFreesItsPath) {
  json::object a = CreateOk(json::parse(R"({"title":"a","path":"x/y"})"));
  ASSERT_EQ(client().Delete("/breadcrumbs/" + StringAt(a, "id")).status, 204);
  json::object b = CreateOk(json::parse(R"({"title":"b","path":"x/y"})"));
  EXPECT_EQ(StringAt(b, "path"), "x/y");
}

TEST_F(e2e_routes, ContentTypeWithCharsetIsAccepted) {
  Request req{"POST", "/breadcrumbs", {}, R"({"title":"charset"})", std::string("application/json; charset=utf-8")};
  Response r = client().Send(req);
  EXPECT_EQ(r.status, 201) << r.Describe();
}

TEST_F(e2e_routes, ActorHeaderIsRecorded) {
  json::object rec = CreateOk(json::parse(R"({"title":"who"})"), {{"X-Cairn-Actor", "user:42 (Ann)"}});
  EXPECT_EQ(StringAt(rec, "created_by"), "user:42 (Ann)");
  const std::string long_actor(128, 'a');
  json::object rec2 = CreateOk(json::parse(R"({"title":"who2"})"), {{"X-Cairn-Actor", long_actor}});
  EXPECT_EQ(StringAt(rec2, "created_by"), long_actor);
}

TEST_F(e2e_routes, KnownRoutesAnswerWrongMethodsWith405AndAllow) {
  json::object rec = CreateTitled("r");
  const std::string id = StringAt(rec, "id");
  struct Case {
    std::string method, target;
    std::set<std::string> must_allow;
  };
  const std::vector<Case> cases = {
      {"PUT", "/breadcrumbs", {"GET", "POST"}},
      {"DELETE", "/breadcrumbs", {"GET", "POST"}},
      {"POST", "/health", {"GET"}},
      {"DELETE", "/metrics", {"GET"}},
      {"POST", "/breadcrumbs/" + id, {"GET", "PATCH", "DELETE"}},
      {"PUT", "/breadcrumbs/" + id, {"GET", "PATCH", "DELETE"}},
      {"PATCH", "/breadcrumbs/" + id + "/full", {"GET"}},
      {"DELETE", "/breadcrumbs/" + id + "/history", {"GET"}},
  };
  for (const auto& c : cases) {
    Request req{c.method, c.target, {}, std::nullopt};
    if (c.method == "POST" || c.method == "PUT" || c.method == "PATCH") req.body = R"({"title":"x"})";
    Response r = client().Send(req);
    EXPECT_TRUE(IsError(r, 405, "method_not_allowed")) << c.method << " " << c.target;
    std::set<std::string> allow = AllowSet(r);
    for (const auto& m : c.must_allow) {
      EXPECT_TRUE(allow.count(m)) << c.method << " " << c.target << ": Allow: " << r.Header("allow").value_or("(absent)");
    }
    EXPECT_FALSE(allow.count(c.method)) << c.method << " " << c.target << ": Allow: " << r.Header("allow").value_or("");
  }
  EXPECT_EQ(IntAt(FullOk(id), "version"), 1);
}

}  // namespace
}  // namespace cairn::e2e
