// Secrets (docs/secrets.md): POST/GET/DELETE /secrets per tenant, admins only; values are sealed
// at rest with the master key and never come back — not from the secrets routes, the record
// routes, the event stream, the database file or the server's log.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "auth_support.h"
#include "base/secret_redactor.h"
#include "e2e_support.h"
#include "llm_servers.h"
#include "sse_client.h"
#include "support/loopback_http_server.h"

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

// ---- secrets in use: webhooks, http tools, process tools, an agent's LLM key -------------------------

// The same server with loopback destinations allowed (webhook receiver, http tool server) and the
// scripted LLM as its provider.
class e2e_secret_use : public e2e_secrets {
 protected:
  std::vector<std::string> ServerArgs() const override {
    auto args = e2e_secrets::ServerArgs();
    for (const std::string& arg : {std::string("--allow-private-network"), std::string("127.0.0.0/8"),
                                   std::string("--llm-base-url"), llm_->base_url(), std::string("--llm-model"),
                                   std::string("fixture-model"), std::string("--llm-backoff-base-ms"), std::string("1"),
                                   std::string("--webhook-max-attempts"), std::string("1")}) {
      args.push_back(arg);
    }
    return args;
  }
  void SetUp() override {
    llm_ = std::make_unique<FixtureLlm>(json::object{{"rules", json::array{}}});
    ASSERT_TRUE(llm_->Start()) << llm_->error();
    e2e_secrets::SetUp();
    token_ = StringAt(ObjectOf(client().Post("/auth/token", JsonText(json::object{{"key", acme_admin_[0].second.substr(7)}}))),
                      "token");
  }
  // Every event of acme's stream from the start, followed until `done` holds for one frame's data.
  std::unique_ptr<SseClient> Stream() {
    auto stream = std::make_unique<SseClient>(server().url() + "/events/stream?since=0&access_token=" + UrlEncode(token_));
    stream->Start();
    EXPECT_TRUE(stream->WaitForOpen(10s)) << stream->Describe();
    return stream;
  }
  // The data of the first frame whose JSON has schema_name `schema` and mentions `text`.
  static std::string AwaitFrame(SseClient& stream, const std::string& schema, const std::string& text) {
    std::string found;
    stream.WaitFor(
        [&](const std::vector<SseFrame>& frames) {
          for (const SseFrame& f : frames) {
            std::string data = f.data.value_or("");
            if (data.find("\"schema_name\":\"" + schema + "\"") != std::string::npos && data.find(text) != std::string::npos) {
              found = data;
              return true;
            }
          }
          return false;
        },
        30s);
    return found;
  }
  json::object Define(const json::object& context, const std::string& schema = "tool.v1") {
    return CreateOk(json::object{{"title", "definition"}, {"schema_name", schema}, {"context", context}}, acme_admin_);
  }
  void Call(const std::string& tool) {
    CreateOk(json::object{{"title", "call " + tool}, {"schema_name", "tool.request.v1"},
                          {"context", {{"tool", tool}, {"input", json::object{}}}}},
             acme_admin_);
  }
  Response CreateHook(const json::object& body) { return client().Post("/webhooks", JsonText(body), acme_dev_); }

  std::unique_ptr<FixtureLlm> llm_;
  std::string token_;
  // The webhook receiver and the http tool's server: the tool's server answers with the header it
  // got, as it is and base64-encoded (so the response would carry the value if cairn let it).
  test_support::LoopbackHttpServer receiver_{test_support::Answering(
      [](const test_support::ReceivedRequest&) { return test_support::HttpResponse(204, "No Content", {}, ""); })};
  test_support::LoopbackHttpServer tool_server_{test_support::Answering([](const test_support::ReceivedRequest& req) {
    std::string seen = req.Header("x-token").value_or("");
    return test_support::HttpResponse(200, "OK", {"Content-Type: application/json"},
                                      JsonText(json::object{{"seen", seen}, {"seen_b64", Base64Encode(seen)}}));
  })};
};

