// Webhooks end to end: the real server delivers to small HTTP receivers run by the test
// (127.0.0.1, port 0), which record requests and answer with scripted statuses. Every wait is on a
// condition variable with a deadline; nothing sleeps. Loopback is a refused destination unless
// --allow-private-network lists it, so these servers allow 127.0.0.0/8 (outbound_policy_test.cpp
// tests the refusals).
#include <algorithm>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "e2e_support.h"
#include "support/loopback_http_server.h"

namespace cairn::e2e {
namespace {

constexpr auto kWait = std::chrono::seconds(30);

struct Received {
  std::string target;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
  int answered = 0;  // the status sent back; 0 while held
  int64_t event_id() const {
    auto it = headers.find("x-cairn-event-id");
    return it == headers.end() ? -1 : std::stoll(it->second);
  }
};

// A webhook receiver on tests/support's loopback server (127.0.0.1:0) that records every request
// and answers with scripted statuses.
class Receiver {
 public:
  Receiver() : server_([this](int, const test_support::ReceivedRequest& req, test_support::HttpConnection& conn) {
    Handle(req, conn);
  }) {}
  ~Receiver() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();  // releases a held request; server_ then stops
  }

  std::string url(const std::string& path = "/hook") const { return server_.Url(path); }
  // Statuses for the next requests, in order; then the default.
  void Script(std::vector<int> statuses) {
    std::lock_guard lock(mu_);
    script_.assign(statuses.begin(), statuses.end());
  }
  void SetDefault(int status) {
    std::lock_guard lock(mu_);
    default_status_ = status;
  }
  // While held, requests are recorded but not answered.
  void Hold(bool hold) {
    {
      std::lock_guard lock(mu_);
      hold_ = hold;
    }
    cv_.notify_all();
  }
  std::vector<Received> requests() {
    std::lock_guard lock(mu_);
    return requests_;
  }
  // Waits until `done(requests)` holds; false on timeout.
  bool WaitFor(const std::function<bool(const std::vector<Received>&)>& done) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, kWait, [&] { return done(requests_); });
  }
  // Waits until event `seq` has been answered with a 2xx.
  bool WaitDelivered(int64_t seq) {
    return WaitFor([seq](const std::vector<Received>& rs) {
      return std::any_of(rs.begin(), rs.end(), [seq](const Received& r) {
        return r.event_id() == seq && r.answered >= 200 && r.answered < 300;
      });
    });
  }

 private:
  void Handle(const test_support::ReceivedRequest& req, test_support::HttpConnection& conn) {
    int status = 0;
    {
      std::unique_lock lock(mu_);
      requests_.push_back(Received{req.target, req.headers, req.body, 0});
      size_t index = requests_.size() - 1;
      cv_.notify_all();
      cv_.wait(lock, [this] { return !hold_ || stopping_; });
      if (!script_.empty()) {
        status = script_.front();
        script_.pop_front();
      } else {
        status = default_status_;
      }
      requests_[index].answered = status;
    }
    conn.Send(test_support::HttpResponse(status, "Scripted", {}, "ok"));
    cv_.notify_all();
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Received> requests_;
  std::deque<int> script_;
  int default_status_ = 200;
  bool hold_ = false;
  bool stopping_ = false;
  test_support::LoopbackHttpServer server_;  // last: stops before the state its handler uses
};

class e2e_webhooks : public ServerTest {
 protected:
  std::vector<std::string> ServerArgs() const override {
    return {"--webhook-backoff-base-ms", "20", "--webhook-backoff-max-ms", "100", "--webhook-max-attempts", "3",
            "--webhook-timeout-ms", "10000", "--allow-private-network", "127.0.0.0/8"};
  }

  json::object CreateHook(const json::object& body) {
    Response r = client().Post("/webhooks", json::serialize(body));
    EXPECT_EQ(r.status, 201) << r.Describe();
    return r.status == 201 ? ObjectOf(r) : json::object{};
  }
  // Creates a breadcrumb and returns the seq of its event. Every write in these tests is a create
  // on a fresh data dir (one event each; webhook writes add no events), so seqs are counted here.
  int64_t CreateEvent(const std::string& title, json::array tags = {}) {
    CreateOk(json::object{{"title", title}, {"tags", std::move(tags)}});
    return ++seq_;
  }

  int64_t seq_ = 0;  // events so far; every write in these tests is a create (one event each)
};

