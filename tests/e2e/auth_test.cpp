// Authentication and authorisation end to end (docs/auth.md): a server with --auth=on and a
// bootstrap admin key; keys and tokens made through the API; 401s, 403s per role, SSE with
// ?access_token=, and --auth=none refused off loopback.
#include <gtest/gtest.h>

#include <map>

#include "auth/jwt.h"
#include "auth_support.h"
#include "e2e_support.h"
#include "sse_client.h"

namespace cairn::e2e {
namespace {

using namespace std::chrono_literals;

class e2e_auth : public AuthServerTest {};

TEST_F(e2e_auth, MissingUnknownMalformedForgedAndExpiredCredentialsAre401) {
  std::string reader = KeyFor("default", "rita", {"reader"});
  auto is401 = [](const Response& r) {
    return IsError(r, 401, "unauthenticated") && r.Header("www-authenticate") == std::optional<std::string>("Bearer");
  };
  EXPECT_TRUE(is401(client().Get("/breadcrumbs")));
  EXPECT_TRUE(is401(client().Get("/breadcrumbs", Bearer("ck_unknown"))));
  EXPECT_TRUE(is401(client().Get("/breadcrumbs", {{"Authorization", "Basic " + reader}})));
  EXPECT_TRUE(is401(client().Get("/breadcrumbs", Bearer("a.b.c"))));
  // A token signed with another secret, and one of ours that has expired.
  auth::TokenClaims claims{"rita", "default", {auth::Role::kAdmin}, false, 0, NowSeconds() + 600};
  auto foreign = auth::JwtCodec::Hs256(std::string(40, 'z'));
  Response forged = client().Get("/breadcrumbs", Bearer((*foreign)->Sign(claims)));
  EXPECT_TRUE(is401(forged));
  EXPECT_NE(forged.body.find("bad signature"), std::string::npos) << forged.Describe();
  claims.expires_at = NowSeconds() - 1;
  Response expired = client().Get("/breadcrumbs", Bearer(ServerCodec().Sign(claims)));
  EXPECT_TRUE(is401(expired));
  EXPECT_NE(expired.body.find("expired"), std::string::npos) << expired.Describe();
  // The same codec with a valid expiry is accepted (so the 401s above are about what they say).
  claims.expires_at = NowSeconds() + 600;
  EXPECT_EQ(client().Get("/breadcrumbs", Bearer(ServerCodec().Sign(claims))).status, 200);
  // Public routes need nothing: health, and the dashboard's files (its page signs in itself).
  EXPECT_EQ(client().Get("/health").status, 200);
  EXPECT_EQ(client().Get("/ui").status, 200);
  EXPECT_EQ(client().Get("/ui/style.css").status, 200);
  EXPECT_TRUE(is401(client().Get("/metrics")));
}

TEST_F(e2e_auth, KeysExchangeForTokensAndTheActorIsThePrincipal) {
  std::string key = KeyFor("default", "ursula", {"user"});
  Response token = client().Post("/auth/token", JsonText(json::object{{"key", key}}));
  ASSERT_EQ(token.status, 200) << token.Describe();
  json::object body = ObjectOf(token);
  EXPECT_EQ(StringAt(body, "token_type"), "Bearer");
  EXPECT_EQ(StringAt(body, "algorithm"), "HS256");
  EXPECT_GT(IntAt(body, "expires_in"), 0);
  EXPECT_TRUE(IsError(client().Post("/auth/token", R"({"key":"ck_nope"})"), 401, "unauthenticated"));
  EXPECT_TRUE(IsError(client().Post("/auth/token", R"({"key":1})"), 422, "validation_failed", "key"));

  for (const Headers& as : {Bearer(key), Bearer(StringAt(body, "token"))}) {
    Response created = client().Post("/breadcrumbs", R"({"title":"mine"})", as);
    ASSERT_EQ(created.status, 201) << created.Describe();
    EXPECT_EQ(StringAt(ObjectOf(created), "created_by"), "ursula");
  }
  // Acting for someone else is for admins.
  Headers as_other = Bearer(key);
  as_other.emplace_back("X-Cairn-Actor", "mallory");
  EXPECT_TRUE(IsError(client().Post("/breadcrumbs", R"({"title":"x"})", as_other), 403, "permission_denied"));
  Headers admin_for = Bearer(kBootstrapKey);
  admin_for.emplace_back("X-Cairn-Actor", "ursula-helper");
  Response acted = client().Post("/breadcrumbs", R"({"title":"for"})", admin_for);
  ASSERT_EQ(acted.status, 201) << acted.Describe();
  EXPECT_EQ(StringAt(ObjectOf(acted), "created_by"), "ursula-helper");
}

// Each role against one route of each kind: the status, and the role a 403 names.
TEST_F(e2e_auth, EachRouteStatesTheRoleItNeeds) {
  std::map<std::string, std::string> keys;
  for (const char* role : {"reader", "user", "developer", "admin"}) keys[role] = KeyFor("default", std::string(role) + "-1", {role});
  std::string record_id = StringAt(CreateOk(json::object{{"title", "seed"}}, Bearer(kBootstrapKey)), "id");
  std::string tool = JsonText(json::object{{"schema_name", "tool.v1"}, {"title", "t"},
                                           {"context", {{"name", "echo2"}, {"runtime", "builtin"}, {"builtin", "echo"}}}});
  struct Case {
    std::string method, target, body;
    std::map<std::string, long> expected;  // role → status
    std::string needed;                    // the role a 403 names
  };
  std::vector<Case> cases = {
      {"GET", "/breadcrumbs/" + record_id, "", {{"reader", 200}, {"user", 200}, {"developer", 200}, {"admin", 200}}, ""},
      {"GET", "/breadcrumbs/search?q=seed", "", {{"reader", 200}, {"user", 200}, {"developer", 200}, {"admin", 200}}, ""},
      {"POST", "/breadcrumbs", R"({"title":"w"})", {{"reader", 403}, {"user", 201}, {"developer", 201}, {"admin", 201}}, "user"},
      {"POST", "/sessions", R"({})", {{"reader", 403}, {"user", 201}, {"developer", 201}, {"admin", 201}}, "user"},
      // (a reader is refused by the route already: see the case above)
      {"POST", "/breadcrumbs", tool, {{"user", 403}, {"admin", 201}, {"developer", 409}}, "developer"},
      {"GET", "/webhooks", "", {{"reader", 403}, {"user", 403}, {"developer", 200}, {"admin", 200}}, "developer"},
      {"GET", "/metrics", "", {{"reader", 403}, {"user", 403}, {"developer", 403}, {"admin", 200}}, "admin"},
      {"POST", "/tenants/default/keys", R"({"principal":"p","roles":["reader"]})",
       {{"reader", 403}, {"user", 403}, {"developer", 403}, {"admin", 201}}, "admin"},
      {"GET", "/tenants", "", {{"reader", 403}, {"user", 403}, {"developer", 403}, {"admin", 403}}, "system admin"},
      {"GET", "/tenants/default/keys", "", {{"reader", 403}, {"user", 403}, {"developer", 403}, {"admin", 200}}, "admin"},
      {"DELETE", "/tenants/default/keys/no-such-key", "", {{"reader", 403}, {"user", 403}, {"developer", 403}, {"admin", 404}},
       "admin"},
      {"GET", "/tenants/default/usage", "", {{"reader", 403}, {"user", 403}, {"developer", 403}, {"admin", 200}}, "admin"},
      {"PATCH", "/tenants/default", R"({"daily_token_quota":5})",
       {{"reader", 403}, {"user", 403}, {"developer", 403}, {"admin", 403}}, "system admin"},
  };
  for (const Case& c : cases) {
    for (const auto& [role, status] : c.expected) {
      Request request{c.method, c.target, Bearer(keys[role]), c.body.empty() ? std::nullopt : std::optional(c.body)};
      Response r = client().Send(request);
      EXPECT_EQ(r.status, status) << role << " " << c.method << " " << c.target << ": " << r.Describe();
      if (status == 403) {
        EXPECT_TRUE(IsError(r, 403, "permission_denied")) << r.Describe();
        EXPECT_NE(r.body.find(c.needed), std::string::npos) << role << " " << c.target << ": " << r.Describe();
      }
    }
  }
  // An admin of one tenant creates no keys in another.
  ASSERT_EQ(client().Post("/tenants", R"({"id":"other","name":"Other"})", Bearer(kBootstrapKey)).status, 201);
  EXPECT_TRUE(IsError(client().Post("/tenants/other/keys", R"({"principal":"p","roles":["admin"]})", Bearer(keys["admin"])),
                      403, "permission_denied"));
  // Nor lists or revokes them, nor reads its usage.
  EXPECT_TRUE(IsError(client().Get("/tenants/other/keys", Bearer(keys["admin"])), 403, "permission_denied"));
  EXPECT_TRUE(IsError(client().Delete("/tenants/other/keys/x", Bearer(keys["admin"])), 403, "permission_denied"));
  EXPECT_TRUE(IsError(client().Get("/tenants/other/usage", Bearer(keys["admin"])), 403, "permission_denied"));
}

// GET /tenants/{t}/keys shows what identifies a key, never the key or its hash; DELETE revokes it:
// the key is 401 at once, and so is every token made from it, also after a restart.
TEST_F(e2e_auth, KeysAreListedWithoutTheirSecretAndRevokedAtOnceWithTheirTokens) {
  ASSERT_EQ(client().Post("/tenants", R"({"id":"acme","name":"Acme"})", Bearer(kBootstrapKey)).status, 201);
  Headers admin = Bearer(KeyFor("acme", "ann", {"admin"}));
  Response made = client().Post("/tenants/acme/keys", R"({"principal":"bob","roles":["developer"]})", admin);
  ASSERT_EQ(made.status, 201) << made.Describe();
  std::string key = StringAt(ObjectOf(made), "key");
  std::string key_id = StringAt(ObjectOf(made), "key_id");
  std::string token = StringAt(ObjectOf(client().Post("/auth/token", JsonText(json::object{{"key", key}}))), "token");
  ASSERT_FALSE(token.empty());
  ASSERT_EQ(client().Get("/breadcrumbs", Bearer(token)).status, 200);

  Response listed = client().Get("/tenants/acme/keys", admin);
  ASSERT_EQ(listed.status, 200) << listed.Describe();
  json::array items = ObjectOf(listed).at("items").as_array();
  ASSERT_EQ(items.size(), 2u) << listed.body;  // ann's and bob's
  const json::object& bob = items[1].as_object();
  EXPECT_EQ(StringAt(bob, "key_id"), key_id);
  EXPECT_EQ(StringAt(bob, "principal"), "bob");
  EXPECT_EQ(JsonText(bob.at("roles")), R"(["developer"])");
  EXPECT_EQ(StringAt(bob, "last4"), key.substr(key.size() - 4));
  EXPECT_FALSE(StringAt(bob, "created_at").empty());
  EXPECT_EQ(listed.body.find(key), std::string::npos) << "the key";
  EXPECT_EQ(listed.body.find(Sha256Hex(key)), std::string::npos) << "its hash";
  EXPECT_EQ(ObjectOf(client().Get("/tenants/acme/keys", Bearer(kBootstrapKey))).at("items").as_array().size(), 2u)
      << "a system admin lists any tenant's";

  EXPECT_EQ(client().Delete("/tenants/acme/keys/" + key_id, admin).status, 204);
  EXPECT_TRUE(IsError(client().Get("/breadcrumbs", Bearer(key)), 401, "unauthenticated"));
  Response refused = client().Get("/breadcrumbs", Bearer(token));
  EXPECT_TRUE(IsError(refused, 401, "unauthenticated"));
  EXPECT_NE(refused.body.find("revoked"), std::string::npos) << refused.Describe();
  EXPECT_TRUE(IsError(client().Get("/events/stream?access_token=" + UrlEncode(token)), 401, "unauthenticated"));
  EXPECT_TRUE(IsError(client().Post("/auth/token", JsonText(json::object{{"key", key}})), 401, "unauthenticated"));
  EXPECT_TRUE(IsError(client().Delete("/tenants/acme/keys/" + key_id, admin), 404, "not_found"));
  EXPECT_EQ(ObjectOf(client().Get("/tenants/acme/keys", admin)).at("items").as_array().size(), 1u);

  ASSERT_TRUE(server().Restart()) << server().error();
  Reconnect();
  EXPECT_TRUE(IsError(client().Get("/breadcrumbs", Bearer(token)), 401, "unauthenticated"));
  EXPECT_TRUE(IsError(client().Get("/breadcrumbs", Bearer(key)), 401, "unauthenticated"));
  EXPECT_EQ(client().Get("/breadcrumbs", admin).status, 200);
}

// GET /auth/me: the caller's principal, tenant and roles, for any principal (a key or its token);
// 401 without credentials or with bad ones; no query parameters; only GET.
TEST_F(e2e_auth, AuthMeNamesTheCallerAndItsRoles) {
  ASSERT_EQ(client().Post("/tenants", R"({"id":"acme"})", Bearer(kBootstrapKey)).status, 201);
  std::string reader = KeyFor("default", "rita", {"reader"});
  std::string dev = KeyFor("acme", "dora", {"developer", "user"});
  auto me = [&](const Headers& as) {
    Response r = client().Get("/auth/me", as);
    EXPECT_EQ(r.status, 200) << r.Describe();
    return ObjectOf(r);
  };
  auto roles_of = [](const json::object& caller) {
    std::vector<std::string> out;
    for (const auto& role : caller.at("roles").as_array()) out.emplace_back(role.as_string());
    return out;
  };
  json::object rita = me(Bearer(reader));
  EXPECT_EQ(StringAt(rita, "principal"), "rita");
  EXPECT_EQ(StringAt(rita, "tenant"), "default");
  EXPECT_EQ(roles_of(rita), std::vector<std::string>{"reader"});
  EXPECT_EQ(rita.at("system_admin"), json::value(false));
  EXPECT_EQ(StringAt(rita, "auth"), "on");
  json::object dora = me(Bearer(dev));
  EXPECT_EQ(StringAt(dora, "principal"), "dora");
  EXPECT_EQ(StringAt(dora, "tenant"), "acme");
  EXPECT_EQ(roles_of(dora), (std::vector<std::string>{"developer", "user"}));
  // A token says the same as its key; the bootstrap key is a system admin.
  Response token = client().Post("/auth/token", JsonText(json::object{{"key", dev}}));
  ASSERT_EQ(token.status, 200) << token.Describe();
  EXPECT_EQ(StringAt(me(Bearer(StringAt(ObjectOf(token), "token"))), "principal"), "dora");
  json::object root = me(Bearer(kBootstrapKey));
  EXPECT_EQ(root.at("system_admin"), json::value(true));
  EXPECT_EQ(roles_of(root), std::vector<std::string>{"admin"});
  // As the query parameter of a client that cannot set headers.
  Response by_query = client().Get("/auth/me?access_token=" + reader);
  ASSERT_EQ(by_query.status, 200) << by_query.Describe();
  EXPECT_EQ(StringAt(ObjectOf(by_query), "principal"), "rita");

  EXPECT_TRUE(IsError(client().Get("/auth/me"), 401, "unauthenticated"));
  EXPECT_TRUE(IsError(client().Get("/auth/me", Bearer("ck_unknown")), 401, "unauthenticated"));
  EXPECT_TRUE(IsError(client().Get("/auth/me?x=1", Bearer(reader)), 400, "bad_request", "x"));
  EXPECT_EQ(client().Post("/auth/me", "{}", Bearer(kBootstrapKey)).status, 405);
}

TEST_F(e2e_auth, TenantsAndKeysRefuseBadInput) {
  Headers root = Bearer(kBootstrapKey);
  EXPECT_TRUE(IsError(client().Post("/tenants", R"({"id":"Bad Id"})", root), 422, "validation_failed", "id"));
  EXPECT_TRUE(IsError(client().Post("/tenants", R"({"id":"t1","extra":1})", root), 422, "validation_failed", "extra"));
  EXPECT_TRUE(IsError(client().Post("/tenants", R"({"id":"default"})", root), 409, "conflict"));
  EXPECT_TRUE(IsError(client().Post("/tenants/nowhere/keys", R"({"principal":"p","roles":["user"]})", root), 404, "not_found"));
  EXPECT_TRUE(IsError(client().Post("/tenants/default/keys", R"({"principal":"p","roles":["boss"]})", root), 422,
                      "validation_failed", "roles[0]"));
  EXPECT_TRUE(IsError(client().Post("/tenants/default/keys", R"({"principal":"p","roles":[]})", root), 422, "validation_failed", "roles"));
  Response listed = client().Get("/tenants", root);
  ASSERT_EQ(listed.status, 200);
  EXPECT_EQ(ObjectOf(listed).at("items").as_array().size(), 1u) << listed.Describe();  // default only: nothing was made
}

// POST /mcp calls the API in process: as the client, in its tenant, held to each route's role.
TEST_F(e2e_auth, McpToolsActAsTheirCaller) {
  ASSERT_EQ(client().Post("/tenants", R"({"id":"t2"})", Bearer(kBootstrapKey)).status, 201);
  Headers tess = Bearer(KeyFor("t2", "tess", {"user"}));
  tess.emplace_back("Content-Type", "application/json");
  Response called = client().Post(
      "/mcp", R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_breadcrumb","arguments":{"title":"via mcp"}}})",
      tess);
  ASSERT_EQ(called.status, 200) << called.Describe();
  json::object result = ObjectOf(called).at("result").as_object();
  ASSERT_FALSE(result.contains("isError")) << called.body;
  const json::object& created = result.at("structuredContent").as_object();
  const std::string id(created.at("id").as_string());
  EXPECT_EQ(StringAt(created, "created_by"), "tess");
  EXPECT_EQ(client().Get("/breadcrumbs/" + id, tess).status, 200);
  EXPECT_TRUE(IsError(client().Get("/breadcrumbs/" + id, Bearer(KeyFor("default", "dora", {"admin"}))), 404, "not_found"));
  // A reader may not call tools that write.
  Headers rita = Bearer(KeyFor("t2", "rita", {"reader"}));
  rita.emplace_back("Content-Type", "application/json");
  EXPECT_EQ(client().Post("/mcp", R"({"jsonrpc":"2.0","id":2,"method":"ping"})", rita).status, 403);
}

TEST_F(e2e_auth, KeysAndTenantsSurviveARestart) {
  ASSERT_EQ(client().Post("/tenants", R"({"id":"acme","name":"Acme"})", Bearer(kBootstrapKey)).status, 201);
  std::string key = KeyFor("acme", "amy", {"reader"});
  Response token = client().Post("/auth/token", JsonText(json::object{{"key", key}}));
  ASSERT_EQ(token.status, 200);
  ASSERT_TRUE(server().Restart()) << server().error();
  Reconnect();
  EXPECT_EQ(client().Get("/breadcrumbs", Bearer(key)).status, 200);
  // The HS256 secret is kept in the data dir, so tokens outlive the restart too.
  EXPECT_EQ(client().Get("/breadcrumbs", Bearer(StringAt(ObjectOf(token), "token"))).status, 200);
}

TEST_F(e2e_auth, EventStreamsTakeTheTokenAsAQueryParameter) {
  std::string key = KeyFor("default", "sam", {"reader"});
  std::string token = StringAt(ObjectOf(client().Post("/auth/token", JsonText(json::object{{"key", key}}))), "token");
  ASSERT_FALSE(token.empty());
  SseClient refused(server().url() + "/events/stream?tag=s");
  refused.Start();
  ASSERT_TRUE(refused.WaitForEnd(10s)) << refused.Describe();
  EXPECT_EQ(refused.status(), 401);
  SseClient forged(server().url() + "/events/stream?tag=s&access_token=" + UrlEncode(token + "x"));
  forged.Start();
  ASSERT_TRUE(forged.WaitForEnd(10s)) << forged.Describe();
  EXPECT_EQ(forged.status(), 401);

  SseClient stream(server().url() + "/events/stream?tag=s&access_token=" + UrlEncode(token));
  stream.Start();
  ASSERT_TRUE(stream.WaitForOpen(10s)) << stream.Describe();
  CreateOk(json::object{{"title", "seen"}, {"tags", {"s"}}}, Bearer(kBootstrapKey));
  ASSERT_TRUE(stream.WaitForEvents(1, 10s)) << stream.Describe();
  EXPECT_EQ(StringAt(stream.Events()[0].Json().as_object(), "type"), "breadcrumb.created");

  // A token in the URL only where EventSource needs it: a write with one is refused and stores nothing.
  std::string writer = KeyFor("default", "wes", {"user"});
  Response posted = client().Post("/breadcrumbs?access_token=" + UrlEncode(writer),
                                  JsonText(json::object{{"title", "via url"}, {"tags", {"s"}}}));
  EXPECT_TRUE(IsError(posted, 401, "unauthenticated")) << posted.Describe();
  Response listed = client().Get("/breadcrumbs?tag=s", Bearer(key));
  ASSERT_EQ(listed.status, 200) << listed.Describe();
  EXPECT_EQ(ObjectOf(listed).at("items").as_array().size(), 1u) << listed.Describe();
}


class e2e_rate_limits : public AuthServerTest {
 protected:
  std::vector<std::string> ServerArgs() const override {
    auto args = AuthServerTest::ServerArgs();
    for (const char* arg : {"--rate-limit-principal-per-minute", "1", "--rate-limit-tenant-per-minute", "1",
                            "--rate-limit-burst", "3"}) {
      args.push_back(arg);
    }
    return args;
  }
};

// A bucket of 3 refilled once a minute: the fourth request within the minute is refused, by the
// principal's bucket and then by the tenant's, which all its principals share.
TEST_F(e2e_rate_limits, BucketsPerPrincipalAndTenantAnswer429WithRetryAfter) {
  ASSERT_EQ(client().Post("/tenants", R"({"id":"acme"})", Bearer(kBootstrapKey)).status, 201);
  std::string ann = KeyFor("acme", "ann", {"reader"});
  std::string bob = KeyFor("acme", "bob", {"reader"});
  for (int i = 0; i < 3; ++i) EXPECT_EQ(client().Get("/breadcrumbs", Bearer(ann)).status, 200) << i;
  Response limited = client().Get("/breadcrumbs", Bearer(ann));
  EXPECT_TRUE(IsError(limited, 429, "too_many_requests")) << limited.Describe();
  EXPECT_NE(limited.body.find("principal ann"), std::string::npos) << limited.Describe();
  ASSERT_TRUE(limited.Header("retry-after"));
  EXPECT_GE(std::stoi(*limited.Header("retry-after")), 1);
  EXPECT_LE(std::stoi(*limited.Header("retry-after")), 60);
  Response shared = client().Get("/breadcrumbs", Bearer(bob));
  EXPECT_TRUE(IsError(shared, 429, "too_many_requests")) << shared.Describe();
  EXPECT_NE(shared.body.find("tenant acme"), std::string::npos) << shared.Describe();
  // Unknown credentials are refused before any bucket (401, not 429); public routes have none.
  EXPECT_EQ(client().Get("/breadcrumbs", Bearer("ck_wrong")).status, 401);
  EXPECT_EQ(client().Get("/health").status, 200);
}

// With --auth=none whoever reaches the port is the local admin of tenant "default".
TEST(e2e_auth_modes, AuthMeWithoutAuthIsTheLocalAdmin) {
  ServerProcess local;
  ASSERT_TRUE(local.Start()) << local.error() << local.LogTail();
  HttpClient client(local.port());
  Response r = client.Get("/auth/me");
  ASSERT_EQ(r.status, 200) << r.Describe();
  json::object caller = ObjectOf(r);
  EXPECT_EQ(StringAt(caller, "principal"), "anonymous");
  EXPECT_EQ(StringAt(caller, "tenant"), "default");
  EXPECT_EQ(JsonText(caller.at("roles")), R"(["admin"])");
  EXPECT_EQ(caller.at("system_admin"), json::value(true));
  EXPECT_EQ(StringAt(caller, "auth"), "none");
  Response as = client.Get("/auth/me", {{"X-Cairn-Actor", "ops-laptop"}});
  EXPECT_EQ(StringAt(ObjectOf(as), "principal"), "ops-laptop");
  EXPECT_TRUE(IsError(client.Get("/auth/me", {{"X-Cairn-Actor", std::string(129, 'a')}}), 400, "bad_request"));
  EXPECT_EQ(local.Stop(), 0);
}

// With --auth=none every request is the default tenant's and takes from its bucket.
TEST(e2e_auth_modes, WithoutAuthTheDefaultTenantsBucketLimitsEveryRequest) {
  ServerProcess local({"--rate-limit-tenant-per-minute", "1", "--rate-limit-burst", "3"});
  ASSERT_TRUE(local.Start()) << local.error() << local.LogTail();
  HttpClient client(local.port());
  for (int i = 0; i < 3; ++i) EXPECT_EQ(client.Get("/breadcrumbs").status, 200) << i;
  Response limited = client.Post("/breadcrumbs", R"({"title":"one too many"})");
  EXPECT_TRUE(IsError(limited, 429, "too_many_requests")) << limited.Describe();
  EXPECT_NE(limited.body.find("tenant default"), std::string::npos) << limited.Describe();
  ASSERT_TRUE(limited.Header("retry-after"));
  EXPECT_EQ(client.Get("/health").status, 200);  // public routes take no token
  EXPECT_EQ(local.Stop(), 0);
}

TEST(e2e_auth_modes, NoAuthIsRefusedOffLoopbackUnlessInsecure) {
  ServerProcess refused({"--listen", "0.0.0.0:0"});
  EXPECT_FALSE(refused.Start());
  EXPECT_NE(refused.LogTail().find("loopback"), std::string::npos) << refused.LogTail();
  ServerProcess insecure({"--listen", "0.0.0.0:0", "--insecure-no-auth"});
  ASSERT_TRUE(insecure.Start()) << insecure.error() << insecure.LogTail();
  EXPECT_EQ(insecure.Stop(), 0);
  ServerProcess guarded({"--listen", "0.0.0.0:0", "--auth=on", "--bootstrap-admin-key", std::string(AuthServerTest::kBootstrapKey)});
  ASSERT_TRUE(guarded.Start()) << guarded.error() << guarded.LogTail();
  HttpClient client(guarded.port());
  EXPECT_EQ(client.Get("/breadcrumbs").status, 401);
  EXPECT_EQ(guarded.Stop(), 0);
}

}  // namespace
}  // namespace cairn::e2e
