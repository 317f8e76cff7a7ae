// Secrets (docs/secrets.md): POST/GET/DELETE /secrets per tenant, admins only; values are sealed
// at rest with the master key and never come back — not from the secrets routes, the record
// routes, the event stream, the database file or the server's log.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "auth_support.h"
#include "e2e_support.h"
#include "sse_client.h"

namespace cairn::e2e {
namespace {

using namespace std::chrono_literals;

constexpr char kValue[] = "plain-secret-4f1c9e7a2b";
constexpr char kRotated[] = "rotated-secret-8d3a6c0e55";

class e2e_secrets : public AuthServerTest {
 protected:
  std::vector<std::string> ServerArgs() const override {
    auto args = AuthServerTest::ServerArgs();
    for (const char* arg : {"--log-level", "debug"}) args.push_back(arg);
    return args;
  }
  void SetUp() override {
    AuthServerTest::SetUp();
    for (const char* tenant : {"acme", "globex"}) {
      ASSERT_EQ(client().Post("/tenants", JsonText(json::object{{"id", tenant}, {"name", tenant}}), Bearer(kBootstrapKey)).status, 201);
    }
    acme_admin_ = Bearer(KeyFor("acme", "ann", {"admin"}));
    acme_dev_ = Bearer(KeyFor("acme", "dev", {"developer"}));
    globex_ = Bearer(KeyFor("globex", "gus", {"admin"}));
  }
  Response PutSecret(const std::string& name, const std::string& value, const Headers& as) {
    return client().Post("/secrets", JsonText(json::object{{"name", name}, {"value", value}}), as);
  }
  // Every file of the data dir (database, WAL, keys), as bytes.
  std::string DataDirBytes() {
    std::string all;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(server().data_dir())) {
      if (!entry.is_regular_file()) continue;
      std::ifstream in(entry.path(), std::ios::binary);
      std::stringstream bytes;
      bytes << in.rdbuf();
      all += bytes.str();
    }
    return all;
  }
  Headers acme_admin_, acme_dev_, globex_;
};

TEST_F(e2e_secrets, AnAdminStoresAndRotatesASecretWhoseValueNeverComesBack) {
  Response created = PutSecret("API_TOKEN", kValue, acme_admin_);
  ASSERT_EQ(created.status, 201) << created.Describe();
  EXPECT_EQ(StringAt(ObjectOf(created), "name"), "API_TOKEN");
  EXPECT_EQ(ObjectOf(created).at("version").as_int64(), 1);
  Response rotated = PutSecret("API_TOKEN", kRotated, acme_admin_);
  ASSERT_EQ(rotated.status, 200) << rotated.Describe();
  EXPECT_EQ(ObjectOf(rotated).at("version").as_int64(), 2);
  ASSERT_EQ(PutSecret("OTHER", "x", acme_admin_).status, 201);

  Response listed = client().Get("/secrets", acme_admin_);
  ASSERT_EQ(listed.status, 200) << listed.Describe();
  json::object listing = ObjectOf(listed);
  const json::array& items = listing.at("items").as_array();
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(StringAt(items[0].as_object(), "name"), "API_TOKEN");
  EXPECT_FALSE(items[0].as_object().contains("value"));

  // The value is nowhere a client or the disk can see it.
  std::string token =
      StringAt(ObjectOf(client().Post("/auth/token", JsonText(json::object{{"key", acme_admin_[0].second.substr(7)}}))), "token");
  SseClient stream(server().url() + "/events/stream?since=0&access_token=" + UrlEncode(token));
  stream.Start();
  ASSERT_TRUE(stream.WaitForOpen(10s)) << stream.Describe();
  CreateOk(json::object{{"title", "marker"}}, acme_admin_);  // the last event of acme's stream
  ASSERT_TRUE(stream.WaitForEvents(1, 10s)) << stream.Describe();
  std::string seen = listed.body + created.body + rotated.body + client().Get("/breadcrumbs?limit=1000&include_context=true", acme_admin_).body;
  for (const SseFrame& frame : stream.Events()) seen += frame.data.value_or("");
  server().Kill9();  // and kill -9 keeps them
  std::string disk = DataDirBytes();
  std::string log = server().LogTail(1 << 20);
  for (const std::string& value : {std::string(kValue), std::string(kRotated)}) {
    EXPECT_EQ(seen.find(value), std::string::npos) << "a route or stream";
    EXPECT_EQ(disk.find(value), std::string::npos) << "the data dir";
    EXPECT_EQ(log.find(value), std::string::npos) << "the log";
  }
  EXPECT_EQ(seen.find("auth.secret.v1"), std::string::npos) << seen;
  struct stat key_stat {};
  ASSERT_EQ(::stat((std::filesystem::path(server().data_dir()) / "master.key").c_str(), &key_stat), 0);
  EXPECT_EQ(key_stat.st_mode & 0777, 0600u);

  ASSERT_TRUE(server().Start()) << server().error();
  Reconnect();
  Response after = client().Get("/secrets", acme_admin_);
  ASSERT_EQ(after.status, 200);
  EXPECT_EQ(ObjectOf(after).at("items").as_array().size(), 2u);
  EXPECT_EQ(client().Delete("/secrets/OTHER", acme_admin_).status, 204);
  EXPECT_EQ(client().Delete("/secrets/OTHER", acme_admin_).status, 404);
  EXPECT_EQ(ObjectOf(client().Get("/secrets", acme_admin_)).at("items").as_array().size(), 1u);
}

// A process tool gets the secret in its environment; the value it echoes back is redacted from
// its response, and appears in no record, event, data-dir file or log line.
TEST_F(e2e_secrets, AProcessToolUsesASecretThatNeverAppearsInItsResponse) {
  ASSERT_EQ(PutSecret("API_TOKEN", kValue, acme_admin_).status, 201);
  std::string token =
      StringAt(ObjectOf(client().Post("/auth/token", JsonText(json::object{{"key", acme_admin_[0].second.substr(7)}}))), "token");
  SseClient stream(server().url() + "/events/stream?since=0&schema_name=tool.response.v1&access_token=" + UrlEncode(token));
  stream.Start();
  ASSERT_TRUE(stream.WaitForOpen(10s)) << stream.Describe();
  const char* script = "cat >/dev/null; echo \"debug $API_TOKEN\" >&2; printf '{\"token\":\"%s\",\"len\":%d}' \"$API_TOKEN\" ${#API_TOKEN} >&3";
  CreateOk(json::object{{"title", "tool leaky"}, {"schema_name", "tool.v1"},
                        {"context", {{"name", "leaky"}, {"runtime", "process"}, {"command", {"/bin/sh", "-c", script}},
                                     {"secret_env", {{"API_TOKEN", {{"secret", "API_TOKEN"}}}}}}}},
           acme_admin_);
  CreateOk(json::object{{"title", "call"}, {"schema_name", "tool.request.v1"}, {"context", {{"tool", "leaky"}, {"input", json::object{}}}}},
           acme_admin_);
  ASSERT_TRUE(stream.WaitForEvents(1, 30s)) << stream.Describe();
  std::string response = stream.Events()[0].data.value_or("");
  EXPECT_NE(response.find("\"status\":\"success\""), std::string::npos) << response;
  EXPECT_NE(response.find("[secret:API_TOKEN]"), std::string::npos) << response;
  // The tool did get the value: its length is the value's.
  EXPECT_NE(response.find("\"len\":" + std::to_string(std::string(kValue).size())), std::string::npos) << response;
  // A reference to a secret the tenant lacks fails the run, naming it.
  CreateOk(json::object{{"title", "tool missing"}, {"schema_name", "tool.v1"},
                        {"context", {{"name", "missing"}, {"runtime", "process"}, {"command", {"/bin/true"}},
                                     {"secret_env", {{"X", {{"secret", "NOPE"}}}}}}}},
           acme_admin_);
  CreateOk(json::object{{"title", "call"}, {"schema_name", "tool.request.v1"}, {"context", {{"tool", "missing"}, {"input", json::object{}}}}},
           acme_admin_);
  ASSERT_TRUE(stream.WaitForEvents(2, 30s)) << stream.Describe();
  std::string failed = stream.Events()[1].data.value_or("");
  EXPECT_NE(failed.find("NOPE"), std::string::npos) << failed;
  EXPECT_NE(failed.find("\"status\":\"error\""), std::string::npos) << failed;

  std::string seen = client().Get("/breadcrumbs?limit=1000&include_context=true", acme_admin_).body +
                     client().Get("/executions?limit=1000", acme_admin_).body;
  for (const SseFrame& frame : stream.Events()) seen += frame.data.value_or("");
  server().Kill9();
  EXPECT_EQ(seen.find(kValue), std::string::npos) << seen;
  EXPECT_EQ(DataDirBytes().find(kValue), std::string::npos) << "the data dir";
  EXPECT_EQ(server().LogTail(1 << 20).find(kValue), std::string::npos) << "the log";
  EXPECT_NE(server().LogTail(1 << 20).find("debug [secret:API_TOKEN]"), std::string::npos) << "the tool's stderr is logged, redacted";
}

TEST_F(e2e_secrets, SecretsArePerTenantAndForAdminsOnly) {
  ASSERT_EQ(PutSecret("API_TOKEN", kValue, acme_admin_).status, 201);
  EXPECT_TRUE(ObjectOf(client().Get("/secrets", globex_)).at("items").as_array().empty());
  EXPECT_EQ(client().Delete("/secrets/API_TOKEN", globex_).status, 404);
  // globex's secret of the same name is its own.
  EXPECT_EQ(PutSecret("API_TOKEN", kRotated, globex_).status, 201);
  EXPECT_TRUE(IsError(PutSecret("X", "v", acme_dev_), 403, "permission_denied"));
  EXPECT_TRUE(IsError(client().Get("/secrets", acme_dev_), 403, "permission_denied"));
  EXPECT_TRUE(IsError(client().Delete("/secrets/API_TOKEN", acme_dev_), 403, "permission_denied"));
  EXPECT_EQ(client().Get("/secrets").status, 401);
}

TEST_F(e2e_secrets, BadInputIsRefusedNamingTheFieldAndChangesNothing) {
  EXPECT_TRUE(IsError(PutSecret("a/b", "v", acme_admin_), 422, "validation_failed", "name"));
  EXPECT_TRUE(IsError(PutSecret("", "v", acme_admin_), 422, "validation_failed", "name"));
  EXPECT_TRUE(IsError(PutSecret("OK", "", acme_admin_), 422, "validation_failed", "value"));
  EXPECT_TRUE(IsError(PutSecret("OK", std::string(64 * 1024 + 1, 'v'), acme_admin_), 422, "validation_failed", "value"));
  EXPECT_TRUE(IsError(client().Post("/secrets", R"({"name":"OK"})", acme_admin_), 422, "validation_failed", "value"));
  EXPECT_TRUE(IsError(client().Post("/secrets", R"({"name":"OK","value":"v","x":1})", acme_admin_), 422,
                      "validation_failed", "x"));
  EXPECT_TRUE(IsError(client().Post("/secrets", R"({"name":"OK","value":7})", acme_admin_), 422, "validation_failed",
                      "value"));
  EXPECT_TRUE(ObjectOf(client().Get("/secrets", acme_admin_)).at("items").as_array().empty());
}

}  // namespace
}  // namespace cairn::e2e
