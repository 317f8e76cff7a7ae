// Record access (docs/security.md "Record access"): two principals of one tenant, `visibility`
// and `acl` on every read path (get, full, history, list, search, event stream, webhook), acl
// writes, secret contexts redacted in events, bad ACLs refused, and a user's own sessions.
#include <gtest/gtest.h>

#include <algorithm>

#include "auth_support.h"
#include "e2e_support.h"
#include "sse_client.h"
#include "support/loopback_http_server.h"

namespace cairn::e2e {
namespace {

using namespace std::chrono_literals;

class e2e_record_access : public AuthServerTest {
 protected:
  std::vector<std::string> ServerArgs() const override {
    auto args = AuthServerTest::ServerArgs();
    for (const char* arg : {"--allow-private-network", "127.0.0.0/8", "--webhook-max-attempts", "1"}) args.push_back(arg);
    return args;
  }
  void SetUp() override {
    AuthServerTest::SetUp();
    ASSERT_EQ(client().Post("/tenants", R"({"id":"acme","name":"Acme"})", Bearer(kBootstrapKey)).status, 201);
    alice_ = Bearer(KeyFor("acme", "alice", {"user"}));
    bob_ = Bearer(KeyFor("acme", "bob", {"user"}));
    dana_ = Bearer(KeyFor("acme", "dana", {"developer"}));
    ann_ = Bearer(KeyFor("acme", "ann", {"admin"}));
  }
  std::string Create(const json::object& body, const Headers& as) { return StringAt(CreateOk(body, as), "id"); }
  // The ids a GET answers in `items`.
  std::vector<std::string> Ids(const std::string& target, const Headers& as) {
    Response r = client().Get(target, as);
    EXPECT_EQ(r.status, 200) << target << ": " << r.Describe();
    std::vector<std::string> ids;
    if (r.status != 200) return ids;
    json::object body = ObjectOf(r);
    for (const auto& item : body.at("items").as_array()) ids.push_back(StringAt(item.as_object(), "id"));
    return ids;
  }
  static bool Has(const std::vector<std::string>& ids, const std::string& id) {
    return std::find(ids.begin(), ids.end(), id) != ids.end();
  }
  json::object Full(const std::string& id) { return ObjectOf(client().Get("/breadcrumbs/" + id + "/full", ann_)); }
  std::string StreamUrl(const std::string& query) { return server().url() + "/events/stream?" + query; }

