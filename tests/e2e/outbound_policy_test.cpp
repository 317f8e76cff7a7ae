// The outbound address policy end to end (docs/config.md, --allow-private-network): webhooks,
// http tools and http_request never reach loopback, private, link-local or other special-purpose
// addresses unless the setting lists them. A literal host is refused when the webhook or tool is
// written (400, nothing stored); a name, or a definition stored before the setting narrowed, is
// refused when connecting (the tool's error answer). Every receiver is on loopback, which is
// exactly what the policy refuses by default; nothing leaves the machine (refused addresses are
// never connected to).
#include "tool_support.h"

namespace cairn::e2e {
namespace {

constexpr const char* kFlag = "--allow-private-network";

std::string ErrorMessage(const Response& r) {
  json::object body = ObjectOf(r);
  const json::value* error = body.if_contains("error");
  return error && error->is_object() ? StringAt(error->as_object(), "message") : "";
}

json::object HttpTool(const std::string& name, const std::string& url) {
  return {{"name", name}, {"runtime", "http"}, {"url", url}, {"timeout_ms", 10000}};
}

json::object ToolRecord(const json::object& context) {
  return {{"title", "tool " + StringAt(context, "name")}, {"schema_name", "tool.v1"}, {"context", context}};
}

// The default: nothing special allowed. http_request may call any URL (--http-allow *), so what
// stops it is the address policy alone.
class e2e_outbound : public ToolTest {
 protected:
  std::vector<std::string> ServerArgs() const override { return {"--http-allow", "*"}; }

  // Literal hosts that are refused, each in a way a parser could get wrong.
  std::vector<std::string> RefusedUrls() const {
    const std::string port = std::to_string(receiver_.port());
    return {receiver_.base_url() + "/hook",           // the receiver itself
            "http://[::1]:" + port + "/hook",          // IPv6 loopback
            "http://[::ffff:127.0.0.1]:" + port + "/",  // IPv4-mapped loopback
            "http://0x7f000001:" + port + "/",          // 127.0.0.1 as one hex number
            "http://127.1:" + port + "/",               // ... in short form
            "http://localhost:" + port + "/hook",       // loopback by name (RFC 6761)
            "http://api.localhost/",
            "http://0.0.0.0:" + port + "/",  // Linux connects it to the local host
            "http://[::]:" + port + "/",
            "http://169.254.169.254/latest/meta-data/",  // cloud metadata
            "http://100.100.100.200/",                   // another cloud's, in the CGNAT range
            "http://10.0.0.1/",
            "http://172.16.0.1/",
            "http://192.168.0.1/",
            "http://[fd00:ec2::254]/",  // unique local
            "http://[fe80::1]/",
            "http://224.0.0.1/",
            "http://255.255.255.255/",
            "http://[64:ff9b::7f00:1]/",  // NAT64 of 127.0.0.1
            "http://[2002:a9fe:a9fe::]/"};  // 6to4 of 169.254.169.254
  }

