// query_string_fuzz: the query of GET /breadcrumbs?… from the bytes of the target to the rows
// SQLite returns. The input is the query string, optionally followed by a newline and the JSON
// context of one more record. The query is decoded as the server decodes it (request_target.h),
// parsed by ParseListQuery (request_support.h, model/query.h), compiled by BuildListQuery
// (store/sqlite/query_builder.h) and run on an in-memory SQLite database holding a few records.
//
// Properties, besides no sanitizer report:
//   - decoding: each decoded parameter, percent-encoded again, decodes to itself;
//   - an accepted query is within bounds: limit 1..max_list_limit, valid tags (at most max_tags),
//     schema name, paths and context rules; no parameter but `tag` twice; no unknown parameter;
//   - its SQL carries every client value as a bound parameter: no client byte in the SQL text
//     (checked as: no quote, semicolon, control or non-ASCII byte), every ?N bound, every bind used;
//   - the SQL prepares and runs, and returns exactly the records the same conditions select in
//     memory: tags, schema, path, path prefix, expiry, owner, cursor, order and page size, and
//     context_match through RuleHolds (model/context_rule_eval.h, "the same meaning as the SQL").
#include <sqlite3.h>

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/url/encode.hpp>
#include <boost/url/rfc/unreserved_chars.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "base/json_util.h"
#include "fuzz_check.h"
#include "known_findings.h"
#include "model/breadcrumb_codec.h"
#include "model/context_rule_eval.h"
#include "request_target.h"
#include "server/request_support.h"
#include "store/sqlite/query_builder.h"

namespace {
namespace json = boost::json;
namespace model = cairn::model;
using cairn::store::sqlite::SqlValue;

constexpr int64_t kNow = 1'750'000'000'000'000;
constexpr const char* kOwner = "default";

struct Record {
  int64_t rid;
  std::string owner;
  std::optional<std::string> schema_name;
  std::vector<std::string> tags;
  std::optional<std::string> path;
  std::optional<int64_t> expires_at;
  json::value context;
};

// The records every query runs over: a little of everything a list query can look at.
std::vector<Record> FixedRecords() {
  json::value rich = json::parse(R"({"n":5,"f":2.5,"one":1,"onef":1.0,"ones":"1","t":true,"z":null,
      "s":"hello/world","pct":"50%_off","list":["k",1,{"x":[1,2]}],"pq":{"p":1,"q":2},
      "obj":{"a":{"b":[10,20,{"c":"deep"}]}},"big":9007199254740993,"neg":-7,"e":"","uni":"caf\u00e9",
      "arr":[[1,2],[3]],"name-with_dash":"x"})");
  return {
      {1, kOwner, "note.v1", {"a", "b"}, "users/u1/chats/c1", std::nullopt, rich},
      {2, kOwner, "task.v1", {"trip", "todo"}, "plans/2026/lisbon", std::nullopt,
       json::parse(R"({"city":"Lisbon","days":3,"budget":{"eur":900},"tags":["x","y"],"s":"50%"})")},
      {3, kOwner, std::nullopt, {}, std::nullopt, std::nullopt, json::object()},
      {4, kOwner, "note.v1", {"a"}, "users/u1", kNow - 1, rich},  // expired: never listed
      {5, "other", "note.v1", {"a", "b"}, "users/u2", std::nullopt, rich},  // another tenant
      {6, kOwner, "note.v1", {"b", "a/b", "%"}, "users/u1/chats/c10", std::nullopt,
       json::parse(R"({"n":5.0,"s":"hello","list":[],"pq":{"q":2,"p":1.0},"t":false,"z":0})")},
      {7, kOwner, "a", {"a"}, "users", kNow + 1000, json::parse("[1,2,3]")},
  };
}

constexpr int64_t kInputRid = 8;  // the record whose context comes from the input

void Check(int rc, sqlite3* db, const char* what) {
  FUZZ_CHECK(rc == SQLITE_OK || rc == SQLITE_DONE, std::string(what) + ": " + sqlite3_errmsg(db));
}

