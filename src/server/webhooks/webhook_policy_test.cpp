// Webhook delivery under the outbound address policy, with the real pieces: the deliverer over a
// SQLite store and the local bus, the libcurl sender, a receiver on loopback. A webhook stored
// before the policy refused its destination (or whose name resolves to a refused address) is
// dead-lettered at its first attempt, with the policy's message, and its receiver hears nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <filesystem>

#include "base/clock.h"
#include "base/metrics.h"
#include "bus/local_event_bus.h"
#include "server/webhooks/curl_webhook_sender.h"
#include "server/webhooks/webhook_deliverer.h"
#include "server/webhooks/webhook_url.h"
#include "store/sqlite/sqlite_store.h"
#include "support/loopback_http_server.h"
#include "support/outbound_policy.h"
#include "support/sqlite_store.h"

namespace cairn::server::webhooks {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

// The real sender, recording which events it was asked to send. Deliveries of one webhook are
// sequential, so once event N+1 is sent, event N is done with (delivered or dead-lettered).
class RecordingSender final : public WebhookSender {
 public:
  explicit RecordingSender(WebhookSender& inner) : inner_(inner) {}
  WebhookResponse Send(const WebhookRequest& request, const std::atomic<bool>* cancel) override {
    WebhookResponse response = inner_.Send(request, cancel);
    std::lock_guard lock(mu_);
    for (const auto& [name, value] : request.headers) {
      if (name == "X-Cairn-Event-Id") sent_.push_back(std::stoll(value));
    }
    cv_.notify_all();
    return response;
  }
  // Waits until event `seq` was sent `times` times (by all webhooks together).
  bool WaitForSend(int64_t seq, long times = 1) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, 30s, [&] { return std::count(sent_.begin(), sent_.end(), seq) >= times; });
  }
  std::vector<int64_t> sent() {
    std::lock_guard lock(mu_);
    return sent_;
  }

 private:
  WebhookSender& inner_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<int64_t> sent_;
};

class WebhookPolicyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(store_.Open(SystemClock::Instance(), &metrics_));
    ASSERT_TRUE(test_support::StartLocalBus(*store_, bus_));
  }
  void TearDown() override {
    deliverer_.reset();
    bus_.reset();
    store_.Close();
  }

  // Delivery with retries that would show: 5 attempts, 20 ms apart.
  void StartDeliverer(WebhookSender& sender) {
    DelivererOptions options;
    options.retry.max_attempts = 5;
    options.retry.base_backoff = 20ms;
    options.retry.max_backoff = 20ms;
    options.attempt_timeout = 5s;
    deliverer_ = std::make_unique<WebhookDeliverer>(*store_, *bus_, sender, options, [] { return 0.5; }, nullptr);
    ASSERT_TRUE(deliverer_->Start().ok());
  }
  // Stored directly, as a webhook written before the setting changed would be.
  store::Webhook StoreHook(const std::string& url) {
    store::WebhookDraft draft;
    draft.owner_id = "default";
    draft.url = url;
    draft.selector = json::object{};
    auto hook = store_->CreateWebhook(draft, 10);
    EXPECT_TRUE(hook.ok()) << hook.status().ToString();
    return hook.ok() ? *hook : store::Webhook{};
  }
  int64_t WriteEvent(const std::string& title) {
    model::BreadcrumbDraft draft;
    draft.title = title;
    draft.context = json::object{};
    EXPECT_TRUE(store_->Create(model::WriteContext{}, draft, "").ok());
    return store_->Stats().value().last_event_seq;
  }

  MetricsRegistry metrics_;
  test_support::TempSqliteStore store_{"cairn-webhook-policy"};
  std::unique_ptr<bus::LocalEventBus> bus_;
  std::unique_ptr<WebhookDeliverer> deliverer_;
};

TEST_F(WebhookPolicyTest, ARefusedDestinationIsDeadLetteredAtOnceWithThePolicysMessage) {
  test_support::LoopbackHttpServer receiver(
      [](const test_support::ReceivedRequest&) { return test_support::HttpResponse(200, "OK", {}, "ok"); });
  CurlWebhookSender curl(nullptr);  // the default policy: loopback refused
  RecordingSender sender(curl);
  store::Webhook by_address = StoreHook(receiver.Url("/hook"));
  store::Webhook by_name = StoreHook("http://localhost:" + std::to_string(receiver.port()) + "/hook");
  StartDeliverer(sender);

  int64_t first = WriteEvent("first");
  int64_t fence = WriteEvent("fence");
  ASSERT_TRUE(sender.WaitForSend(fence, 2));  // both webhooks are past `first`
  // Each webhook sent `first` once: no retries for a refusal.
  std::vector<int64_t> sent = sender.sent();
  EXPECT_EQ(std::count(sent.begin(), sent.end(), first), 2);

  auto letters = store_->ListDeadLetters("default", by_address.id, "", 10);
  ASSERT_TRUE(letters.ok());
  ASSERT_GE(letters->items.size(), 1u);
  const store::DeadLetter& letter = letters->items[0];
  EXPECT_EQ(letter.event_seq, first);
  EXPECT_EQ(letter.attempts, 1);
  EXPECT_FALSE(letter.last_status.has_value());
  EXPECT_EQ(letter.last_error,
            "destination 127.0.0.1 is a loopback address (127.0.0.0/8); allow it with --allow-private-network");

  auto named = store_->ListDeadLetters("default", by_name.id, "", 10);
  ASSERT_TRUE(named.ok());
  ASSERT_GE(named->items.size(), 1u);
  EXPECT_EQ(named->items[0].attempts, 1);
  EXPECT_NE(named->items[0].last_error.find("is a loopback address"), std::string::npos) << named->items[0].last_error;
  EXPECT_TRUE(receiver.requests().empty());
}

TEST_F(WebhookPolicyTest, AnAllowedDestinationIsDelivered) {
  test_support::LoopbackHttpServer receiver(
      [](const test_support::ReceivedRequest&) { return test_support::HttpResponse(200, "OK", {}, "ok"); });
  CurlWebhookSender curl(test_support::Policy("127.0.0.0/8"));
  RecordingSender sender(curl);
  store::Webhook hook = StoreHook(receiver.Url("/hook"));
  StartDeliverer(sender);
  int64_t seq = WriteEvent("delivered");
  ASSERT_TRUE(sender.WaitForSend(seq));
  ASSERT_EQ(receiver.requests().size(), 1u);
  EXPECT_TRUE(store_->ListDeadLetters("default", hook.id, "", 10)->items.empty());
}

TEST(WebhookDestination, LiteralHostsAreJudgedWhenWritten) {
  net::OutboundPolicy strict;
  for (const char* url : {"http://127.0.0.1:8080/hook", "http://[::1]/", "http://169.254.169.254/", "http://localhost/",
                          "http://[::ffff:10.0.0.1]/", "http://0.0.0.0/"}) {
    Status s = CheckWebhookDestination(url, strict);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << url;
    EXPECT_EQ(s.message().rfind("url: destination ", 0), 0u) << s.message();
    EXPECT_NE(s.message().find("--allow-private-network"), std::string::npos) << s.message();
  }
  EXPECT_TRUE(CheckWebhookDestination("https://hooks.example.com/x", strict).ok());
  EXPECT_TRUE(CheckWebhookDestination("http://127.0.0.1:8080/hook", *test_support::Policy("127.0.0.0/8")).ok());
}

}  // namespace
}  // namespace cairn::server::webhooks