// The done-when of issue 14: one secret signs and authorises webhook deliveries, authorises an
// http tool and the agent's LLM calls and is a process tool's variable; every receiver gets the
// real value, and the value (raw or base64) is in no record, event, snapshot, execution, webhook
// view, data-dir file or log line, across a kill -9.
TEST_F(e2e_secret_use, ASecretUsedEverywhereReachesItsReceiversAndNothingElse) {
  ASSERT_EQ(PutSecret("API_TOKEN", kValue, acme_admin_).status, 201);
  auto stream = Stream();

  // A webhook signed with the secret and carrying it in a header.
  Response hook = CreateHook(json::object{{"url", receiver_.Url("/hook")},
                                          {"selector", {{"any_tags", {"hook"}}}},
                                          {"secret", {{"secret", "API_TOKEN"}}},
                                          {"headers", {{"Authorization", {{"secret", "API_TOKEN"}, {"prefix", "Bearer "}}}}}});
  ASSERT_EQ(hook.status, 201) << hook.Describe();
  EXPECT_EQ(ObjectOf(hook).at("has_secret"), json::value(true));
  EXPECT_EQ(JsonText(ObjectOf(hook).at("secret")), R"({"secret":"API_TOKEN"})");
  CreateOk(json::object{{"title", "ping"}, {"tags", {"hook"}}}, acme_admin_);
  ASSERT_TRUE(receiver_.WaitForRequests(1, 30s));
  test_support::ReceivedRequest delivered = receiver_.requests()[0];
  EXPECT_EQ(delivered.Header("authorization").value_or(""), std::string("Bearer ") + kValue);
  EXPECT_EQ(delivered.Header("x-cairn-signature").value_or(""), "sha256=" + HmacSha256Hex(kValue, delivered.body));

  // A process tool that echoes the value, and an http tool whose server echoes the header.
  const char* script = "cat >/dev/null; echo \"debug $API_TOKEN\" >&2; printf '{\"token\":\"%s\"}' \"$API_TOKEN\" >&3";
  Define(json::object{{"name", "leaky"}, {"runtime", "process"}, {"command", {"/bin/sh", "-c", script}},
                      {"secret_env", {{"API_TOKEN", {{"secret", "API_TOKEN"}}}}}});
  Define(json::object{{"name", "peek"}, {"runtime", "http"}, {"url", tool_server_.Url("/run")},
                      {"headers", {{"X-Token", {{"secret", "API_TOKEN"}}}}}});
  Call("peek");
  std::string peeked = AwaitFrame(*stream, "tool.response.v1", "\"tool\":\"peek\"");
  ASSERT_FALSE(peeked.empty()) << stream->Describe();
  EXPECT_NE(peeked.find("\"seen\":\"[secret:API_TOKEN]\""), std::string::npos) << peeked;
  EXPECT_NE(peeked.find("\"seen_b64\":\"[secret:API_TOKEN]\""), std::string::npos) << peeked;
  ASSERT_TRUE(tool_server_.WaitForRequests(1, 30s));
  EXPECT_EQ(tool_server_.requests()[0].Header("x-token").value_or(""), kValue);

  // An agent whose provider key is the secret, calling the process tool: its snapshots hold the
  // tool's (redacted) answer.
  json::array tool_calls{json::object{{"name", "leaky"}, {"arguments", json::object{}}}};
  json::array rules{json::object{{"match", json::object{{"last_role", "user"}}}, {"reply", json::object{{"tool_calls", tool_calls}}}},
                    json::object{{"match", json::object{{"last_role", "tool"}}},
                                 {"reply", json::object{{"content", "the tool said {{last_tool_content}}"}}}}};
  ASSERT_TRUE(llm_->SetScript(json::object{{"rules", rules}})) << llm_->error();
  Define(json::object{{"agent_id", "helper"}, {"tools", {"leaky"}}, {"api_key", {{"secret", "API_TOKEN"}}}}, "agent.def.v1");
  CreateOk(json::object{{"title", "ask"}, {"schema_name", "user.message.v1"}, {"tags", {"session:s1"}},
                        {"context", {{"content", "use the tool"}, {"agent_id", "helper"}}}},
           acme_admin_);
  std::string answer = AwaitFrame(*stream, "agent.response.v1", "the tool said");
  ASSERT_FALSE(answer.empty()) << stream->Describe();
  EXPECT_NE(answer.find("[secret:API_TOKEN]"), std::string::npos) << answer;
  json::array calls = llm_->RequestRecords();
  ASSERT_EQ(calls.size(), 2u);
  for (const auto& call : calls) {
    EXPECT_EQ(StringAt(call.as_object(), "authorization"), std::string("Bearer ") + kValue) << JsonText(call);
  }

  std::string seen = client().Get("/breadcrumbs?limit=1000&include_context=true", acme_admin_).body +
                     client().Get("/executions?limit=1000", acme_admin_).body + client().Get("/webhooks", acme_dev_).body +
                     client().Get("/dlq", acme_dev_).body;
  for (const auto& body : llm_->Requests()) seen += JsonText(body);  // what the model was shown
  EXPECT_NE(seen.find("agent.snapshot.v1"), std::string::npos) << "snapshots are among the records looked at";
  for (const SseFrame& frame : stream->Events()) seen += frame.data.value_or("");
  server().Kill9();
  std::string disk = DataDirBytes();
  std::string log = server().LogTail(1 << 20);
  for (const std::string& form : {std::string(kValue), Base64Encode(kValue)}) {
    EXPECT_EQ(seen.find(form), std::string::npos) << "a route, stream or LLM request body: " << form;
    EXPECT_EQ(disk.find(form), std::string::npos) << "the data dir: " << form;
    EXPECT_EQ(log.find(form), std::string::npos) << "the log: " << form;
  }
  EXPECT_NE(log.find("debug [secret:API_TOKEN]"), std::string::npos) << "the tool's stderr is logged, redacted";

  // After the restart the references still resolve; after a rotation they resolve to the new value.
  ASSERT_TRUE(server().Start()) << server().error();
  Reconnect();
  ASSERT_EQ(PutSecret("API_TOKEN", kRotated, acme_admin_).status, 200);
  CreateOk(json::object{{"title", "ping again"}, {"tags", {"hook"}}}, acme_admin_);
  ASSERT_TRUE(receiver_.WaitForRequests(2, 30s));
  test_support::ReceivedRequest rotated = receiver_.requests().back();
  EXPECT_EQ(rotated.Header("authorization").value_or(""), std::string("Bearer ") + kRotated);
  EXPECT_EQ(rotated.Header("x-cairn-signature").value_or(""), "sha256=" + HmacSha256Hex(kRotated, rotated.body));
}