// The columns the list statement reads, as in migration 1 (store/sqlite/migrations.cpp).
class Database {
 public:
  Database() {
    Check(sqlite3_open(":memory:", &db_), db_, "open");
    Exec("CREATE TABLE breadcrumbs (rid INTEGER PRIMARY KEY AUTOINCREMENT, owner_id TEXT NOT NULL, schema_name TEXT,"
         " context TEXT NOT NULL, path TEXT, expires_at INTEGER);"
         "CREATE TABLE breadcrumb_tags (tag TEXT NOT NULL, rid INTEGER NOT NULL, PRIMARY KEY (tag, rid)) WITHOUT ROWID;");
    for (const Record& r : FixedRecords()) Insert(r);
  }
  ~Database() { sqlite3_close(db_); }

  void Insert(const Record& r) {
    sqlite3_stmt* stmt = nullptr;
    Check(sqlite3_prepare_v2(db_, "INSERT INTO breadcrumbs VALUES (?1, ?2, ?3, ?4, ?5, ?6)", -1, &stmt, nullptr), db_,
          "prepare insert");
    std::string context = json::serialize(r.context);
    sqlite3_bind_int64(stmt, 1, r.rid);
    sqlite3_bind_text(stmt, 2, r.owner.c_str(), -1, SQLITE_TRANSIENT);
    if (r.schema_name) sqlite3_bind_text(stmt, 3, r.schema_name->c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(stmt, 4, context.data(), static_cast<int>(context.size()), SQLITE_TRANSIENT);
    if (r.path) sqlite3_bind_text(stmt, 5, r.path->c_str(), -1, SQLITE_TRANSIENT);
    if (r.expires_at) sqlite3_bind_int64(stmt, 6, *r.expires_at);
    Check(sqlite3_step(stmt), db_, "insert");
    sqlite3_finalize(stmt);
    for (const auto& tag : r.tags) {
      Exec("INSERT INTO breadcrumb_tags VALUES ('" + tag + "', " + std::to_string(r.rid) + ")");
    }
  }

  void Remove(int64_t rid) {
    Exec("DELETE FROM breadcrumbs WHERE rid = " + std::to_string(rid) + "; DELETE FROM breadcrumb_tags WHERE rid = " +
         std::to_string(rid));
  }

  // The rids the statement returns; nullopt when it reaches a known finding.
  std::optional<std::vector<int64_t>> Run(const cairn::store::sqlite::BuiltQuery& built) {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(db_, built.sql.c_str(), static_cast<int>(built.sql.size()), &stmt, nullptr);
    const std::string error = sqlite3_errmsg(db_);
    FUZZ_CHECK(rc == SQLITE_OK, "the list statement does not prepare: " + error);
    for (size_t i = 0; i < built.binds.size(); ++i) {
      int index = static_cast<int>(i + 1);
      const SqlValue& v = built.binds[i];
      if (std::holds_alternative<int64_t>(v)) sqlite3_bind_int64(stmt, index, std::get<int64_t>(v));
      if (std::holds_alternative<double>(v)) sqlite3_bind_double(stmt, index, std::get<double>(v));
      if (const auto* text = std::get_if<std::string>(&v)) {
        sqlite3_bind_text(stmt, index, text->data(), static_cast<int>(text->size()), SQLITE_TRANSIENT);
      }
    }
    std::vector<int64_t> rids;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) rids.push_back(sqlite3_column_int64(stmt, 0));
    const std::string step_error = sqlite3_errmsg(db_);
    sqlite3_finalize(stmt);
    FUZZ_CHECK(rc == SQLITE_DONE, "the list statement fails: " + step_error);
    return rids;
  }

 private:
  void Exec(const std::string& sql) {
    char* error = nullptr;
    int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error);
    std::string message = error ? error : "";
    sqlite3_free(error);
    FUZZ_CHECK(rc == SQLITE_OK, sql + ": " + message);
  }

  sqlite3* db_ = nullptr;
};

