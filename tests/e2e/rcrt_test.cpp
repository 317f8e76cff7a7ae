// The reference (RCRT) API under /rcrt end to end (docs/rcrt.md), driven with the curl command line
// as the reference's users drive it: health, tenants, agents (principals) and their webhooks and
// secret, tokens, selectors, breadcrumbs (create, list, read views, history, PATCH with If-Match,
// search, delete), the event stream with its ping, a webhook's X-RCRT-Signature checked by the
// receiver, bad input (a clear error, nothing changed), and --auth=on with a token from
// /rcrt/auth/token.
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

#include "auth_support.h"
#include "e2e_support.h"
#include "sse_client.h"
#include "support/loopback_http_server.h"
#include "support/subprocess.h"

namespace cairn::e2e {
namespace {

using namespace std::chrono_literals;
constexpr auto kWait = std::chrono::milliseconds(30000);

struct CurlResult {
  long status = 0;
  std::string body;
  json::value Json() const {
    boost::system::error_code ec;
    json::value v = json::parse(body, ec);
    return ec ? json::value() : v;
  }
  std::string Describe() const { return "HTTP " + std::to_string(status) + " " + body; }
};

// `curl -s -X method [-H header]... [-d body] base+path`, the status read from -w.
CurlResult Curl(const std::string& base, const std::string& method, const std::string& path,
                const std::optional<std::string>& body = std::nullopt, const Headers& headers = {}) {
  std::vector<std::string> argv{test_support::FindOnPath("curl"), "-s", "-S", "-X", method, "-w", "\n%{http_code}"};
  if (body) {
    argv.insert(argv.end(), {"-H", "Content-Type: application/json", "--data-binary", *body});
  }
  for (const auto& [name, value] : headers) argv.insert(argv.end(), {"-H", name + ": " + value});
  argv.push_back(base + path);
  test_support::ProcessOptions options;
  options.set_env = {"no_proxy=*"};
  options.timeout = kWait;
  test_support::ProcessResult run = test_support::RunProcess(argv, options);
  CurlResult result;
  size_t cut = run.out.rfind('\n');
  if (run.exit_code != 0 || cut == std::string::npos) {
    ADD_FAILURE() << "curl failed (" << run.exit_code << "): " << run.err;
    return result;
  }
  result.body = run.out.substr(0, cut);
  result.status = std::stol(run.out.substr(cut + 1));
  return result;
}

// A cairn error (docs/api.md) with `status` and, when `field` is not empty, error.field `field`.
::testing::AssertionResult IsRcrtError(const CurlResult& r, long status, const std::string& field) {
  json::value v = r.Json();
  if (r.status == status && v.is_object() && v.as_object().contains("error") &&
      (field.empty() || StringAt(v.as_object().at("error").as_object(), "field") == field)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "wanted " << status << " " << field << ", got " << r.Describe();
}

class e2e_rcrt : public ServerTest {
 protected:
  std::vector<std::string> ServerArgs() const override {
    // The server's own ping is far away: a ping on /rcrt/events/stream is the route's 5 s one.
    return {"--sse-heartbeat-ms", "600000", "--allow-private-network", "127.0.0.0/8"};
  }
  void SetUp() override {
    ServerTest::SetUp();
    ASSERT_FALSE(test_support::FindOnPath("curl").empty()) << "`curl` is not on PATH (Debian: apt-get install curl)";
  }
  CurlResult Call(const std::string& method, const std::string& path, const std::optional<std::string>& body = std::nullopt,
                  const Headers& headers = {}) {
    return Curl(server().url(), method, path, body, headers);
  }
};

TEST_F(e2e_rcrt, HealthAnswersOk) {
  CurlResult r = Call("GET", "/rcrt/health");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "ok");
}

TEST_F(e2e_rcrt, BreadcrumbsCreateReadListPatchHistorySearchDelete) {
  CurlResult created = Call("POST", "/rcrt/breadcrumbs",
                            R"({"title":"Travel Dates","context":{"start":"2025-10-20","timezone":"Europe/London"},)"
                            R"("tags":["travel","dates"],"schema_name":"travel.dates.v1","visibility":"team","sensitivity":"low"})",
                            {{"Idempotency-Key", "ikey-1"}});
  ASSERT_EQ(created.status, 201) << created.Describe();
  json::object id_only = created.Json().as_object();
  ASSERT_EQ(id_only.size(), 1u) << created.body;  // {"id"} and nothing else
  const std::string id = StringAt(id_only, "id");

  CurlResult view = Call("GET", "/rcrt/breadcrumbs/" + id);
  ASSERT_EQ(view.status, 200) << view.Describe();
  EXPECT_EQ(view.Json().at("context").at("timezone"), "Europe/London");
  CurlResult full = Call("GET", "/rcrt/breadcrumbs/" + id + "/full");
  ASSERT_EQ(full.status, 200) << full.Describe();
  EXPECT_EQ(full.Json().at("version"), 1);
  EXPECT_EQ(full.Json().at("schema_name"), "travel.dates.v1");

  Call("POST", "/rcrt/breadcrumbs", R"({"title":"Other","tags":["misc"]})");
  CurlResult list = Call("GET", "/rcrt/breadcrumbs?tag=travel");
  ASSERT_EQ(list.status, 200) << list.Describe();
  ASSERT_TRUE(list.Json().is_array()) << list.body;  // a bare array
  ASSERT_EQ(list.Json().as_array().size(), 1u) << list.body;
  EXPECT_EQ(list.Json().as_array()[0].at("id"), json::value(id));

  // PATCH with the version read: 200, version 2; the stale version again: 412, nothing changed.
  CurlResult patched = Call("PATCH", "/rcrt/breadcrumbs/" + id, R"({"context":{"end":"2025-10-29"}})", {{"If-Match", "\"1\""}});
  ASSERT_EQ(patched.status, 200) << patched.Describe();
  EXPECT_EQ(patched.Json().at("version"), 2);
  CurlResult stale = Call("PATCH", "/rcrt/breadcrumbs/" + id, R"({"title":"lost"})", {{"If-Match", "\"1\""}});
  EXPECT_TRUE(IsRcrtError(stale, 412, "")) << stale.Describe();
  EXPECT_EQ(FullOk(id).at("title"), "Travel Dates");

  CurlResult history = Call("GET", "/rcrt/breadcrumbs/" + id + "/history");
  ASSERT_EQ(history.status, 200) << history.Describe();
  ASSERT_TRUE(history.Json().is_array()) << history.body;
  ASSERT_EQ(history.Json().as_array().size(), 2u) << history.body;
  EXPECT_EQ(history.Json().as_array()[0].at("version"), 1);
  EXPECT_EQ(history.Json().as_array()[1].at("context").at("end"), "2025-10-29");

  // The reference's `nn` is the number of results.
  CurlResult found = Call("GET", "/rcrt/breadcrumbs/search?q=Travel&nn=5&mode=text");
  ASSERT_EQ(found.status, 200) << found.Describe();
  ASSERT_TRUE(found.Json().is_array()) << found.body;
  ASSERT_EQ(found.Json().as_array().size(), 1u) << found.body;
  EXPECT_EQ(found.Json().as_array()[0].at("id"), json::value(id));

  CurlResult deleted = Call("DELETE", "/rcrt/breadcrumbs/" + id);
  EXPECT_EQ(deleted.status, 204) << deleted.Describe();
  EXPECT_EQ(Call("GET", "/rcrt/breadcrumbs/" + id).status, 404);
}

TEST_F(e2e_rcrt, TenantsAgentsAndSelectors) {
  CurlResult tenant = Call("POST", "/rcrt/tenants/acme", R"({"name":"Acme"})");
  ASSERT_EQ(tenant.status, 201) << tenant.Describe();
  EXPECT_EQ(tenant.Json().at("name"), "Acme");

  // The reference's roles map onto cairn's; the agent is a principal with a key shown once.
  CurlResult agent = Call("POST", "/rcrt/agents/planner-1", R"({"roles":["curator","emitter","subscriber"]})");
  ASSERT_EQ(agent.status, 201) << agent.Describe();
  json::object issued = agent.Json().as_object();
  EXPECT_EQ(issued["agent_id"], "planner-1");
  EXPECT_EQ(issued["roles"], (json::array{"admin", "user", "reader"}));
  EXPECT_EQ(StringAt(issued, "key").rfind("ck_", 0), 0u) << agent.body;
  // The key buys a token at /rcrt/auth/token.
  CurlResult token = Call("POST", "/rcrt/auth/token", json::serialize(json::object{{"key", issued["key"]}}));
  ASSERT_EQ(token.status, 200) << token.Describe();
  EXPECT_FALSE(StringAt(token.Json().as_object(), "token").empty());

  CurlResult selector = Call("POST", "/rcrt/subscriptions/selectors",
                             R"({"any_tags":["travel"],"context_match":[{"path":"$.timezone","op":"eq","value":"Europe/London"}]})");
  ASSERT_EQ(selector.status, 201) << selector.Describe();
  const std::string selector_id = StringAt(selector.Json().as_object(), "id");
  Response stored = client().Get("/subscriptions/selectors/" + selector_id);
  ASSERT_EQ(stored.status, 200) << stored.Describe();
  EXPECT_EQ(stored.Json().at("selector").at("any_tags"), (json::array{"travel"}));
}

TEST_F(e2e_rcrt, BadInputGetsAClearErrorAndChangesNothing) {
  std::string id = StringAt(CreateTitled("kept"), "id");
  std::vector<std::string> before = StoreSnapshot();
  EXPECT_TRUE(IsRcrtError(Call("POST", "/rcrt/breadcrumbs", R"({"title":"x","owner":"me"})"), 422, "owner"));
  EXPECT_TRUE(IsRcrtError(Call("POST", "/rcrt/breadcrumbs", R"({"title":)"), 400, ""));
  EXPECT_TRUE(IsRcrtError(Call("POST", "/rcrt/breadcrumbs", R"({"tags":["a"]})"), 422, "title"));
  EXPECT_TRUE(IsRcrtError(Call("PATCH", "/rcrt/breadcrumbs/" + id, R"({"title":"y"})", {{"If-Match", "one"}}), 400, ""));
  EXPECT_TRUE(IsRcrtError(Call("PATCH", "/rcrt/breadcrumbs/" + id, R"({"tags":"a"})"), 422, "tags"));
  EXPECT_TRUE(IsRcrtError(Call("GET", "/rcrt/breadcrumbs?limit=0"), 400, "limit"));
  EXPECT_TRUE(IsRcrtError(Call("GET", "/rcrt/breadcrumbs/search?q=x&nn=-1"), 400, "limit"));
  EXPECT_TRUE(IsRcrtError(Call("GET", "/rcrt/breadcrumbs/no-such-id"), 404, ""));
  EXPECT_TRUE(IsRcrtError(Call("POST", "/rcrt/subscriptions/selectors", R"({"any_tags":"travel"})"), 422, "any_tags"));
  EXPECT_TRUE(IsRcrtError(Call("POST", "/rcrt/tenants/acme", R"({"name":"A","plan":"gold"})"), 422, "plan"));
  EXPECT_TRUE(IsRcrtError(Call("POST", "/rcrt/tenants/Not%20Valid", R"({"name":"A"})"), 422, "id"));
  EXPECT_TRUE(IsRcrtError(Call("POST", "/rcrt/agents/a1", R"({"roles":["emperor"]})"), 422, "roles[0]"));
  EXPECT_TRUE(IsRcrtError(Call("POST", "/rcrt/agents/a1", R"({})"), 422, "roles"));
  EXPECT_TRUE(IsRcrtError(Call("POST", "/rcrt/agents/a1/webhooks", R"({"uri":"http://127.0.0.1:9/x"})"), 422, "uri"));
  EXPECT_TRUE(IsRcrtError(Call("POST", "/rcrt/agents/a1/webhooks", R"({})"), 422, "url"));
  EXPECT_TRUE(IsRcrtError(Call("POST", "/rcrt/agents/a1/secret", R"({"secret":""})"), 422, "secret"));
  EXPECT_TRUE(IsRcrtError(Call("POST", "/rcrt/auth/token", R"({"owner_id":"x","agent_id":"y"})"), 422, "owner_id"));
  EXPECT_TRUE(IsRcrtError(Call("GET", "/rcrt/events/stream?any_tags="), 400, "any_tags[0]"));
  EXPECT_EQ(StoreSnapshot(), before);
  EXPECT_EQ(ObjectOf(client().Get("/tenants")).at("items").as_array().size(), 1u);  // only `default`
  EXPECT_EQ(ObjectOf(client().Get("/webhooks")).at("items").as_array().size(), 0u);
}

TEST_F(e2e_rcrt, StreamSendsReferenceFramesAndPingsEveryFiveSeconds) {
  SseClient stream(server().url() + "/rcrt/events/stream?any_tags=travel");
  stream.Start();
  ASSERT_TRUE(stream.WaitForOpen(kWait)) << stream.Describe();
  std::string id = StringAt(CreateOk(json::object{{"title", "Trip"}, {"tags", {"travel"}}, {"schema_name", "travel.v1"},
                                                  {"context", {{"timezone", "Europe/London"}}}}),
                            "id");
  CreateOk(json::object{{"title", "Not travel"}, {"tags", {"misc"}}});
  PatchOk(id, json::object{{"title", "Trip 2"}});
  ASSERT_TRUE(stream.WaitForEvents(2, kWait)) << stream.Describe();
  std::vector<SseFrame> events = stream.Events();
  ASSERT_EQ(events.size(), 2u) << stream.Describe();
  for (size_t i = 0; i < events.size(); ++i) {
    json::object frame = events[i].Json().as_object();
    EXPECT_EQ(frame["type"], "breadcrumb.updated") << events[i].Describe();  // creates too, as the reference
    EXPECT_EQ(frame["breadcrumb_id"], json::value(id));
    EXPECT_EQ(frame["schema_name"], "travel.v1");
    EXPECT_EQ(frame["tags"], (json::array{"travel"}));
    EXPECT_EQ(frame["context"].at("timezone"), "Europe/London");
    EXPECT_EQ(frame["version"], static_cast<int64_t>(i + 1));
  }
  // The server's heartbeat is ten minutes away: a ping while idle is the stream's own 5 s one.
  ASSERT_TRUE(stream.WaitFor([](const std::vector<SseFrame>& frames) {
    return std::any_of(frames.begin(), frames.end(), [](const SseFrame& f) { return f.IsPing(); });
  }, kWait)) << stream.Describe();
  stream.Stop();
}

// A receiver that records each delivery and answers 200.
class Deliveries {
 public:
  Deliveries()
      : server_([this](int, const test_support::ReceivedRequest& req, test_support::HttpConnection& conn) {
          {
            std::lock_guard lock(mu_);
            received_.push_back(req);
          }
          cv_.notify_all();
          conn.Send(test_support::HttpResponse(200, "OK", {}, "ok"));
        }) {}
  std::string url() const { return server_.Url("/webhook"); }
  std::optional<test_support::ReceivedRequest> WaitForOne() {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, kWait, [this] { return !received_.empty(); })) return std::nullopt;
    return received_.front();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<test_support::ReceivedRequest> received_;
  test_support::LoopbackHttpServer server_;  // last: stops before the state its handler uses
};

TEST_F(e2e_rcrt, AgentWebhookIsSignedWithXRcrtSignature) {
  Deliveries receiver;
  CurlResult hook = Call("POST", "/rcrt/agents/cal-1/webhooks", json::serialize(json::object{{"url", receiver.url()}}));
  ASSERT_EQ(hook.status, 201) << hook.Describe();
  ASSERT_EQ(hook.Json().as_object().size(), 1u) << hook.body;  // {"id"}
  CurlResult secret = Call("POST", "/rcrt/agents/cal-1/secret", R"({"secret":"my-shared-secret"})");
  ASSERT_EQ(secret.status, 200) << secret.Describe();
  EXPECT_EQ(secret.Json().at("webhooks_updated"), 1);
  // The secret never shows in the webhook's view.
  Response view = client().Get("/webhooks/" + StringAt(hook.Json().as_object(), "id"));
  EXPECT_EQ(view.Json().at("has_secret"), true);
  EXPECT_EQ(view.body.find("my-shared-secret"), std::string::npos);

  std::string id = StringAt(CreateTitled("Travel Dates"), "id");
  std::optional<test_support::ReceivedRequest> delivery = receiver.WaitForOne();
  ASSERT_TRUE(delivery.has_value()) << "no delivery";
  std::optional<std::string> signature = delivery->Header("x-rcrt-signature");
  ASSERT_TRUE(signature.has_value()) << "no X-RCRT-Signature";
  EXPECT_EQ(*signature, "sha256=" + HmacSha256Hex("my-shared-secret", delivery->body));
  EXPECT_NE(*signature, "sha256=" + HmacSha256Hex("another-secret", delivery->body));
  EXPECT_EQ(json::parse(delivery->body).at("breadcrumb_id"), json::value(id));
}

class e2e_rcrt_auth : public AuthServerTest {};

TEST_F(e2e_rcrt_auth, AgentsGetTokensAtRcrtAuthTokenAndRolesHold) {
  const std::string base = server().url();
  const Headers admin = Bearer(kBootstrapKey);
  EXPECT_EQ(Curl(base, "GET", "/rcrt/health").status, 200);  // public, as the native /health
  EXPECT_TRUE(IsRcrtError(Curl(base, "GET", "/rcrt/breadcrumbs"), 401, ""));
  EXPECT_TRUE(IsRcrtError(Curl(base, "POST", "/rcrt/breadcrumbs", R"({"title":"x"})"), 401, ""));

  CurlResult tenant = Curl(base, "POST", "/rcrt/tenants/acme", R"({"name":"Acme"})", admin);
  ASSERT_EQ(tenant.status, 201) << tenant.Describe();
  std::string acme_admin = KeyFor("acme", "boss", {"admin"});
  CurlResult emitter = Curl(base, "POST", "/rcrt/agents/planner", R"({"roles":["emitter"]})", Bearer(acme_admin));
  ASSERT_EQ(emitter.status, 201) << emitter.Describe();
  EXPECT_EQ(emitter.Json().at("owner_id"), "acme");
  CurlResult subscriber = Curl(base, "POST", "/rcrt/agents/calendar", R"({"roles":["subscriber"]})", Bearer(acme_admin));
  ASSERT_EQ(subscriber.status, 201) << subscriber.Describe();

  auto token_of = [&](const CurlResult& agent) {
    CurlResult t = Curl(base, "POST", "/rcrt/auth/token", json::serialize(json::object{{"key", agent.Json().at("key")}}));
    EXPECT_EQ(t.status, 200) << t.Describe();
    return StringAt(t.Json().as_object(), "token");
  };
  const std::string planner = token_of(emitter);
  const std::string calendar = token_of(subscriber);

  SseClient stream(base + "/rcrt/events/stream?access_token=" + calendar);
  stream.Start();
  ASSERT_TRUE(stream.WaitForOpen(kWait)) << stream.Describe();

  CurlResult created = Curl(base, "POST", "/rcrt/breadcrumbs", R"({"title":"Trip","tags":["travel"]})", Bearer(planner));
  ASSERT_EQ(created.status, 201) << created.Describe();
  const std::string id = StringAt(created.Json().as_object(), "id");
  CurlResult read = Curl(base, "GET", "/rcrt/breadcrumbs/" + id + "/full", std::nullopt, Bearer(calendar));
  ASSERT_EQ(read.status, 200) << read.Describe();
  EXPECT_EQ(read.Json().at("created_by"), "planner");
  EXPECT_EQ(read.Json().at("owner_id"), "acme");
  ASSERT_TRUE(stream.WaitForEvents(1, kWait)) << stream.Describe();
  EXPECT_EQ(stream.Events()[0].Json().at("breadcrumb_id"), json::value(id));
  EXPECT_EQ(stream.Events()[0].Json().at("owner_id"), "acme");
  stream.Stop();

  // A subscriber reads only; an emitter makes no agents or tenants; another tenant sees nothing.
  EXPECT_TRUE(IsRcrtError(Curl(base, "POST", "/rcrt/breadcrumbs", R"({"title":"no"})", Bearer(calendar)), 403, ""));
  EXPECT_TRUE(IsRcrtError(Curl(base, "POST", "/rcrt/agents/x", R"({"roles":["curator"]})", Bearer(planner)), 403, ""));
  EXPECT_TRUE(IsRcrtError(Curl(base, "POST", "/rcrt/tenants/other", R"({"name":"O"})", Bearer(acme_admin)), 403, ""));
  EXPECT_TRUE(IsRcrtError(Curl(base, "POST", "/rcrt/agents/x/webhooks", R"({"url":"http://127.0.0.1:9/x"})", Bearer(planner)),
                          403, ""));
  EXPECT_TRUE(IsRcrtError(Curl(base, "GET", "/rcrt/breadcrumbs/" + id, std::nullopt, admin), 404, ""));
  CurlResult other_list = Curl(base, "GET", "/rcrt/breadcrumbs", std::nullopt, admin);
  ASSERT_EQ(other_list.status, 200) << other_list.Describe();
  EXPECT_EQ(other_list.Json().as_array().size(), 0u) << other_list.body;
}

}  // namespace
}  // namespace cairn::e2e
