// MCP servers of every tenant, with secret header values (docs/mcp.md): each tenant's
// mcp.server.v1 records connect and materialise their tools in that tenant, and a header
// {"secret": NAME} is that tenant's secret, resolved at connect and found nowhere else. The MCP
// servers are server-everything over Streamable HTTP behind an API key (everything-http.mjs
// answers 401 to a request without it), so a wrong or missing header cannot pass unseen.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "auth_support.h"
#include "support/subprocess.h"
#include "tool_support.h"

namespace cairn::e2e {
namespace {

using namespace std::chrono_literals;
using test_support::Subprocess;

const std::string kNodeDir = CAIRN_E2E_MCP_NODE_DIR;
constexpr char kAcmeKey[] = "acme-mcp-key-7f3e2a91c4";
constexpr char kGlobexKey[] = "globex-mcp-key-0b8d5e66f1";

// server-everything on a loopback port, answering only requests whose X-Api-Key is `key`.
class KeyedMcpServer {
 public:
  KeyedMcpServer(const std::string& node, const std::string& key)
      : process_({node, kNodeDir + "/everything-http.mjs", "X-Api-Key", key}) {}
  bool Start() {
    if (!process_.Start() || !process_.WaitForLines(1, 30s)) return false;
    port_ = IntAt(json::parse(process_.OutLines().front()).as_object(), "port");
    return port_ > 0;
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/mcp"; }
  std::string Describe() const { return process_.err(); }

 private:
  Subprocess process_;
  int64_t port_ = 0;
};

class e2e_mcp_tenants : public AuthServerTest {
 protected:
  std::vector<std::string> ServerArgs() const override {
    auto args = AuthServerTest::ServerArgs();
    for (const char* arg : {"--allow-private-network", "127.0.0.0/8", "--log-level", "debug"}) args.push_back(arg);
    return args;
  }
  void SetUp() override {
    node_ = test_support::FindOnPath("node");
    ASSERT_FALSE(node_.empty()) << "`node` is not on PATH: run scripts/install-deps test";
    AuthServerTest::SetUp();
    for (const char* tenant : {"acme", "globex"}) {
      ASSERT_EQ(client().Post("/tenants", JsonText(json::object{{"id", tenant}, {"name", tenant}}), Bearer(kBootstrapKey)).status, 201);
    }
    acme_ = Bearer(KeyFor("acme", "ann", {"admin"}));
    globex_ = Bearer(KeyFor("globex", "gus", {"admin"}));
  }

