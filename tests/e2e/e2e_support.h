// Shared fixture and helpers for the end-to-end tests.
#pragma once

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "http_client.h"
#include "server_process.h"

namespace cairn::e2e {

namespace json = boost::json;

// Every test gets its own server (port 0, own temporary data dir). Subclasses pass extra flags
// by overriding ServerArgs().
class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  virtual std::vector<std::string> ServerArgs() const { return {}; }
  // Whether the server registers its built-in tools (off by default: most tests want an empty store).
  bool builtin_tools_ = false;

  ServerProcess& server() { return *server_; }
  HttpClient& client() { return *client_; }
  // After a restart the port changes: point the client at the new one.
  void Reconnect();

  // POST /breadcrumbs that must succeed with 201; returns the record (an empty object on failure,
  // with a test failure recorded).
  json::object CreateOk(const json::value& body, const Headers& headers = {});
  json::object CreateTitled(const std::string& title) { return CreateOk(json::object{{"title", title}}); }
  // GET /breadcrumbs/{id}/full that must succeed.
  json::object FullOk(const std::string& id);
  // PATCH that must succeed with 200.
  json::object PatchOk(const std::string& id, const json::value& body, const Headers& headers = {});

  // All list items for `query` (without limit/cursor), following next_cursor with `limit` per page.
  // Fails the test on any non-200 page, on a page larger than `limit`, or on a cursor loop.
  std::vector<json::object> ListAll(const std::string& query = "", int limit = 1000, int* pages = nullptr);
  // The same for any listing route answering {items, next_cursor}: `path` may carry a query.
  std::vector<json::object> ListPages(const std::string& path, int limit = 1000, int* pages = nullptr);
  std::vector<std::string> ListIds(const std::string& query = "", int limit = 1000);

  // A compact picture of the store (every record's id, version, checksum, title, tags,
  // updated_at), oldest first: equal pictures mean nothing was written.
  std::vector<std::string> StoreSnapshot();

 private:
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<HttpClient> client_;
};

// The response is `status` with a JSON error body {"error":{"code":code,"message":"..."}} and, when
// `field` is given, error.field equal to it (or, if `field` ends with '*', starting with the rest).
::testing::AssertionResult IsError(const Response& response, long status, const std::string& code,
                                   const std::optional<std::string>& field = std::nullopt);

// A 4xx response with a well-formed JSON error body (any code).
::testing::AssertionResult IsClientError(const Response& response);

// The body as a JSON object (an empty object, and a test failure, if it is not one).
json::object ObjectOf(const Response& response);

// Helpers on JSON objects that tolerate absent keys.
std::string StringAt(const json::object& obj, std::string_view key);
int64_t IntAt(const json::object& obj, std::string_view key);

std::string Sha256Hex(std::string_view data);
// Lowercase hex HMAC-SHA256 of `data` keyed with `key` (a webhook receiver checking a signature).
std::string HmacSha256Hex(std::string_view key, std::string_view data);

// Polls GET /search/status until the embedding worker has gone through every event (backlog 0),
// at most `deadline`.
// The value of an unlabelled metric in Prometheus text (GET /metrics), or -1.
double MetricValue(const std::string& prometheus_text, const std::string& name);
// The sum of every series of a metric (all its labels) in Prometheus text; 0 when it has none.
double MetricSum(const std::string& prometheus_text, const std::string& name);
// Polls `port`'s GET /metrics (with a deadline) until the sum of metric `name`'s series is `value`.
::testing::AssertionResult AwaitMetric(int port, const std::string& name, double value,
                                       std::chrono::seconds deadline = std::chrono::seconds(30));

::testing::AssertionResult SearchCaughtUp(HttpClient& client, std::chrono::seconds deadline = std::chrono::seconds(30));

// `t` as RFC 3339 UTC with microseconds ("2026-11-25T00:23:12.123456Z"), e.g. for a ttl.
std::string Rfc3339Utc(std::chrono::system_clock::time_point t);

std::string JsonText(const json::value& value);

}  // namespace cairn::e2e