// A reference to a secret the tenant lacks fails where it is used, with secret_not_found: a
// webhook's delivery is dead-lettered (and delivered by a retry once the secret exists), an http
// tool answers an error, an agent's run fails. The reference is never sent as a value.
TEST_F(e2e_secret_use, AMissingSecretFailsAtUseWithSecretNotFound) {
  auto stream = Stream();
  Response hook = CreateHook(json::object{{"url", receiver_.Url("/hook")}, {"selector", {{"any_tags", {"hook"}}}},
                                          {"secret", {{"secret", "LATER"}}}});
  ASSERT_EQ(hook.status, 201) << hook.Describe();
  CreateOk(json::object{{"title", "ping"}, {"tags", {"hook"}}}, acme_admin_);
  // A dead letter makes no event: poll its route until it is there, with a deadline.
  json::array letters;
  for (auto deadline = std::chrono::steady_clock::now() + 30s; letters.empty() && std::chrono::steady_clock::now() < deadline;) {
    letters = ObjectOf(client().Get("/dlq", acme_dev_)).at("items").as_array();
    if (letters.empty()) std::this_thread::sleep_for(20ms);
  }
  ASSERT_EQ(letters.size(), 1u);
  EXPECT_EQ(StringAt(letters[0].as_object(), "last_error").rfind("secret_not_found: ", 0), 0u) << JsonText(letters[0]);
  EXPECT_EQ(receiver_.requests().size(), 0u) << "nothing is sent without the secret";
  ASSERT_EQ(PutSecret("LATER", kValue, acme_admin_).status, 201);
  Response retried = client().Post("/dlq/" + StringAt(letters[0].as_object(), "id") + "/retry", "", acme_dev_);
  ASSERT_EQ(retried.status, 200) << retried.Describe();
  EXPECT_EQ(ObjectOf(retried).at("delivered"), json::value(true)) << retried.Describe();
  ASSERT_TRUE(receiver_.WaitForRequests(1, 30s));
  EXPECT_EQ(receiver_.requests()[0].Header("x-cairn-signature").value_or(""),
            "sha256=" + HmacSha256Hex(kValue, receiver_.requests()[0].body));

  Define(json::object{{"name", "peek"}, {"runtime", "http"}, {"url", tool_server_.Url("/run")},
                      {"headers", {{"X-Token", {{"secret", "NOPE"}}}}}});
  Call("peek");
  std::string failed = AwaitFrame(*stream, "tool.response.v1", "\"tool\":\"peek\"");
  EXPECT_NE(failed.find("\"code\":\"secret_not_found\""), std::string::npos) << failed;
  EXPECT_NE(failed.find("NOPE"), std::string::npos) << failed;
  EXPECT_EQ(tool_server_.requests().size(), 0u);

  Define(json::object{{"agent_id", "keyless"}, {"api_key", {{"secret", "NOPE"}}}}, "agent.def.v1");
  CreateOk(json::object{{"title", "ask"}, {"schema_name", "user.message.v1"},
                        {"context", {{"content", "hello"}, {"agent_id", "keyless"}}}},
           acme_admin_);
  std::string refused = AwaitFrame(*stream, "agent.response.v1", "secret_not_found");
  ASSERT_FALSE(refused.empty()) << stream->Describe();
  EXPECT_TRUE(llm_->Requests().empty()) << "no model call without the key";
}