  void PutSecret(const std::string& name, const std::string& value, const Headers& as) {
    Response r = client().Post("/secrets", JsonText(json::object{{"name", name}, {"value", value}}), as);
    ASSERT_LT(r.status, 300) << r.Describe();
  }
  // An mcp.server.v1 "remote" at `url` whose X-Api-Key is the tenant's secret `secret`; its id.
  std::string Register(const std::string& url, const std::string& secret, const Headers& as) {
    json::object context{{"name", "remote"}, {"transport", "http"}, {"url", url},
                         {"headers", json::object{{"X-Api-Key", json::object{{"secret", secret}}}}}};
    Response r = client().Post("/breadcrumbs", JsonText(json::object{{"schema_name", "mcp.server.v1"}, {"title", "remote"},
                                                                      {"context", context}}), as);
    EXPECT_EQ(r.status, 201) << r.Describe();
    return StringAt(ObjectOf(r), "id");
  }
  json::array Servers(const Headers& as) {
    json::object body = ObjectOf(client().Get("/mcp/servers", as));
    const json::value* servers = body.if_contains("servers");
    return servers && servers->is_array() ? servers->as_array() : json::array{};
  }
  json::object Remote(const Headers& as) {
    for (const json::value& s : Servers(as)) {
      if (s.is_object() && StringAt(s.as_object(), "name") == "remote") return s.as_object();
    }
    return {};
  }
  // Polls `done` (a condition with a deadline: server states have no event of their own).
  static bool Eventually(const std::function<bool()>& done, std::chrono::milliseconds timeout = kToolWait) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (done()) return true;
      std::this_thread::sleep_for(50ms);
    }
    return done();
  }
  bool ReadyIn(const Headers& as) {
    return Eventually([&] { return StringAt(Remote(as), "state") == "ready"; });
  }
  // Calls `tool` in the tenant of `as` with a tool.request.v1; its tool.response.v1 context.
  json::object Call(const std::string& tool, const json::value& input, const Headers& as) {
    const std::string request_id = "req-" + std::to_string(++calls_);
    Response r = client().Post("/breadcrumbs", JsonText(json::object{
        {"schema_name", "tool.request.v1"}, {"title", "call"},
        {"context", json::object{{"tool", tool}, {"input", input}, {"request_id", request_id}}}}), as);
    EXPECT_EQ(r.status, 201) << r.Describe();
    json::object answer;
    Eventually([&] {
      json::object page = ObjectOf(client().Get("/breadcrumbs?schema_name=tool.response.v1&include_context=true&tag=request:" +
                                                request_id, as));
      const json::value* items = page.if_contains("items");
      if (!items || !items->is_array() || items->as_array().empty()) return false;
      answer = ContextOf(items->as_array().front().as_object());
      return true;
    });
    return answer;
  }
  // The text of a tool.response.v1 context's output.
  static std::string TextOf(const json::object& answer) {
    const json::value* output = answer.if_contains("output");
    return output && output->is_object() ? StringAt(output->as_object(), "text") : "";
  }
  size_t ToolRecords(const std::string& name, const Headers& as) {
    json::object page = ObjectOf(client().Get("/breadcrumbs?path=tools/" + name, as));
    const json::value* items = page.if_contains("items");
    return items && items->is_array() ? items->as_array().size() : 0;
  }
  std::string ServerLog() {
    std::ifstream in(server().log_path());
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  std::string node_;
  Headers acme_, globex_;
  int calls_ = 0;
};

TEST_F(e2e_mcp_tenants, EachTenantConnectsItsOwnServersWithItsOwnSecrets) {
  KeyedMcpServer acme_server(node_, kAcmeKey), globex_server(node_, kGlobexKey);
  ASSERT_TRUE(acme_server.Start()) << acme_server.Describe();
  ASSERT_TRUE(globex_server.Start()) << globex_server.Describe();
  // One secret name, a value per tenant: each server only lets its own tenant's value in.
  PutSecret("mcp-key", kAcmeKey, acme_);
  PutSecret("mcp-key", kGlobexKey, globex_);
  const std::string acme_record = Register(acme_server.url(), "mcp-key", acme_);
  Register(globex_server.url(), "mcp-key", globex_);
  ASSERT_TRUE(ReadyIn(acme_)) << JsonText(Servers(acme_));
  ASSERT_TRUE(ReadyIn(globex_)) << JsonText(Servers(globex_));

  // Each tenant sees its own server and tools, and its calls go to its own server.
  EXPECT_EQ(Servers(acme_).size(), 1u) << JsonText(Servers(acme_));
  EXPECT_EQ(Servers(globex_).size(), 1u) << JsonText(Servers(globex_));
  ASSERT_TRUE(Eventually([&] { return ToolRecords("remote__echo", acme_) == 1 && ToolRecords("remote__echo", globex_) == 1; }));
  json::object answer = Call("remote__echo", json::object{{"message", "from acme"}}, acme_);
  EXPECT_EQ(StringAt(answer, "status"), "success") << JsonText(answer);
  EXPECT_EQ(TextOf(answer), "Echo: from acme") << JsonText(answer);
  answer = Call("remote__echo", json::object{{"message", "from globex"}}, globex_);
  EXPECT_EQ(StringAt(answer, "status"), "success") << JsonText(answer);
  // The default tenant has no such server.
  EXPECT_TRUE(Servers(Bearer(kBootstrapKey)).empty()) << JsonText(Servers(Bearer(kBootstrapKey)));

  // Deleting acme's record removes acme's tools only.
  ASSERT_EQ(client().Delete("/breadcrumbs/" + acme_record, acme_).status, 204);
  EXPECT_TRUE(Eventually([&] { return ToolRecords("remote__echo", acme_) == 0; }));
  EXPECT_EQ(ToolRecords("remote__echo", globex_), 1u);
  EXPECT_EQ(StringAt(Remote(globex_), "state"), "ready");

  // The secret values are in no record, no answer and no line of the server's log.
  for (const char* value : {kAcmeKey, kGlobexKey}) {
    EXPECT_EQ(ServerLog().find(value), std::string::npos) << value << " is in the server's log";
    EXPECT_EQ(JsonText(Servers(globex_)).find(value), std::string::npos);
    EXPECT_EQ(client().Get("/breadcrumbs?schema_name=mcp.server.v1&include_context=true", globex_).body.find(value),
              std::string::npos);
  }
}

TEST_F(e2e_mcp_tenants, AMissingOrWrongSecretFailsSayingWhyUntilItIsRight) {
  KeyedMcpServer keyed(node_, kAcmeKey);
  ASSERT_TRUE(keyed.Start()) << keyed.Describe();
  // globex's secret of that name holds the right key, but it is not acme's.
  PutSecret("mcp-key", kAcmeKey, globex_);
  const std::string record = Register(keyed.url(), "mcp-key", acme_);
  ASSERT_TRUE(Eventually([&] {
    json::object s = Remote(acme_);
    return StringAt(s, "state") == "failed" && StringAt(s, "error").find("secret 'mcp-key' not found") != std::string::npos;
  })) << JsonText(Servers(acme_));
  // A wrong value reaches the server, which refuses it. (Updating the record reconnects at once.)
  PutSecret("mcp-key", "not-the-key", acme_);
  ASSERT_EQ(client().Patch("/breadcrumbs/" + record, R"({"title":"remote v2"})", acme_).status, 200);
  ASSERT_TRUE(Eventually([&] {
    json::object s = Remote(acme_);
    return StringAt(s, "state") == "failed" && StringAt(s, "error").find("401") != std::string::npos;
  })) << JsonText(Servers(acme_));
  EXPECT_EQ(JsonText(Servers(acme_)).find("not-the-key"), std::string::npos);
  // Rotated to the right value: the next connection gets in.
  PutSecret("mcp-key", kAcmeKey, acme_);
  ASSERT_EQ(client().Patch("/breadcrumbs/" + record, R"({"title":"remote v3"})", acme_).status, 200);
  ASSERT_TRUE(ReadyIn(acme_)) << JsonText(Servers(acme_));
  ASSERT_TRUE(Eventually([&] { return ToolRecords("remote__echo", acme_) == 1; }));
  json::object answer = Call("remote__echo", json::object{{"message", "at last"}}, acme_);
  EXPECT_EQ(StringAt(answer, "status"), "success") << JsonText(answer);
  EXPECT_EQ(TextOf(answer), "Echo: at last") << JsonText(answer);
}

}  // namespace
}  // namespace cairn::e2e
