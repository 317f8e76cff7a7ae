// Two tenants see nothing of each other (docs/auth.md): records, history, listing, search,
// selectors, webhooks, sessions, executions and event streams, walked route by route with each
// tenant's own admin key.
#include <gtest/gtest.h>

#include <algorithm>

#include "auth_support.h"
#include "e2e_support.h"
#include "sse_client.h"
#include "support/loopback_http_server.h"
#include "tool_support.h"

namespace cairn::e2e {
namespace {

using namespace std::chrono_literals;

class e2e_tenants : public AuthServerTest {
 protected:
  std::vector<std::string> ServerArgs() const override {
    auto args = AuthServerTest::ServerArgs();
    for (const char* arg : {"--allow-private-network", "127.0.0.0/8", "--webhook-max-attempts", "1"}) args.push_back(arg);
    return args;
  }
  void SetUp() override {
    AuthServerTest::SetUp();
    for (const char* tenant : {"acme", "globex"}) {
      ASSERT_EQ(client().Post("/tenants", JsonText(json::object{{"id", tenant}, {"name", tenant}}), Bearer(kBootstrapKey)).status, 201);
    }
    acme_ = Bearer(KeyFor("acme", "ann", {"admin"}));
    globex_ = Bearer(KeyFor("globex", "gus", {"admin"}));
  }
  Headers acme_, globex_;
};

TEST_F(e2e_tenants, RoutesShowATenantNothingOfAnother) {
  test_support::LoopbackHttpServer receiver(test_support::Answering([](const test_support::ReceivedRequest&) {
    return test_support::HttpResponse(200, "OK", {}, "ok");
  }));
  // globex's webhook and stream, opened before acme writes anything.
  Response hook = client().Post("/webhooks", JsonText(json::object{{"url", receiver.Url("/globex")}}), globex_);
  ASSERT_EQ(hook.status, 201) << hook.Describe();
  std::string hook_id = StringAt(ObjectOf(hook), "id");
  std::string globex_token =
      StringAt(ObjectOf(client().Post("/auth/token", JsonText(json::object{{"key", globex_[0].second.substr(7)}}))), "token");
  SseClient globex_stream(server().url() + "/events/stream?tag=shared&access_token=" + UrlEncode(globex_token));
  globex_stream.Start();
  ASSERT_TRUE(globex_stream.WaitForOpen(10s)) << globex_stream.Describe();

  // acme writes a record (with a path), a selector and a session.
  json::object record = CreateOk(json::object{{"title", "acme secret plan"}, {"tags", {"shared"}}, {"path", "plans/one"}}, acme_);
  std::string id = StringAt(record, "id");
  ASSERT_EQ(client().Patch("/breadcrumbs/" + id, R"({"title":"acme secret plan v2"})", acme_).status, 200);
  Response selector = client().Post("/subscriptions/selectors", R"({"name":"s","selector":{"any_tags":["shared"]}})", acme_);
  ASSERT_EQ(selector.status, 201) << selector.Describe();
  std::string selector_id = StringAt(ObjectOf(selector), "id");
  Response session = client().Post("/sessions", "{}", acme_);
  ASSERT_EQ(session.status, 201) << session.Describe();
  std::string session_id = StringAt(ObjectOf(session), "id");

  // globex: nothing of it, on any route.
  for (const std::string& target : {"/breadcrumbs/" + id, "/breadcrumbs/" + id + "/full", "/breadcrumbs/" + id + "/history",
                                    "/subscriptions/selectors/" + selector_id, "/sessions/" + session_id,
                                    "/sessions/" + session_id + "/messages"}) {
    EXPECT_EQ(client().Get(target, globex_).status, 404) << target;
    EXPECT_EQ(client().Get(target, acme_).status, 200) << target;  // the 404 is about the tenant
  }
  EXPECT_EQ(client().Patch("/breadcrumbs/" + id, R"({"title":"x"})", globex_).status, 404);
  EXPECT_EQ(client().Delete("/breadcrumbs/" + id, globex_).status, 404);
  auto item_count = [&](const std::string& target, const Headers& as) {
    Response r = client().Get(target, as);
    EXPECT_EQ(r.status, 200) << target << ": " << r.Describe();
    json::object body = ObjectOf(r);
    const auto* items = body.if_contains("items");
    return items && items->is_array() ? items->as_array().size() : size_t{999};
  };
  for (const std::string& target : {std::string("/breadcrumbs"), std::string("/breadcrumbs?path=plans/one"),
                                    std::string("/breadcrumbs/search?q=secret"), std::string("/subscriptions/selectors"),
                                    std::string("/sessions"), std::string("/executions")}) {
    EXPECT_EQ(item_count(target, globex_), 0u) << target;
  }
  EXPECT_GE(item_count("/breadcrumbs/search?q=secret", acme_), 1u);
  EXPECT_EQ(item_count("/webhooks", acme_), 0u);  // and globex's webhook is not acme's
  EXPECT_EQ(client().Get("/webhooks/" + hook_id, acme_).status, 404);
  // The same path is free in the other tenant.
  CreateOk(json::object{{"title", "globex plan"}, {"tags", {"shared"}}, {"path", "plans/one"}}, globex_);

  // globex's stream and webhook get globex's event and none of acme's (acme's came first: had
  // they been delivered, they would be there by the time globex's is).
  ASSERT_TRUE(globex_stream.WaitForEvents(1, 10s)) << globex_stream.Describe();
  ASSERT_TRUE(receiver.WaitForRequests(1, 10s));
  auto events = globex_stream.Events();
  ASSERT_EQ(events.size(), 1u) << globex_stream.Describe();
  EXPECT_EQ(StringAt(events[0].Json().as_object(), "path"), "plans/one");
  EXPECT_EQ(events[0].data.value_or("").find("acme"), std::string::npos) << events[0].data.value_or("");
  for (const auto& request : receiver.requests()) EXPECT_EQ(request.body.find("acme"), std::string::npos) << request.body;
  // Stored selectors are per tenant too: acme's id means nothing to globex's stream.
  SseClient by_id(server().url() + "/events/stream?selector_id=" + selector_id + "&access_token=" + UrlEncode(globex_token));
  by_id.Start();
  ASSERT_TRUE(by_id.WaitForEnd(10s));
  EXPECT_EQ(by_id.status(), 404) << by_id.Describe();
}

// A tool defined in one tenant answers that tenant's requests and never another's (docs/auth.md:
// executors follow the tenant of their definition while the server runs), and a request for a tool
// its tenant does not have is answered in that tenant as unknown, whenever the tenant was created.
TEST_F(e2e_tenants, ATenantsToolAnswersOnlyThatTenant) {
  auto token_of = [&](const Headers& as) {
    return StringAt(ObjectOf(client().Post("/auth/token", JsonText(json::object{{"key", as[0].second.substr(7)}}))), "token");
  };
  auto stream_of = [&](const Headers& as) {
    return std::make_unique<SseClient>(server().url() + "/events/stream?schema_name=tool.response.v1&since=0&access_token=" +
                                       UrlEncode(token_of(as)));
  };
  CreateOk(json::object{{"title", "tool mirror"}, {"schema_name", "tool.v1"},
                        {"context", {{"name", "mirror"}, {"runtime", "builtin"}, {"builtin", "echo"}}}},
           acme_);
  auto acme_stream = stream_of(acme_);
  auto globex_stream = stream_of(globex_);
  acme_stream->Start();
  globex_stream->Start();
  ASSERT_TRUE(acme_stream->WaitForOpen(10s)) << acme_stream->Describe();
  ASSERT_TRUE(globex_stream->WaitForOpen(10s)) << globex_stream->Describe();
  auto request = [&](const Headers& as, int x) {
    return StringAt(CreateOk(json::object{{"title", "call"}, {"schema_name", "tool.request.v1"},
                                          {"context", {{"tool", "mirror"}, {"input", {{"x", x}}}}}},
                             as),
                    "id");
  };
  std::string globex_request = request(globex_, 1);  // first: had acme's executor taken it, its answer would come first
  std::string acme_request = request(acme_, 2);
  ASSERT_TRUE(acme_stream->WaitForEvents(1, 30s)) << acme_stream->Describe();
  auto answer = acme_stream->Events()[0].Json().as_object();
  EXPECT_EQ(StringAt(answer, "type"), "breadcrumb.created");
  EXPECT_NE(JsonText(answer).find(acme_request), std::string::npos) << JsonText(answer);
  // globex has no tool of that name: its request is answered in globex, as unknown.
  ASSERT_TRUE(globex_stream->WaitForEvents(1, 30s)) << globex_stream->Describe();
  auto unknown = globex_stream->Events()[0].Json().as_object();
  EXPECT_EQ(ErrorCodeOf(unknown), "unknown_tool") << JsonText(unknown);
  EXPECT_EQ(StringAt(ContextOf(unknown), "request_id"), globex_request) << JsonText(unknown);
  EXPECT_EQ(StringAt(unknown, "owner_id"), "globex") << JsonText(unknown);
  EXPECT_EQ(acme_stream->Events().size(), 1u) << acme_stream->Describe();
}

TEST_F(e2e_tenants, TokensCarryTheirTenant) {
  std::string id = StringAt(CreateOk(json::object{{"title", "acme only"}}, acme_), "id");
  auth::TokenClaims claims{"gus", "globex", {auth::Role::kAdmin}, false, 0, NowSeconds() + 600};
  EXPECT_EQ(client().Get("/breadcrumbs/" + id, Bearer(ServerCodec().Sign(claims))).status, 404);
  claims.tenant = "acme";
  EXPECT_EQ(client().Get("/breadcrumbs/" + id, Bearer(ServerCodec().Sign(claims))).status, 200);
  claims.tenant = "nowhere";
  EXPECT_EQ(client().Get("/breadcrumbs/" + id, Bearer(ServerCodec().Sign(claims))).status, 401);
}

// Metrics name the tenant of what they count (requests, events, executor runs); a tenant's admin
// sees the server's own series and its tenant's, never another tenant's; a system admin sees all.
TEST_F(e2e_tenants, MetricsAreLabelledByTenantAndEachAdminSeesItsOwn) {
  CreateOk(json::object{{"title", "tool mirror"}, {"schema_name", "tool.v1"},
                        {"context", {{"name", "mirror"}, {"runtime", "builtin"}, {"builtin", "echo"}}}},
           acme_);
  CreateOk(json::object{{"title", "call"}, {"schema_name", "tool.request.v1"}, {"context", {{"tool", "mirror"}, {"input", {{"x", 1}}}}}},
           acme_);
  CreateOk(json::object{{"title", "globex note"}}, globex_);
  auto metrics = [&](const Headers& as) {
    Response r = client().Get("/metrics", as);
    EXPECT_EQ(r.status, 200) << r.Describe();
    return r.body;
  };
  auto has = [](const std::string& text, const std::string& series) { return text.find("\n" + series + " ") != std::string::npos; };
  const std::string acme_run = "cairn_executor_runs_total{status=\"completed\",tenant=\"acme\"}";
  // The run is counted once its answer is written: poll the metrics until it is.
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (!has(metrics(Bearer(kBootstrapKey)), acme_run)) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << metrics(Bearer(kBootstrapKey));
  }
  std::string all = metrics(Bearer(kBootstrapKey));
  for (const char* tenant : {"acme", "globex"}) {
    EXPECT_TRUE(has(all, "cairn_events_total{tenant=\"" + std::string(tenant) + "\"}")) << tenant << "\n" << all;
    EXPECT_TRUE(has(all, "cairn_tenant_http_requests_total{tenant=\"" + std::string(tenant) + "\"}")) << tenant << "\n" << all;
  }
  std::string acme = metrics(acme_);
  EXPECT_TRUE(has(acme, acme_run)) << acme;
  EXPECT_TRUE(has(acme, "cairn_events_total{tenant=\"acme\"}")) << acme;
  EXPECT_TRUE(has(acme, "cairn_bus_last_seq")) << acme;  // the server's own series stay
  EXPECT_EQ(acme.find("globex"), std::string::npos) << acme;
  std::string globex = metrics(globex_);
  EXPECT_TRUE(has(globex, "cairn_events_total{tenant=\"globex\"}")) << globex;
  EXPECT_EQ(globex.find("tenant=\"acme\""), std::string::npos) << globex;
}

}  // namespace
}  // namespace cairn::e2e