// References of the wrong shape are refused where they are written (422 naming the field), and
// nothing is stored.
TEST_F(e2e_secret_use, BadReferencesAreRefusedNamingTheField) {
  auto tool = [&](const json::object& context) {
    return client().Post("/breadcrumbs", JsonText(json::object{{"title", "t"}, {"schema_name", "tool.v1"}, {"context", context}}),
                         acme_admin_);
  };
  EXPECT_TRUE(IsError(tool(json::object{{"name", "h"}, {"runtime", "http"}, {"url", "http://127.0.0.1:1/"},
                                        {"headers", {{"X-Token", {{"secret", "bad name"}}}}}}),
                      422, "validation_failed", "context.headers.X-Token.secret"));
  EXPECT_TRUE(IsError(tool(json::object{{"name", "h"}, {"runtime", "http"}, {"url", "http://127.0.0.1:1/"},
                                        {"headers", {{"X-Token", {{"secrets", "T"}}}}}}),
                      422, "validation_failed", "context.headers.X-Token.secrets"));
  EXPECT_TRUE(IsError(tool(json::object{{"name", "h"}, {"runtime", "http"}, {"url", "http://127.0.0.1:1/"},
                                        {"headers", {{"Content-Type", "text/plain"}}}}),
                      422, "validation_failed", "context.headers.Content-Type"));
  EXPECT_TRUE(IsError(client().Post("/breadcrumbs",
                                    JsonText(json::object{{"title", "a"}, {"schema_name", "agent.def.v1"},
                                                          {"context", {{"agent_id", "a"}, {"api_key", "sk-in-plain-text"}}}}),
                                    acme_admin_),
                      422, "validation_failed", "context.api_key"));
  EXPECT_TRUE(IsError(CreateHook(json::object{{"url", receiver_.Url()}, {"secret", {{"secret", ""}}}}), 422,
                      "validation_failed", "secret.secret"));
  EXPECT_TRUE(IsError(CreateHook(json::object{{"url", receiver_.Url()}, {"secret", {{"name", "X"}}}}), 422,
                      "validation_failed", "secret.name"));
  EXPECT_TRUE(IsError(CreateHook(json::object{{"url", receiver_.Url()}, {"headers", {{"X-Cairn-Signature", "forged"}}}}), 422,
                      "validation_failed", "headers.X-Cairn-Signature"));
  EXPECT_TRUE(IsError(CreateHook(json::object{{"url", receiver_.Url()}, {"headers", {{"X-A", 5}}}}), 422,
                      "validation_failed", "headers.X-A"));
  EXPECT_TRUE(ObjectOf(client().Get("/webhooks", acme_dev_)).at("items").as_array().empty());
  EXPECT_TRUE(ObjectOf(client().Get("/breadcrumbs?schema_name=tool.v1", acme_admin_)).at("items").as_array().empty());
}

}  // namespace
}  // namespace cairn::e2e