TEST_F(e2e_webhooks, DeliversSignedEventsOfTheSelectorOnlyAndNeverHistory) {
  Receiver receiver;
  int64_t before = CreateEvent("before the webhook", {"hook"});
  json::object hook = CreateHook({{"url", receiver.url()}, {"selector", {{"any_tags", {"hook"}}}}, {"secret", "s3cret"}});
  EXPECT_EQ(hook["has_secret"], json::value(true));
  EXPECT_FALSE(hook.contains("secret"));
  EXPECT_EQ(IntAt(hook, "cursor"), before);

  int64_t first = CreateEvent("first", {"hook"});
  int64_t skipped = CreateEvent("not matching", {"other"});
  int64_t second = CreateEvent("second", {"hook", "x"});
  ASSERT_TRUE(receiver.WaitDelivered(second)) << server().LogTail();

  std::vector<Received> got = receiver.requests();
  ASSERT_EQ(got.size(), 2u);  // in seq order, so `skipped` was passed over before `second`
  EXPECT_EQ(got[0].event_id(), first);
  EXPECT_EQ(got[1].event_id(), second);
  for (const Received& r : got) {
    EXPECT_EQ(r.target, "/hook");
    EXPECT_EQ(r.headers.at("content-type"), "application/json");
    EXPECT_EQ(r.headers.at("x-cairn-signature"), "sha256=" + HmacSha256Hex("s3cret", r.body));
    json::object body = json::parse(r.body).as_object();
    EXPECT_EQ(IntAt(body, "seq"), r.event_id());
    EXPECT_EQ(StringAt(body, "type"), "breadcrumb.created");
    EXPECT_EQ(StringAt(body, "owner_id"), "default");
  }
  EXPECT_NE(got[0].event_id(), before);
  EXPECT_NE(got[1].event_id(), skipped);

  // The secret never comes back; GET by id and the list agree.
  std::string id = StringAt(hook, "id");
  Response one = client().Get("/webhooks/" + id);
  ASSERT_EQ(one.status, 200) << one.Describe();
  EXPECT_EQ(one.body.find("s3cret"), std::string::npos);
  Response list = client().Get("/webhooks");
  ASSERT_EQ(list.status, 200);
  EXPECT_EQ(list.body.find("s3cret"), std::string::npos);
  EXPECT_EQ(ObjectOf(list)["items"].as_array().size(), 1u);

  // Without a secret there is no signature header.
  Response patched = client().Patch("/webhooks/" + id, R"({"secret":null})");
  ASSERT_EQ(patched.status, 200) << patched.Describe();
  EXPECT_EQ(ObjectOf(patched)["has_secret"], json::value(false));
  int64_t third = CreateEvent("third", {"hook"});
  ASSERT_TRUE(receiver.WaitDelivered(third));
  EXPECT_EQ(receiver.requests().back().headers.count("x-cairn-signature"), 0u);

  // Deleted: nothing more is delivered (a later matching event after an unrelated webhook's
  // delivery proves it).
  EXPECT_EQ(client().Delete("/webhooks/" + id).status, 204);
  EXPECT_EQ(client().Get("/webhooks/" + id).status, 404);
  Receiver witness;
  CreateHook({{"url", witness.url()}});
  int64_t after_delete = CreateEvent("after delete", {"hook"});
  ASSERT_TRUE(witness.WaitDelivered(after_delete));
  EXPECT_EQ(receiver.requests().size(), 3u);
}

TEST_F(e2e_webhooks, RetriesAServerErrorAndDeliversOnce) {
  Receiver receiver;
  receiver.Script({500, 503, 200});
  CreateHook({{"url", receiver.url()}});
  int64_t seq = CreateEvent("flaky");
  ASSERT_TRUE(receiver.WaitDelivered(seq)) << server().LogTail();
  int64_t marker = CreateEvent("marker");
  ASSERT_TRUE(receiver.WaitDelivered(marker));
  std::vector<Received> got = receiver.requests();
  ASSERT_EQ(got.size(), 4u);
  std::vector<int> answers;
  for (const Received& r : got) {
    if (r.event_id() != seq) continue;
    answers.push_back(r.answered);
    EXPECT_EQ(r.body, got[0].body);  // the same bytes on every attempt
  }
  EXPECT_EQ(answers, (std::vector<int>{500, 503, 200}));
  Response dlq = client().Get("/dlq");
  ASSERT_EQ(dlq.status, 200);
  EXPECT_TRUE(ObjectOf(dlq)["items"].as_array().empty());
}