  Headers alice_, bob_, dana_, ann_;
};

TEST_F(e2e_record_access, APrivateRecordIsTheCreatorsAndTheAdminsOnEveryReadPath) {
  test_support::LoopbackHttpServer receiver(test_support::Answering([](const test_support::ReceivedRequest&) {
    return test_support::HttpResponse(200, "OK", {}, "ok");
  }));
  // dana's webhook and bob's and ann's streams, before anything is written.
  Response hook = client().Post("/webhooks", JsonText(json::object{{"url", receiver.Url("/dana")},
                                                                   {"selector", json::object{{"any_tags", {"plan"}}}}}),
                                dana_);
  ASSERT_EQ(hook.status, 201) << hook.Describe();
  SseClient bob_stream(StreamUrl("tag=plan"), bob_);
  SseClient ann_stream(StreamUrl("tag=plan"), ann_);
  bob_stream.Start();
  ann_stream.Start();
  ASSERT_TRUE(bob_stream.WaitForOpen(10s)) << bob_stream.Describe();
  ASSERT_TRUE(ann_stream.WaitForOpen(10s)) << ann_stream.Describe();

  std::string hidden = Create(json::object{{"title", "zebra private plan"}, {"tags", {"plan"}}, {"visibility", "private"},
                                           {"context", {{"note", "only alice"}}}},
                              alice_);
  PatchOk(hidden, json::object{{"title", "zebra private plan v2"}}, alice_);
  std::string shared = Create(json::object{{"title", "zebra team plan"}, {"tags", {"plan"}}}, alice_);

  for (const std::string suffix : {"", "/full", "/history"}) {
    EXPECT_EQ(client().Get("/breadcrumbs/" + hidden + suffix, bob_).status, 404) << suffix;
    EXPECT_EQ(client().Get("/breadcrumbs/" + hidden + suffix, alice_).status, 200) << suffix;
    EXPECT_EQ(client().Get("/breadcrumbs/" + hidden + suffix, ann_).status, 200) << suffix;
    EXPECT_EQ(client().Get("/breadcrumbs/" + shared + suffix, bob_).status, 200) << suffix;
  }
  EXPECT_EQ(client().Patch("/breadcrumbs/" + hidden, R"({"title":"x"})", bob_).status, 404);
  EXPECT_EQ(client().Delete("/breadcrumbs/" + hidden, bob_).status, 404);
  for (const std::string& target : {std::string("/breadcrumbs?tag=plan"), std::string("/breadcrumbs/search?q=zebra")}) {
    auto as_bob = Ids(target, bob_);
    EXPECT_FALSE(Has(as_bob, hidden)) << target;
    EXPECT_TRUE(Has(as_bob, shared)) << target;
    EXPECT_TRUE(Has(Ids(target, ann_), hidden)) << target;
    EXPECT_TRUE(Has(Ids(target, alice_), hidden)) << target;
  }
  // A page is cut after filtering: limit=1 still finds the team record for bob.
  EXPECT_EQ(Ids("/breadcrumbs?tag=plan&limit=1", bob_), std::vector<std::string>{shared});

  // Streams and webhooks: the private record's two events come before the team record's, so by
  // the time that one arrives they would have too.
  ASSERT_TRUE(ann_stream.WaitForEvents(3, 10s)) << ann_stream.Describe();
  ASSERT_TRUE(bob_stream.WaitForEvents(1, 10s)) << bob_stream.Describe();
  ASSERT_TRUE(receiver.WaitForRequests(1, 10s));
  auto bob_events = bob_stream.Events();
  ASSERT_EQ(bob_events.size(), 1u) << bob_stream.Describe();
  EXPECT_EQ(StringAt(bob_events[0].Json().as_object(), "breadcrumb_id"), shared);
  auto deliveries = receiver.requests();
  ASSERT_EQ(deliveries.size(), 1u);
  EXPECT_NE(deliveries[0].body.find(shared), std::string::npos) << deliveries[0].body;
  EXPECT_EQ(deliveries[0].body.find(hidden), std::string::npos) << deliveries[0].body;
}

TEST_F(e2e_record_access, AclReadGrantsByPrincipalAndByRole) {
  std::string to_bob = Create(json::object{{"title", "for bob"}, {"tags", {"grant"}}, {"visibility", "private"},
                                           {"acl", {{"read", {"bob"}}}}},
                              alice_);
  std::string to_developers = Create(json::object{{"title", "for developers"}, {"tags", {"grant"}}, {"visibility", "private"},
                                                  {"acl", {{"read", {"role:developer"}}}}},
                                     alice_);
  std::string narrowed = Create(json::object{{"title", "team but narrowed"}, {"tags", {"grant"}},
                                             {"acl", {{"read", {"dana"}}}}},
                                alice_);
  EXPECT_EQ(client().Get("/breadcrumbs/" + to_bob, bob_).status, 200);
  EXPECT_EQ(client().Get("/breadcrumbs/" + to_bob, dana_).status, 404);
  EXPECT_EQ(client().Get("/breadcrumbs/" + to_developers, dana_).status, 200);
  EXPECT_EQ(client().Get("/breadcrumbs/" + to_developers, bob_).status, 404) << "a user is below developer";
  EXPECT_EQ(client().Get("/breadcrumbs/" + to_developers, ann_).status, 200) << "admin is above developer";
  EXPECT_EQ(client().Get("/breadcrumbs/" + narrowed, bob_).status, 404) << "acl.read narrows a team record";
  EXPECT_EQ(Ids("/breadcrumbs?tag=grant&order=asc", bob_), std::vector<std::string>{to_bob});
  EXPECT_EQ(Ids("/breadcrumbs?tag=grant&order=asc", dana_), (std::vector<std::string>{to_developers, narrowed}));
  json::object full = ObjectOf(client().Get("/breadcrumbs/" + to_bob + "/full", alice_));
  EXPECT_EQ(JsonText(full.at("acl")), R"({"read":["bob"]})");
}

TEST_F(e2e_record_access, AclWriteAndOwnershipAreEnforcedOnWrites) {
  std::string id = Create(json::object{{"title", "dana edits"}, {"acl", {{"write", {"dana"}}}}}, alice_);
  Response denied = client().Patch("/breadcrumbs/" + id, R"({"title":"bob was here"})", bob_);
  EXPECT_EQ(denied.status, 403) << denied.Describe();
  EXPECT_NE(denied.body.find("acl.write"), std::string::npos) << denied.body;
  EXPECT_EQ(client().Delete("/breadcrumbs/" + id, bob_).status, 403);
  json::object unchanged = Full(id);
  EXPECT_EQ(IntAt(unchanged, "version"), 1);
  EXPECT_EQ(StringAt(unchanged, "title"), "dana edits");
  EXPECT_EQ(client().Patch("/breadcrumbs/" + id, R"({"title":"dana was here"})", dana_).status, 200);

  // Only the creator or an admin changes who may read or write.
  std::string team = Create(json::object{{"title", "team note"}}, alice_);
  Response widen = client().Patch("/breadcrumbs/" + team, R"({"acl":{"read":["bob"]}})", bob_);
  EXPECT_EQ(widen.status, 403) << widen.Describe();
  EXPECT_NE(widen.body.find("creator"), std::string::npos) << widen.body;
  EXPECT_EQ(client().Patch("/breadcrumbs/" + team, R"({"visibility":"private"})", ann_).status, 200);
  EXPECT_EQ(client().Get("/breadcrumbs/" + team, bob_).status, 404);

  // A private record with a read grant but no write grant: readable, not writable.
  std::string readable = Create(json::object{{"title", "look only"}, {"visibility", "private"}, {"acl", {{"read", {"bob"}}}}}, alice_);
  Response look_only = client().Patch("/breadcrumbs/" + readable, R"({"title":"x"})", bob_);
  EXPECT_EQ(look_only.status, 403) << look_only.Describe();
  EXPECT_NE(look_only.body.find("private"), std::string::npos) << look_only.body;
}

TEST_F(e2e_record_access, BadAclsAreRefusedNamingTheFieldAndChangeNothing) {
  std::string id = Create(json::object{{"title", "target"}}, alice_);
  auto before = Ids("/breadcrumbs", ann_);
  struct Bad {
    const char* acl;
    const char* field;
  };
  for (const Bad& bad : {Bad{R"([])", "acl"}, Bad{R"({"read":"bob"})", "acl.read"}, Bad{R"({"read":[7]})", "acl.read[0]"},
                         Bad{R"({"write":["role:boss"]})", "acl.write[0]"}, Bad{R"({"read":["two words"]})", "acl.read[0]"},
                         Bad{R"({"owner":["bob"]})", "acl.owner"}}) {
    std::string body = std::string(R"({"title":"bad","acl":)") + bad.acl + "}";
    Response created = client().Post("/breadcrumbs", body, alice_);
    EXPECT_EQ(created.status, 422) << bad.acl << ": " << created.Describe();
    EXPECT_EQ(StringAt(ObjectOf(created).at("error").as_object(), "field"), bad.field) << created.body;
    Response patched = client().Patch("/breadcrumbs/" + id, std::string(R"({"acl":)") + bad.acl + "}", alice_);
    EXPECT_EQ(patched.status, 422) << bad.acl << ": " << patched.Describe();
  }
  EXPECT_EQ(Ids("/breadcrumbs", ann_), before);
  EXPECT_EQ(IntAt(Full(id), "version"), 1);
}

TEST_F(e2e_record_access, ASecretContextIsRedactedInEventsForTeamReaders) {
  SseClient bob_stream(StreamUrl("tag=vault"), bob_);
  SseClient alice_stream(StreamUrl("tag=vault"), alice_);
  bob_stream.Start();
  alice_stream.Start();
  ASSERT_TRUE(bob_stream.WaitForOpen(10s)) << bob_stream.Describe();
  ASSERT_TRUE(alice_stream.WaitForOpen(10s)) << alice_stream.Describe();
  std::string id = Create(json::object{{"title", "vault"}, {"tags", {"vault"}}, {"sensitivity", "secret"},
                                       {"context", {{"code", "PINEAPPLE-42"}}}},
                          alice_);
  ASSERT_TRUE(bob_stream.WaitForEvents(1, 10s)) << bob_stream.Describe();
  ASSERT_TRUE(alice_stream.WaitForEvents(1, 10s)) << alice_stream.Describe();
  json::object to_bob = bob_stream.Events()[0].Json().as_object();
  EXPECT_EQ(StringAt(to_bob, "breadcrumb_id"), id);
  EXPECT_FALSE(to_bob.contains("context"));
  EXPECT_EQ(to_bob.at("context_redacted"), json::value(true));
  EXPECT_EQ(bob_stream.Events()[0].data.value_or("").find("PINEAPPLE"), std::string::npos);
  EXPECT_NE(alice_stream.Events()[0].data.value_or("").find("PINEAPPLE-42"), std::string::npos) << "the creator's";
  // A team reader still reads the record itself.
  EXPECT_EQ(client().Get("/breadcrumbs/" + id, bob_).status, 200);
}

TEST_F(e2e_record_access, AUserSeesOnlyItsOwnSessions) {
  Response bobs = client().Post("/sessions", "{}", bob_);
  ASSERT_EQ(bobs.status, 201) << bobs.Describe();
  std::string session = StringAt(ObjectOf(bobs), "id");
  for (const std::string& target : {"/sessions/" + session, "/sessions/" + session + "/messages"}) {
    EXPECT_EQ(client().Get(target, alice_).status, 404) << target;
    EXPECT_EQ(client().Get(target, bob_).status, 200) << target;
    EXPECT_EQ(client().Get(target, dana_).status, 200) << target << " (a developer sees the tenant's)";
  }
  EXPECT_FALSE(Has(Ids("/sessions", alice_), session));
  EXPECT_TRUE(Has(Ids("/sessions", bob_), session));
  EXPECT_TRUE(Has(Ids("/sessions", ann_), session));
  EXPECT_EQ(client().Post("/sessions/" + session + "/messages", R"({"content":"hi"})", alice_).status, 404);
  Response posted = client().Post("/sessions/" + session + "/messages", R"({"content":"hi"})", bob_);
  ASSERT_EQ(posted.status, 202) << posted.Describe();
  std::string execution = StringAt(ObjectOf(posted), "execution_id");
  EXPECT_EQ(client().Get("/executions/" + execution, alice_).status, 404);
  EXPECT_EQ(client().Get("/executions/" + execution, bob_).status, 200);
  EXPECT_FALSE(Has(Ids("/executions", alice_), execution));
  EXPECT_TRUE(Has(Ids("/executions", bob_), execution));
  EXPECT_TRUE(Has(Ids("/executions", dana_), execution));
}

}  // namespace
}  // namespace cairn::e2e