bool Has(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// What the query selects, decided in memory.
bool Selected(const Record& r, const model::BreadcrumbQuery& q, std::optional<int64_t> cursor) {
  if (r.owner != kOwner || (r.expires_at && *r.expires_at <= kNow)) return false;
  if (q.schema_name && r.schema_name != q.schema_name) return false;
  for (const auto& tag : q.all_tags) {
    if (!Has(r.tags, tag)) return false;
  }
  if (!q.any_tags.empty() && std::none_of(q.any_tags.begin(), q.any_tags.end(), [&](const auto& t) { return Has(r.tags, t); })) {
    return false;
  }
  if (q.path && r.path != q.path) return false;
  if (q.path_prefix && !(r.path == q.path_prefix || (r.path && r.path->starts_with(*q.path_prefix + "/")))) return false;
  if (cursor && (q.order == model::SortOrder::kNewestFirst ? r.rid >= *cursor : r.rid <= *cursor)) return false;
  return model::AllRulesHold(q.context_match, r.context);
}

std::vector<int64_t> Expected(const std::vector<Record>& records, const model::BreadcrumbQuery& q) {
  std::optional<int64_t> cursor;
  if (q.cursor) cursor = cairn::store::DecodeCursor(*q.cursor);
  std::vector<int64_t> rids;
  for (const Record& r : records) {
    if (Selected(r, q, cursor)) rids.push_back(r.rid);
  }
  std::sort(rids.begin(), rids.end());
  if (q.order == model::SortOrder::kNewestFirst) std::reverse(rids.begin(), rids.end());
  if (rids.size() > q.limit + 1) rids.resize(q.limit + 1);
  return rids;
}

std::string Rids(const std::vector<int64_t>& rids) {
  std::string out = "[";
  for (int64_t rid : rids) out += (out.size() > 1 ? "," : "") + std::to_string(rid);
  return out + "]";
}

void CheckDecoding(const cairn::server::HttpRequest& request) {
  std::string again;
  for (const auto& [name, value] : request.query) {
    if (!again.empty()) again += '&';
    again += boost::urls::encode(name, boost::urls::unreserved_chars) + "=" +
             boost::urls::encode(value, boost::urls::unreserved_chars);
  }
  cairn::server::HttpRequest reparsed;
  FUZZ_CHECK(cairn::fuzz::DecodeTarget("/breadcrumbs?" + again, reparsed), "re-encoded query does not parse: " + again);
  // An empty query string is one empty parameter to Boost.URL; nothing to compare then.
  if (!request.query.empty()) FUZZ_CHECK(reparsed.query == request.query, "re-encoded query decodes differently: " + again);
}

void CheckBounds(const cairn::server::HttpRequest& request, const model::BreadcrumbQuery& q, const model::Limits& limits) {
  FUZZ_CHECK(q.limit >= 1 && q.limit <= limits.max_list_limit, "limit out of range");
  FUZZ_CHECK(q.all_tags.size() <= limits.max_tags && q.any_tags.size() <= limits.max_tags, "too many tags");
  for (const auto& tag : q.all_tags) FUZZ_CHECK(model::ValidateTag("tag", tag, limits).ok(), "invalid tag: " + tag);
  for (const auto& tag : q.any_tags) FUZZ_CHECK(model::ValidateTag("tag", tag, limits).ok(), "invalid tag: " + tag);
  if (q.schema_name) FUZZ_CHECK(model::ValidateSchemaName("s", *q.schema_name, limits).ok(), "invalid schema name");
  if (q.path) FUZZ_CHECK(model::ValidatePath("p", *q.path, limits).ok(), "invalid path");
  if (q.path_prefix) FUZZ_CHECK(model::ValidatePath("p", *q.path_prefix, limits).ok(), "invalid path prefix");
  FUZZ_CHECK(q.context_match.size() <= limits.max_context_rules, "too many context rules");
  for (const auto& rule : q.context_match) {
    FUZZ_CHECK(model::ValidateJsonPath("r", rule.path).ok(), "invalid rule path: " + rule.path);
  }
  if (q.cursor) FUZZ_CHECK(!q.cursor->empty(), "empty cursor");
  std::vector<std::string> seen;
  for (const auto& [name, value] : request.query) {
    FUZZ_CHECK(name == "tag" || !Has(seen, name), "parameter accepted twice: " + name);
    seen.push_back(name);
  }
}

void CheckSql(const cairn::store::sqlite::BuiltQuery& built) {
  for (unsigned char c : built.sql) {
    FUZZ_CHECK(c >= 0x20 && c < 0x7F && c != '"' && c != ';', "a client byte in the SQL text: " + built.sql);
  }
  std::vector<bool> used(built.binds.size(), false);
  for (size_t i = built.sql.find('?'); i != std::string::npos; i = built.sql.find('?', i + 1)) {
    size_t n = 0, j = i + 1;
    while (j < built.sql.size() && std::isdigit(static_cast<unsigned char>(built.sql[j]))) n = n * 10 + (built.sql[j++] - '0');
    FUZZ_CHECK(n >= 1 && n <= built.binds.size(), "a placeholder without a bind in " + built.sql);
    used[n - 1] = true;
  }
  FUZZ_CHECK(std::all_of(used.begin(), used.end(), [](bool u) { return u; }), "a bind no placeholder uses");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Database db;
  static const std::vector<Record> fixed = FixedRecords();
  const std::string_view input = cairn::fuzz::AsText(data, size);
  const size_t newline = input.find('\n');
  const std::string_view query_text = input.substr(0, newline);
  const model::Limits limits;

  cairn::server::HttpRequest request;
  request.method = "GET";
  if (!cairn::fuzz::DecodeTarget("/breadcrumbs?" + std::string(query_text), request)) return 0;
  CheckDecoding(request);
  auto query = cairn::server::ParseListQuery(request, limits);
  if (!query.ok()) {
    FUZZ_CHECK(query.status().code() == cairn::StatusCode::kInvalidArgument, query.status().ToString());
    return 0;
  }
  CheckBounds(request, *query, limits);

  auto built = cairn::store::sqlite::BuildListQuery("b.rid", kOwner, *query, kNow);
  if (!built.ok()) {
    FUZZ_CHECK(query->cursor && !cairn::store::DecodeCursor(*query->cursor), built.status().ToString());
    return 0;
  }
  CheckSql(*built);

  for (const auto& rule : query->context_match) {
    FUZZ_CHECK(!cairn::fuzz::HoldsNonFiniteNumber(rule.value), "a rule holds a non-finite number");
    if (cairn::fuzz::KnownFinding(cairn::fuzz::kSqlEscapedKeys, cairn::fuzz::HoldsKeyJsonEscapes(rule.value))) return 0;
  }
  std::vector<Record> records = fixed;
  if (newline != std::string_view::npos) {
    auto context = cairn::ParseJson(input.substr(newline + 1), limits.max_json_depth);
    if (context.ok()) {
      FUZZ_CHECK(!cairn::fuzz::HoldsNonFiniteNumber(*context), "ParseJson accepted a non-finite number");
      records.push_back({kInputRid, kOwner, "note.v1", {"a", "b"}, "users/u1/in", std::nullopt, *context});
    }
  }
  if (records.size() > fixed.size()) db.Insert(records.back());
  std::optional<std::vector<int64_t>> got = db.Run(*built);
  if (records.size() > fixed.size()) db.Remove(kInputRid);
  if (!got) return 0;
  std::vector<int64_t> want = Expected(records, *query);
  FUZZ_CHECK(*got == want, "SQL returned " + Rids(*got) + ", in memory " + Rids(want) + " for " + std::string(query_text) +
                              (records.size() > fixed.size() ? " over " + json::serialize(records.back().context) : ""));
  return 0;
}