TEST_F(e2e_webhooks, PermanentFailureEndsInTheDeadLetterQueueAndRetryDeliversIt) {
  Receiver receiver;
  receiver.Script({500, 500, 500, 404});  // 3 attempts for the first event, then a 4xx for the second
  json::object hook = CreateHook({{"url", receiver.url()}, {"secret", "k"}});
  std::string hook_id = StringAt(hook, "id");
  int64_t failing = CreateEvent("always failing");
  int64_t refused = CreateEvent("refused with 404");
  int64_t marker = CreateEvent("marker");
  ASSERT_TRUE(receiver.WaitDelivered(marker)) << server().LogTail();
  std::vector<Received> got = receiver.requests();
  ASSERT_EQ(got.size(), 5u);  // 3 attempts, 1 attempt (4xx is not retried), the marker
  EXPECT_EQ(got[3].event_id(), refused);

  Response dlq = client().Get("/dlq?webhook_id=" + hook_id);
  ASSERT_EQ(dlq.status, 200) << dlq.Describe();
  json::array items = ObjectOf(dlq)["items"].as_array();
  ASSERT_EQ(items.size(), 2u);
  json::object letter = items[0].as_object();
  EXPECT_EQ(IntAt(letter, "event_seq"), failing);
  EXPECT_EQ(IntAt(letter, "attempts"), 3);
  EXPECT_EQ(IntAt(letter, "last_status"), 500);
  EXPECT_EQ(StringAt(letter, "webhook_id"), hook_id);
  EXPECT_EQ(IntAt(letter["event"].as_object(), "seq"), failing);
  json::object refused_letter = items[1].as_object();
  EXPECT_EQ(IntAt(refused_letter, "event_seq"), refused);
  EXPECT_EQ(IntAt(refused_letter, "attempts"), 1);
  EXPECT_EQ(IntAt(refused_letter, "last_status"), 404);
  EXPECT_TRUE(ObjectOf(client().Get("/dlq?webhook_id=0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"))["items"].as_array().empty());
  Response paged = client().Get("/dlq?limit=1");
  ASSERT_EQ(paged.status, 200);
  EXPECT_EQ(ObjectOf(paged)["items"].as_array().size(), 1u);
  EXPECT_EQ(StringAt(ObjectOf(paged), "next_cursor"), StringAt(letter, "id"));

  // A retry that fails again keeps the record, with the new error.
  std::string letter_id = StringAt(letter, "id");
  receiver.SetDefault(502);
  Response again = client().Post("/dlq/" + letter_id + "/retry", "");
  ASSERT_EQ(again.status, 200) << again.Describe();
  EXPECT_EQ(ObjectOf(again)["delivered"], json::value(false));
  EXPECT_EQ(IntAt(ObjectOf(again)["dead_letter"].as_object(), "attempts"), 4);
  EXPECT_EQ(IntAt(ObjectOf(again)["dead_letter"].as_object(), "last_status"), 502);

  // Fixed: the retry delivers the same body, signed, and removes the record.
  receiver.SetDefault(200);
  Response fixed = client().Post("/dlq/" + letter_id + "/retry", "");
  ASSERT_EQ(fixed.status, 200) << fixed.Describe();
  EXPECT_EQ(ObjectOf(fixed)["delivered"], json::value(true));
  Received last = receiver.requests().back();
  EXPECT_EQ(last.event_id(), failing);
  EXPECT_EQ(last.answered, 200);
  EXPECT_EQ(last.body, got[0].body);
  EXPECT_EQ(last.headers.at("x-cairn-signature"), "sha256=" + HmacSha256Hex("k", last.body));
  EXPECT_EQ(client().Get("/dlq/" + letter_id).status, 404);
  EXPECT_EQ(client().Post("/dlq/" + letter_id + "/retry", "").status, 404);

  // The other one is discarded by hand.
  std::string refused_id = StringAt(refused_letter, "id");
  EXPECT_EQ(client().Delete("/dlq/" + refused_id).status, 204);
  EXPECT_EQ(client().Delete("/dlq/" + refused_id).status, 404);
  EXPECT_TRUE(ObjectOf(client().Get("/dlq"))["items"].as_array().empty());
}

