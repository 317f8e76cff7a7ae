#include "store/sqlite/query_builder.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <limits>
#include <set>
#include <string>

#include "store/sqlite/breadcrumb_rows.h"
#include "store/sqlite/connection.h"
#include "store/sqlite/migrations.h"

namespace cairn::store::sqlite {
namespace {

namespace json = boost::json;

constexpr int64_t kNow = 1'795'225'252'000'000;

// The cursor scheme (hex of "c1.<rid>" XOR 0x5A), reproduced to build well-encoded but invalid cursors.
std::string Obfuscate(const std::string& text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : text) {
    out.push_back(kHex[(c ^ 0x5A) >> 4]);
    out.push_back(kHex[(c ^ 0x5A) & 0x0F]);
  }
  return out;
}

TEST(CursorTest, RoundTrip) {
  for (int64_t rid : {int64_t{0}, int64_t{1}, int64_t{42}, int64_t{1'000'000'007},
                      std::numeric_limits<int64_t>::max()}) {
    std::string cursor = EncodeCursor(rid);
    EXPECT_FALSE(cursor.empty());
    EXPECT_EQ(DecodeCursor(cursor), rid) << cursor;
  }
  EXPECT_NE(EncodeCursor(1), EncodeCursor(2));
  // Opaque: not the bare number.
  EXPECT_EQ(EncodeCursor(1'000'000'007).find("1000000007"), std::string::npos);
}

TEST(CursorTest, RejectsGarbage) {
  std::string valid = EncodeCursor(12345);
  const std::string cases[] = {
      "",
      "x",
      "garbage!",
      valid.substr(1),                      // odd length
      valid + "zz",                         // not hex
      "0x" + valid,                         // prefix
      " " + valid.substr(1),                // whitespace
      std::string(66, 'a'),                 // too long
      Obfuscate("c2.5"),                    // unknown version
      Obfuscate("c1."),                     // no number
      Obfuscate("c1.-5"),                   // negative
      Obfuscate("c1.+5"),                   // sign
      Obfuscate("c1.12x"),                  // trailing garbage
      Obfuscate("c1.5 "),                   // trailing space
      Obfuscate("c1.99999999999999999999"), // overflows int64
      Obfuscate("C1.5"),
      "c1.5",                               // the plain text is not a cursor
  };
  for (const auto& cursor : cases) EXPECT_EQ(DecodeCursor(cursor), std::nullopt) << cursor;
  EXPECT_EQ(DecodeCursor(Obfuscate("c1.77")), 77);  // sanity check of the reproduced scheme
}

// Every "?N" placeholder in `sql`, in order of appearance.
std::vector<int> Placeholders(const std::string& sql) {
  std::vector<int> out;
  for (size_t i = 0; i < sql.size(); ++i) {
    if (sql[i] != '?') continue;
    size_t j = i + 1;
    while (j < sql.size() && std::isdigit(static_cast<unsigned char>(sql[j]))) ++j;
    EXPECT_GT(j, i + 1) << "bare '?' at " << i << " in " << sql;  // anonymous placeholders would misalign
    out.push_back(std::stoi(sql.substr(i + 1, j - i - 1)));
    i = j - 1;
  }
  return out;
}

// The bind value of the placeholder that directly follows `marker` in the SQL.
SqlValue BindAfter(const BuiltQuery& built, const std::string& marker) {
  size_t pos = built.sql.find(marker);
  EXPECT_NE(pos, std::string::npos) << marker << " not in " << built.sql;
  if (pos == std::string::npos) return nullptr;
  pos += marker.size();
  EXPECT_EQ(built.sql[pos], '?') << marker;
  size_t end = pos + 1;
  while (end < built.sql.size() && std::isdigit(static_cast<unsigned char>(built.sql[end]))) ++end;
  size_t index = std::stoul(built.sql.substr(pos + 1, end - pos - 1));
  EXPECT_GE(index, 1u);
  EXPECT_LE(index, built.binds.size());
  if (index < 1 || index > built.binds.size()) return nullptr;
  return built.binds[index - 1];
}

model::BreadcrumbQuery EveryFeature() {
  model::BreadcrumbQuery q;
  q.schema_name = "note.v1";
  q.all_tags = {"a", "b"};
  q.any_tags = {"b", "c"};
  q.path = "p/q";
  q.path_prefix = "p";
  auto rules = model::ParseContextRules(json::parse(R"([
      {"path":"$.n","op":"eq","value":5},
      {"path":"$.s","op":"ne","value":"y"},
      {"path":"$.n","op":"gt","value":4},
      {"path":"$.n","op":"gte","value":5.0},
      {"path":"$.n","op":"lt","value":6},
      {"path":"$.s","op":"lte","value":"x"},
      {"path":"$.s","op":"in","value":["x","z",1]},
      {"path":"$.list","op":"contains","value":"k"},
      {"path":"$.list","op":"contains_any","value":["m","k"]},
      {"path":"$.obj","op":"eq","value":{"z":[1]}},
      {"path":"$.e","op":"exists"},
      {"path":"$.missing","op":"exists","value":false},
      {"path":"$.s","op":"prefix","value":"x"}])"),
                                        model::Limits{});
  EXPECT_TRUE(rules.ok()) << rules.status().ToString();
  if (rules.ok()) q.context_match = std::move(rules).value();
  q.order = model::SortOrder::kNewestFirst;
  q.cursor = EncodeCursor(1000);
  q.limit = 10;
  return q;
}

TEST(BuildListQueryTest, PlaceholdersAndBindsAgree) {
  auto built = BuildListQuery(BreadcrumbColumns(), "owner-1", EveryFeature(), kNow);
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  std::vector<int> used = Placeholders(built->sql);
  ASSERT_FALSE(used.empty());
  std::set<int> distinct(used.begin(), used.end());
  // Every bind is referenced, and no placeholder points past the binds.
  EXPECT_EQ(distinct.size(), built->binds.size()) << built->sql;
  EXPECT_EQ(*distinct.begin(), 1);
  EXPECT_EQ(*distinct.rbegin(), static_cast<int>(built->binds.size()));

  EXPECT_EQ(BindAfter(*built, "b.owner_id = "), SqlValue(std::string("owner-1")));
  EXPECT_EQ(BindAfter(*built, "b.expires_at > "), SqlValue(kNow));
  EXPECT_EQ(BindAfter(*built, "b.schema_name = "), SqlValue(std::string("note.v1")));
  EXPECT_EQ(BindAfter(*built, "b.path = "), SqlValue(std::string("p/q")));
  EXPECT_EQ(BindAfter(*built, "b.path >= "), SqlValue(std::string("p/")));
  EXPECT_EQ(BindAfter(*built, "b.path < "), SqlValue(std::string("p0")));
  EXPECT_EQ(BindAfter(*built, "b.rid < "), SqlValue(int64_t{1000}));
  EXPECT_EQ(BindAfter(*built, "LIMIT "), SqlValue(int64_t{11}));  // one more than a page
  EXPECT_EQ(BindAfter(*built, "json_type(b.context, "), SqlValue(std::string("$.n")));
  EXPECT_NE(built->sql.find("ORDER BY b.rid DESC"), std::string::npos);  // an exact path drives the scan

  // Every tag and rule value is bound somewhere (nothing is spliced into the SQL text).
  auto bound = [&](const SqlValue& v) {
    return std::find(built->binds.begin(), built->binds.end(), v) != built->binds.end();
  };
  for (const char* s : {"a", "b", "c", "$.s", "$.list", "$.obj", "$.e", "$.missing", "y", "x", "z", "k", "m"}) {
    EXPECT_TRUE(bound(SqlValue(std::string(s)))) << s;
  }
  EXPECT_TRUE(bound(SqlValue(int64_t{5})));
  EXPECT_TRUE(bound(SqlValue(5.0)));
  // Object values are compared member by member: each key is a bound path label, each leaf a bind.
  EXPECT_TRUE(bound(SqlValue(std::string(R"(."z")"))));
  EXPECT_TRUE(bound(SqlValue(std::string("[0]"))));
  EXPECT_TRUE(bound(SqlValue(int64_t{1})));
  EXPECT_EQ(built->sql.find("note.v1"), std::string::npos);
  EXPECT_EQ(built->sql.find("owner-1"), std::string::npos);
}

TEST(BuildListQueryTest, ATagDrivesTheScanInRidOrder) {
  model::BreadcrumbQuery q;
  q.all_tags = {"first", "second"};
  q.cursor = EncodeCursor(77);
  auto built = BuildListQuery("b.rid", "o", q, kNow);
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  EXPECT_NE(built->sql.find("FROM breadcrumb_tags t JOIN breadcrumbs b ON b.rid = t.rid"), std::string::npos) << built->sql;
  EXPECT_EQ(BindAfter(*built, "t.tag = "), SqlValue(std::string("first")));
  EXPECT_NE(built->sql.find("b.rid IN (SELECT rid FROM breadcrumb_tags WHERE tag = "), std::string::npos) << built->sql;
  EXPECT_EQ(BindAfter(*built, "t.rid < "), SqlValue(int64_t{77}));
  EXPECT_NE(built->sql.find("ORDER BY t.rid DESC"), std::string::npos) << built->sql;
}

TEST(BuildListQueryTest, OldestFirstCursorAndNoFilters) {
  model::BreadcrumbQuery q;
  q.order = model::SortOrder::kOldestFirst;
  q.cursor = EncodeCursor(7);
  q.limit = 3;
  auto built = BuildListQuery("b.rid", "o", q, kNow);
  ASSERT_TRUE(built.ok());
  EXPECT_NE(built->sql.find("ORDER BY b.rid ASC"), std::string::npos);
  EXPECT_EQ(BindAfter(*built, "b.rid > "), SqlValue(int64_t{7}));
  EXPECT_EQ(BindAfter(*built, "LIMIT "), SqlValue(int64_t{4}));
  std::set<int> distinct;
  for (int n : Placeholders(built->sql)) distinct.insert(n);
  EXPECT_EQ(distinct.size(), built->binds.size());
}

TEST(BuildListQueryTest, BadCursorIsInvalidArgument) {
  model::BreadcrumbQuery q;
  q.cursor = "not-a-cursor";
  auto built = BuildListQuery(BreadcrumbColumns(), "o", q, kNow);
  ASSERT_FALSE(built.ok());
  EXPECT_EQ(built.status().code(), StatusCode::kInvalidArgument);
}

model::Breadcrumb Row(std::string id, std::string_view context, std::vector<std::string> tags,
                      std::optional<std::string> path) {
  model::Breadcrumb c;
  c.id = std::move(id);
  c.owner_id = "owner-1";
  c.schema_name = "note.v1";
  c.title = c.id;
  c.tags = std::move(tags);
  c.context = json::parse(context);
  c.path = std::move(path);
  c.version = 1;
  c.checksum = "sha256:0";
  c.created_by = c.updated_by = "t";
  c.trace.trace_id = c.id;
  return c;
}

// The statement is valid SQL for the real schema, and the binds line up with it.
TEST(BuildListQueryTest, RunsAgainstTheSchema) {
  auto conn = Connection::Open(":memory:", "normal");
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  ASSERT_TRUE(RunMigrations(**conn).ok());
  const char* match = R"({"n":5,"s":"x","list":["k"],"obj":{"z":[1]},"e":null})";
  ASSERT_TRUE(InsertBreadcrumb(**conn, Row("match", match, {"a", "b"}, "p/q")).ok());
  ASSERT_TRUE(InsertBreadcrumb(**conn, Row("n-is-4", R"({"n":4,"s":"x","list":["k"],"obj":{"z":[1]},"e":1})",
                                           {"a", "b"}, "p/r")).ok());
  ASSERT_TRUE(InsertBreadcrumb(**conn, Row("no-tag-b", match, {"a", "c"}, "p/s")).ok());
  model::Breadcrumb other_owner = Row("other-owner", match, {"a", "b"}, "p/q");
  other_owner.owner_id = "owner-2";
  ASSERT_TRUE(InsertBreadcrumb(**conn, other_owner).ok());

  model::BreadcrumbQuery q = EveryFeature();
  q.path.reset();  // so that the path-prefix clause decides
  auto built = BuildListQuery(BreadcrumbColumns(), "owner-1", q, kNow);
  ASSERT_TRUE(built.ok());
  sqlite3_stmt* raw = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2((*conn)->raw(), built->sql.c_str(), -1, &raw, nullptr), SQLITE_OK)
      << sqlite3_errmsg((*conn)->raw()) << "\n" << built->sql;
  EXPECT_EQ(sqlite3_bind_parameter_count(raw), static_cast<int>(built->binds.size()));
  for (int i = 1; i <= sqlite3_bind_parameter_count(raw); ++i) {
    EXPECT_EQ(std::string(sqlite3_bind_parameter_name(raw, i)), "?" + std::to_string(i));
  }
  sqlite3_finalize(raw);

  auto stmt = (*conn)->Prepare(built->sql);
  ASSERT_TRUE(stmt.ok()) << stmt.status().ToString();
  for (size_t i = 0; i < built->binds.size(); ++i) (*stmt)->BindValue(static_cast<int>(i + 1), built->binds[i]);
  std::vector<std::string> ids;
  while (true) {
    auto row = (*stmt)->Step();
    ASSERT_TRUE(row.ok()) << row.status().ToString();
    if (!*row) break;
    auto crumb = ReadBreadcrumb(**stmt, nullptr);
    ASSERT_TRUE(crumb.ok());
    ids.push_back(crumb->id);
  }
  EXPECT_EQ(ids, std::vector<std::string>{"match"});
}

// `prefix` compares bytes: LIKE wildcards in the prefix are literal, only strings match, and a
// prefix longer than the value or in the middle of it does not match.
TEST(BuildListQueryTest, PrefixRuleAgainstTheSchema) {
  auto conn = Connection::Open(":memory:", "normal");
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  ASSERT_TRUE(RunMigrations(**conn).ok());
  const std::pair<const char*, const char*> rows[] = {
      {"pct", R"({"s":"50%_off"})"}, {"like", R"({"s":"50xxoff"})"}, {"short", R"({"s":"5"})"},
      {"number", R"({"s":500})"},    {"inner", R"({"s":"a50%_"})"},  {"accent", R"({"s":"héllo"})"},
      {"list", R"({"s":["50%_off"]})"}, {"none", R"({})"}};
  for (const auto& [id, context] : rows) ASSERT_TRUE(InsertBreadcrumb(**conn, Row(id, context, {}, std::nullopt)).ok());

  auto ids_for = [&](const std::string& rule) {
    std::vector<std::string> ids;
    model::BreadcrumbQuery q;
    q.order = model::SortOrder::kOldestFirst;
    auto rules = model::ParseContextRules(json::parse(rule), model::Limits{});
    EXPECT_TRUE(rules.ok()) << rules.status().ToString();
    if (!rules.ok()) return ids;
    q.context_match = std::move(rules).value();
    auto built = BuildListQuery(BreadcrumbColumns(), "owner-1", q, kNow);
    EXPECT_TRUE(built.ok());
    if (!built.ok()) return ids;
    auto stmt = (*conn)->Prepare(built->sql);
    EXPECT_TRUE(stmt.ok()) << stmt.status().ToString() << "\n" << built->sql;
    if (!stmt.ok()) return ids;
    for (size_t i = 0; i < built->binds.size(); ++i) (*stmt)->BindValue(static_cast<int>(i + 1), built->binds[i]);
    while (true) {
      auto row = (*stmt)->Step();
      EXPECT_TRUE(row.ok()) << row.status().ToString();
      if (!row.ok() || !*row) break;
      auto crumb = ReadBreadcrumb(**stmt, nullptr);
      EXPECT_TRUE(crumb.ok());
      if (crumb.ok()) ids.push_back(crumb->id);
    }
    return ids;
  };
  using Ids = std::vector<std::string>;
  EXPECT_EQ(ids_for(R"({"path":"$.s","op":"prefix","value":"50%_"})"), Ids{"pct"});
  EXPECT_EQ(ids_for(R"({"path":"$.s","op":"prefix","value":"5"})"), (Ids{"pct", "like", "short"}));
  EXPECT_EQ(ids_for(R"({"path":"$.s","op":"prefix","value":"50%_off!"})"), Ids{});
  EXPECT_EQ(ids_for(R"({"path":"$.s","op":"prefix","value":"hé"})"), Ids{"accent"});
  EXPECT_EQ(ids_for(R"({"path":"$.s","op":"prefix","value":"h"})"), Ids{"accent"});
  EXPECT_EQ(ids_for(R"({"path":"$.s","op":"prefix","value":""})"),
            (Ids{"pct", "like", "short", "inner", "accent"}));
}

}  // namespace
}  // namespace cairn::store::sqlite