  PathEchoServer receiver_;
};

TEST_F(e2e_outbound, WebhooksToRefusedHostsAreBadRequestsNamingTheSettingAndStoreNothing) {
  for (const std::string& url : RefusedUrls()) {
    Response r = client().Post("/webhooks", JsonText(json::object{{"url", url}}));
    EXPECT_TRUE(IsError(r, 400, "bad_request")) << url;
    EXPECT_EQ(ErrorMessage(r).rfind("url: destination ", 0), 0u) << url << ": " << ErrorMessage(r);
    EXPECT_NE(ErrorMessage(r).find(kFlag), std::string::npos) << url << ": " << ErrorMessage(r);
  }
  EXPECT_EQ(ErrorMessage(client().Post("/webhooks", JsonText(json::object{{"url", receiver_.base_url() + "/hook"}}))),
            "url: destination 127.0.0.1 is a loopback address (127.0.0.0/8); allow it with --allow-private-network");
  Response none = client().Get("/webhooks");
  ASSERT_EQ(none.status, 200);
  EXPECT_TRUE(ObjectOf(none)["items"].as_array().empty()) << none.body;

  // A name is judged when delivering; changing the URL to a refused host is refused like creating.
  Response created = client().Post("/webhooks", R"({"url":"https://hooks.example.com/x","active":false})");
  ASSERT_EQ(created.status, 201) << created.Describe();
  std::string id = StringAt(ObjectOf(created), "id");
  Response before = client().Get("/webhooks");
  Response patched = client().Patch("/webhooks/" + id, JsonText(json::object{{"url", receiver_.base_url() + "/"}}));
  EXPECT_TRUE(IsError(patched, 400, "bad_request")) << patched.Describe();
  EXPECT_NE(ErrorMessage(patched).find(kFlag), std::string::npos) << ErrorMessage(patched);
  EXPECT_EQ(client().Get("/webhooks").body, before.body);
  EXPECT_TRUE(receiver_.requests().empty());
}

TEST_F(e2e_outbound, HttpToolsToRefusedHostsAreBadRequestsNamingTheSettingAndStoreNothing) {
  std::vector<std::string> before = StoreSnapshot();
  for (const std::string& url : RefusedUrls()) {
    Response r = client().Post("/breadcrumbs", JsonText(ToolRecord(HttpTool("remote", url))));
    EXPECT_TRUE(IsError(r, 400, "bad_request")) << url;
    EXPECT_EQ(ErrorMessage(r).rfind("context.url: destination ", 0), 0u) << url << ": " << ErrorMessage(r);
    EXPECT_NE(ErrorMessage(r).find(kFlag), std::string::npos) << url << ": " << ErrorMessage(r);
  }
  EXPECT_EQ(StoreSnapshot(), before);

  // A tool whose URL is a name is stored; changing it to a refused host is refused.
  json::object defined = tools().DefineTool(HttpTool("remote", "https://tools.example.com/run"));
  std::vector<std::string> with_tool = StoreSnapshot();
  Response patched = client().Patch("/breadcrumbs/" + StringAt(defined, "id"),
                                    JsonText(json::object{{"context", HttpTool("remote", receiver_.base_url() + "/")}}));
  EXPECT_TRUE(IsError(patched, 400, "bad_request")) << patched.Describe();
  EXPECT_EQ(ErrorMessage(patched),
            "context.url: destination 127.0.0.1 is a loopback address (127.0.0.0/8); allow it with "
            "--allow-private-network");
  EXPECT_EQ(StoreSnapshot(), with_tool);
}

// http_request takes its URL at call time: the address is judged when it connects, names
// resolved (localhost here: no DNS needed) and literals alike.
TEST_F(e2e_outbound, HttpRequestIsRefusedWhenItConnectsWithTheSettingInTheAnswer) {
  const std::string port = std::to_string(receiver_.port());
  json::object r = tools().AwaitResponse(tools().Request("http_request", json::object{{"url", receiver_.base_url() + "/x"}}));
  EXPECT_EQ(StatusOf(r), "error") << JsonText(r);
  EXPECT_EQ(ErrorCodeOf(r), "bad_request") << JsonText(r);
  EXPECT_EQ(ErrorMessageOf(r),
            "destination 127.0.0.1 is a loopback address (127.0.0.0/8); allow it with --allow-private-network");

  const std::vector<std::pair<std::string, std::string>> cases = {
      {"http://localhost:" + port + "/by-name", "is a loopback address"},
      {"http://[::ffff:127.0.0.1]:" + port + "/", "destination ::ffff:127.0.0.1 is a loopback address"},
      {"http://0.0.0.0:" + port + "/", "destination 0.0.0.0 is an unspecified"},
      {"http://169.254.169.254/latest/meta-data/", "destination 169.254.169.254 is a link-local (cloud metadata) address"},
  };
  for (const auto& [url, reason] : cases) {
    json::object refused = tools().AwaitResponse(tools().Request("http_request", json::object{{"url", url}}));
    EXPECT_EQ(ErrorCodeOf(refused), "bad_request") << url << ": " << JsonText(refused);
    EXPECT_NE(ErrorMessageOf(refused).find(reason), std::string::npos) << url << ": " << ErrorMessageOf(refused);
    EXPECT_NE(ErrorMessageOf(refused).find(kFlag), std::string::npos) << ErrorMessageOf(refused);
  }
  // The answers are written after the tool ran, so a contact would be recorded by now.
  EXPECT_TRUE(receiver_.requests().empty());
}

// Loopback allowed: the receiver is reached by all three; the other ranges stay refused.
class e2e_outbound_loopback : public e2e_outbound {
 protected:
  std::vector<std::string> ServerArgs() const override { return {"--http-allow", "*", kFlag, "127.0.0.0/8"}; }
};

TEST_F(e2e_outbound_loopback, AllowedRangesAreReachedAndOthersStayRefused) {
  tools().DefineTool(HttpTool("local", receiver_.base_url() + "/tool"));
  json::object called = tools().AwaitResponse(tools().Request("local", json::object{{"a", 1}}));
  ASSERT_EQ(StatusOf(called), "success") << JsonText(called);
  EXPECT_EQ(OutputOf(called), json::value(json::object{{"seen_path", "/tool"}, {"seen_method", "POST"}}));
  // The endpoint got {"input", "context"} like a process tool's stdin.
  ASSERT_FALSE(receiver_.requests().empty());
  json::value sent = json::parse(receiver_.requests().front().body);
  EXPECT_EQ(sent.at("input"), json::value(json::object{{"a", 1}}));
  EXPECT_EQ(sent.at("context").at("trigger").at("schema_name"), "tool.request.v1");
  json::object fetched =
      tools().AwaitResponse(tools().Request("http_request", json::object{{"url", receiver_.base_url() + "/get"}}));
  ASSERT_EQ(StatusOf(fetched), "success") << JsonText(fetched);
  EXPECT_EQ(receiver_.requests().size(), 2u);
  Response hook =
      client().Post("/webhooks", JsonText(json::object{{"url", receiver_.base_url() + "/hook"}, {"active", false}}));
  EXPECT_EQ(hook.status, 201) << hook.Describe();

  // ::1 is loopback too, but not in 127.0.0.0/8; metadata and private ranges are not loopback.
  json::object v6 = tools().AwaitResponse(
      tools().Request("http_request", json::object{{"url", "http://[::1]:" + std::to_string(receiver_.port()) + "/"}}));
  EXPECT_EQ(ErrorMessageOf(v6), "destination ::1 is a loopback address (::1/128); allow it with --allow-private-network");
  for (const char* url : {"http://169.254.169.254/", "http://10.0.0.1/", "http://[fd00::1]/"}) {
    Response r = client().Post("/webhooks", JsonText(json::object{{"url", url}}));
    EXPECT_TRUE(IsError(r, 400, "bad_request")) << url;
  }
}

// The operator narrows the setting after a tool was defined: the stored definition is refused
// when it connects, with the setting in the tool's error answer, and the receiver hears nothing.
TEST_F(e2e_outbound_loopback, AToolStoredBeforeTheSettingNarrowedIsRefusedWhenItCalls) {
  tools().DefineTool(HttpTool("local", receiver_.base_url() + "/tool"));
  ASSERT_EQ(StatusOf(tools().AwaitResponse(tools().Request("local", json::object{}))), "success");
  ASSERT_EQ(server().Stop(), 0);

  ServerProcess narrowed({"--data-dir", server().data_dir(), "--builtin-tools=true"});  // the last --data-dir wins
  ASSERT_TRUE(narrowed.Start()) << narrowed.error();
  ToolClient narrowed_tools(narrowed);
  json::object refused = narrowed_tools.AwaitResponse(narrowed_tools.Request("local", json::object{}));
  EXPECT_EQ(StatusOf(refused), "error") << JsonText(refused) << narrowed.LogTail();
  EXPECT_EQ(ErrorCodeOf(refused), "bad_request") << JsonText(refused);
  EXPECT_EQ(ErrorMessageOf(refused),
            "destination 127.0.0.1 is a loopback address (127.0.0.0/8); allow it with --allow-private-network");
  EXPECT_EQ(receiver_.requests().size(), 1u);
  EXPECT_EQ(narrowed.Stop(), 0);
}

TEST(e2e_outbound_setting, ABadRangeStopsTheServerWithTheSettingNamed) {
  ServerProcess bad({kFlag, "127.0.0.1/8"});
  EXPECT_FALSE(bad.Start());
  EXPECT_NE(bad.LogTail().find("--allow-private-network: '127.0.0.1/8' has bits set past the prefix: did you mean "
                               "127.0.0.0/8?"),
            std::string::npos)
      << bad.LogTail();
}

}  // namespace
}  // namespace cairn::e2e