// The operator narrows --allow-private-network: retrying a dead letter through the API is refused
// before anything is sent, with the setting in the error, and the letter stays in the queue.
// (A delivery refused by the deliverer itself is dead-lettered at its first attempt:
// src/server/webhooks/webhook_policy_test.cpp.)
TEST_F(e2e_webhooks, ARetryToADestinationNoLongerAllowedIsRefusedNamingTheSetting) {
  Receiver receiver;
  receiver.Script({404});
  CreateHook({{"url", receiver.url()}});
  int64_t refused = CreateEvent("refused with 404");
  int64_t marker = CreateEvent("marker");
  ASSERT_TRUE(receiver.WaitDelivered(marker)) << server().LogTail();
  json::array items = ObjectOf(client().Get("/dlq"))["items"].as_array();
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(IntAt(items[0].as_object(), "event_seq"), refused);
  std::string letter_id = StringAt(items[0].as_object(), "id");
  ASSERT_EQ(server().Stop(), 0);

  ServerProcess narrowed({"--data-dir", server().data_dir()});  // the last --data-dir wins; loopback refused
  ASSERT_TRUE(narrowed.Start()) << narrowed.error();
  HttpClient narrowed_client(narrowed.port());
  Response retry = narrowed_client.Post("/dlq/" + letter_id + "/retry", "");
  ASSERT_EQ(retry.status, 200) << retry.Describe();
  json::object out = ObjectOf(retry);
  EXPECT_EQ(out["delivered"], json::value(false));
  EXPECT_EQ(StringAt(out, "error"),
            "destination 127.0.0.1 is a loopback address (127.0.0.0/8); allow it with --allow-private-network");
  json::object letter = out["dead_letter"].as_object();
  EXPECT_EQ(IntAt(letter, "attempts"), 2);
  EXPECT_EQ(StringAt(letter, "last_error"), StringAt(out, "error"));
  EXPECT_EQ(narrowed_client.Get("/dlq/" + letter_id).status, 200);
  EXPECT_EQ(receiver.requests().size(), 2u);  // the 404 and the marker, nothing since
  EXPECT_EQ(narrowed.Stop(), 0);
}

class e2e_webhooks_restart : public e2e_webhooks {
 protected:
  std::vector<std::string> ServerArgs() const override {
    return {"--webhook-backoff-base-ms", "20", "--webhook-backoff-max-ms", "50", "--webhook-max-attempts", "1000",
            "--allow-private-network", "127.0.0.0/8"};
  }
};

TEST_F(e2e_webhooks_restart, DeliveriesPendingAtKill9AreMadeAfterRestart) {
  Receiver receiver;
  receiver.SetDefault(503);
  CreateHook({{"url", receiver.url()}, {"selector", {{"types", {"breadcrumb.created"}}}}});
  std::vector<int64_t> seqs;
  for (int i = 0; i < 3; ++i) seqs.push_back(CreateEvent("pending " + std::to_string(i)));
  ASSERT_TRUE(receiver.WaitFor([&](const std::vector<Received>& rs) { return rs.size() >= 2; }));

  server().Kill9();
  receiver.SetDefault(200);
  ASSERT_TRUE(server().Start()) << server().error();
  Reconnect();
  for (int64_t seq : seqs) EXPECT_TRUE(receiver.WaitDelivered(seq)) << "event " << seq;

  // Acknowledged in seq order. (A request racing the kill could be answered 200 without the
  // server seeing it and be delivered again: at least once, so only first acknowledgements count.)
  std::vector<int64_t> acknowledged;
  for (const Received& r : receiver.requests()) {
    if (r.answered == 200 && std::find(acknowledged.begin(), acknowledged.end(), r.event_id()) == acknowledged.end()) {
      acknowledged.push_back(r.event_id());
    }
  }
  EXPECT_EQ(acknowledged, seqs);
}

TEST_F(e2e_webhooks, ASlowReceiverDoesNotDelayAnotherWebhook) {
  Receiver slow;
  Receiver fast;
  slow.Hold(true);
  CreateHook({{"url", slow.url()}});
  CreateHook({{"url", fast.url()}});
  int64_t first = CreateEvent("one");
  int64_t second = CreateEvent("two");
  ASSERT_TRUE(slow.WaitFor([](const std::vector<Received>& rs) { return !rs.empty(); }));
  // The slow receiver is still holding the first event while the fast one gets both.
  ASSERT_TRUE(fast.WaitDelivered(first));
  ASSERT_TRUE(fast.WaitDelivered(second));
  EXPECT_EQ(slow.requests().size(), 1u);
  EXPECT_EQ(slow.requests()[0].answered, 0);
  slow.Hold(false);
  EXPECT_TRUE(slow.WaitDelivered(second));
}

TEST_F(e2e_webhooks, BadInputIsAClientErrorAndChangesNothing) {
  Receiver receiver;
  json::object hook = CreateHook({{"url", receiver.url()}, {"selector", {{"any_tags", {"a"}}}}});
  std::string id = StringAt(hook, "id");
  Response before = client().Get("/webhooks");

  EXPECT_TRUE(IsError(client().Post("/webhooks", R"({"url":"ftp://example.com/x"})"), 422, "validation_failed", "url"));
  EXPECT_TRUE(IsError(client().Post("/webhooks", R"({"url":"not a url"})"), 422, "validation_failed", "url"));
  EXPECT_TRUE(IsError(client().Post("/webhooks", R"({"url":"http://u:p@example.com/"})"), 422, "validation_failed", "url"));
  EXPECT_TRUE(IsError(client().Post("/webhooks", R"({"selector":{}})"), 422, "validation_failed", "url"));
  EXPECT_TRUE(IsError(client().Post("/webhooks", R"({"url":"http://example.com/","selector":{"types":["nope"]}})"),
                      422, "validation_failed", "selector*"));
  EXPECT_TRUE(IsError(client().Post("/webhooks", R"({"url":"http://example.com/","selector":{"any_tags":[]}})"),
                      422, "validation_failed", "selector*"));
  EXPECT_TRUE(IsError(client().Post("/webhooks", R"({"url":"http://example.com/","selector":[]})"), 422,
                      "validation_failed", "selector*"));
  EXPECT_TRUE(IsError(client().Post("/webhooks", R"({"url":"http://example.com/","events":["x"]})"), 422,
                      "validation_failed", "events"));
  EXPECT_TRUE(IsError(client().Post("/webhooks", R"({"url":"http://example.com/","secret":""})"), 422,
                      "validation_failed", "secret"));
  EXPECT_TRUE(IsError(client().Post("/webhooks", R"({"url":"http://example.com/","active":1})"), 422,
                      "validation_failed", "active"));
  EXPECT_TRUE(IsError(client().Post("/webhooks", R"({"url":)"), 400, "bad_request"));
  Request plain;
  plain.method = "POST";
  plain.target = "/webhooks";
  plain.body = R"({"url":"http://example.com/"})";
  plain.content_type = "text/plain";
  EXPECT_TRUE(IsError(client().Send(plain), 415, "unsupported_media_type"));

  EXPECT_TRUE(IsError(client().Patch("/webhooks/" + id, R"({"url":"gopher://x/"})"), 422, "validation_failed", "url"));
  EXPECT_TRUE(IsError(client().Patch("/webhooks/" + id, R"({"active":true,"colour":"red"})"), 422,
                      "validation_failed", "colour"));
  EXPECT_TRUE(IsError(client().Patch("/webhooks/" + id, R"({})"), 422, "validation_failed", "body"));
  EXPECT_TRUE(IsError(client().Patch("/webhooks/no-such-id", R"({"active":false})"), 404, "not_found"));
  EXPECT_TRUE(IsError(client().Get("/webhooks/no-such-id"), 404, "not_found"));
  EXPECT_TRUE(IsError(client().Delete("/webhooks/no-such-id"), 404, "not_found"));
  EXPECT_TRUE(IsError(client().Get("/webhooks?x=1"), 400, "bad_request"));

  EXPECT_TRUE(IsError(client().Get("/dlq?bogus=1"), 400, "bad_request"));
  EXPECT_TRUE(IsError(client().Get("/dlq?limit=0"), 400, "bad_request"));
  EXPECT_TRUE(IsError(client().Get("/dlq?limit=abc"), 400, "bad_request"));
  EXPECT_TRUE(IsError(client().Get("/dlq?limit=1&limit=2"), 400, "bad_request", "limit"));
  EXPECT_TRUE(IsError(client().Get("/dlq?cursor=garbage"), 400, "bad_request", "cursor"));
  EXPECT_TRUE(IsError(client().Get("/dlq?webhook_id=no-such-hook"), 400, "bad_request", "webhook_id"));
  EXPECT_TRUE(IsError(client().Post("/dlq/no-such-id/retry", ""), 404, "not_found"));
  EXPECT_TRUE(IsError(client().Delete("/dlq/no-such-id"), 404, "not_found"));

  Response after = client().Get("/webhooks");
  EXPECT_EQ(after.status, 200);
  EXPECT_EQ(after.body, before.body);
  // And the webhook still works as configured.
  int64_t seq = CreateEvent("still delivered", {"a"});
  EXPECT_TRUE(receiver.WaitDelivered(seq));
}

}  // namespace
}  // namespace cairn::e2e
