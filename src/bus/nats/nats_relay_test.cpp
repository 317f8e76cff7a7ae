// The relay and the feed against a real nats-server (support/nats_server.h) and a real store: the
// store's log published to the stream, read back by a bus, across a relay handing over and a
// restart of the NATS server.
#include "bus/nats/nats_relay.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

#include "base/clock.h"
#include "bus/nats/event_wire.h"
#include "bus/nats/nats_event_feed.h"
#include "support/nats_server.h"
#include "support/sqlite_store.h"

namespace cairn::bus::nats {
namespace {

using namespace std::chrono_literals;

class NatsRelayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = test_support::NatsServer::Start();
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    nats_ = std::move(server).value();
    ASSERT_TRUE(store_.Open(SystemClock::Instance(), &metrics_));
  }
  void TearDown() override {
    if (bus_) bus_->Stop();
    if (store_) store_->SetCommittedEventsListener(nullptr);
    relays_.clear();
    if (feed_) feed_->Stop();
  }

  // A client kept by the fixture (it outlives the feed and the bus on it); null on failure.
  NatsStreamClient* Connect() {
    NatsStreamOptions options;
    options.url = nats_->url();
    options.stream = "test_events";
    options.timeout = 2000ms;
    auto client = NatsStreamClient::Connect(options);
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    if (!client.ok()) return nullptr;
    clients_.push_back(std::move(client).value());
    return clients_.back().get();
  }

  // A started relay (kept by the fixture) publishing through `client`, woken by the store's
  // commits as the app wires it, and active.
  NatsRelay& Relay(NatsStreamClient& client, MetricsRegistry* metrics, NatsRelay::Options options = {}) {
    relays_.push_back(std::make_unique<NatsRelay>(*store_, client, metrics, std::move(options)));
    NatsRelay* relay = relays_.back().get();
    store_->SetCommittedEventsListener([this, relay](std::vector<model::Event>, bool) {
      relay->Notify();
      if (feed_) feed_->StoreCommitted();
    });
    relay->Start();
    relay->SetActive(true);
    return *relay;
  }

  // A bus fed by the stream through `client` (a reader process's half). Before Relay(), whose
  // store listener also tells the feed.
  void StartReader(NatsStreamClient& client) {
    feed_ = std::make_unique<NatsEventFeed>(*store_, client, &metrics_);
    ASSERT_TRUE(feed_->Start().ok());
    ASSERT_TRUE(test_support::StartLocalBus(*feed_, bus_));
    wake_ = bus_->Subscribe([this] {
      std::lock_guard lock(mu_);
      cv_.notify_all();
    });
  }

  // One process relaying and another reading (StartReader), `count` events written and seen by
  // the bus; the relay (null, with a failure, when a client could not connect).
  NatsRelay* RelayAndReader(int count) {
    NatsStreamClient* relaying = Connect();
    NatsStreamClient* reading = Connect();
    if (!relaying || !reading) return nullptr;
    StartReader(*reading);
    NatsRelay* relay = &Relay(*relaying, &metrics_);
    Write(count);
    EXPECT_TRUE(BusReaches(count)) << bus_->LastSeq();
    return relay;
  }

  void Write(int count) {
    for (int i = 0; i < count; ++i) {
      model::BreadcrumbDraft draft;
      draft.title = "event " + std::to_string(++written_);
      draft.tags = {"relayed"};
      draft.context = boost::json::object{{"n", written_}};
      ASSERT_TRUE(store_->Create(model::WriteContext{"default", "tester"}, draft, "").ok());
    }
  }

  // Whether the bus publishes up to `seq` within the deadline.
  bool BusReaches(int64_t seq, std::chrono::seconds deadline = 30s) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, deadline, [&] { return bus_->LastSeq() >= seq; });
  }

  uint64_t Count(const std::string& name) { return metrics_.GetCounter(name, "").value(); }

  MetricsRegistry metrics_;
  std::unique_ptr<test_support::NatsServer> nats_;
  test_support::TempSqliteStore store_{"cairn-nats-relay-test"};
  std::vector<std::unique_ptr<NatsStreamClient>> clients_;
  std::vector<std::unique_ptr<NatsRelay>> relays_;
  std::unique_ptr<NatsEventFeed> feed_;
  std::unique_ptr<LocalEventBus> bus_;
  std::unique_ptr<Subscription> wake_;
  std::mutex mu_;
  std::condition_variable cv_;
  int written_ = 0;
};

TEST_F(NatsRelayTest, TheBusReceivesEveryEventThroughTheStreamAsTheLogHoldsIt) {
  auto relaying = Connect();
  auto reading = Connect();
  ASSERT_TRUE(relaying && reading);
  StartReader(*reading);
  NatsRelay& relay = Relay(*relaying, &metrics_);

  Write(100);
  ASSERT_TRUE(BusReaches(100)) << bus_->LastSeq();
  // Each event came as a message, not from a read of the log (one read: when the bus started).
  EXPECT_EQ(Count("cairn_nats_feed_received_total"), 100u);
  EXPECT_EQ(Count("cairn_nats_feed_log_reads_total"), 1u);
  ASSERT_TRUE(relay.WaitPublished(100, 10s));
  EXPECT_EQ(Count("cairn_nats_relay_published_total"), 100u);
  auto newest = relaying->LastPublishedSeq();
  ASSERT_TRUE(newest.ok()) << newest.status().ToString();
  EXPECT_EQ(*newest, 100);
  // What the bus holds is what the store's log holds, field for field.
  auto from_bus = bus_->Read(0, 1000);
  auto from_log = store_->ReadEvents(0, 1000);
  ASSERT_TRUE(from_bus.ok() && from_log.ok());
  ASSERT_EQ(from_bus->size(), from_log->size());
  for (size_t i = 0; i < from_log->size(); ++i) {
    EXPECT_EQ(EncodeStreamEvent(*(*from_bus)[i]), EncodeStreamEvent((*from_log)[i])) << i;
  }
}

TEST_F(NatsRelayTest, ARelayTakingOverContinuesAfterTheStreamsNewestMessage) {
  auto first_client = Connect();
  auto second_client = Connect();
  auto reading = Connect();
  ASSERT_TRUE(first_client && second_client && reading);
  StartReader(*reading);
  NatsRelay& first = Relay(*first_client, nullptr);
  Write(30);
  ASSERT_TRUE(BusReaches(30)) << bus_->LastSeq();
  first.SetActive(false);
  Write(20);  // no relay is active: these wait in the log
  auto newest = second_client->LastPublishedSeq();
  ASSERT_TRUE(newest.ok()) << newest.status().ToString();
  EXPECT_EQ(*newest, 30);
  EXPECT_EQ(bus_->LastSeq(), 30);

  NatsRelay& second = Relay(*second_client, &metrics_);
  ASSERT_TRUE(BusReaches(50)) << bus_->LastSeq();
  ASSERT_TRUE(second.WaitPublished(50, 10s));
  newest = second_client->LastPublishedSeq();
  ASSERT_TRUE(newest.ok());
  EXPECT_EQ(*newest, 50);
  // It published what the first had not (31 to 50), nothing the stream already held.
  EXPECT_EQ(Count("cairn_nats_relay_published_total"), 20u);
}

TEST_F(NatsRelayTest, ARestartOfTheNatsServerLosesNoEvent) {
  ASSERT_TRUE(RelayAndReader(40));

  uint64_t subscriptions = feed_->subscriptions();
  ASSERT_TRUE(nats_->Restart().ok()) << nats_->Log();
  Write(40);  // while the clients reconnect: the bus reads them from the log
  ASSERT_TRUE(BusReaches(80)) << bus_->LastSeq() << "\n" << nats_->Log();
  // Subscribed again, events arrive as the stream's messages: no more reads of the log.
  ASSERT_TRUE(feed_->WaitForSubscription(subscriptions, 30s)) << nats_->Log();
  uint64_t log_reads = Count("cairn_nats_feed_log_reads_total");
  Write(20);
  ASSERT_TRUE(BusReaches(100)) << bus_->LastSeq();
  EXPECT_EQ(Count("cairn_nats_feed_log_reads_total"), log_reads);
  auto events = bus_->Read(0, 1000);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 100u);
  for (size_t i = 0; i < events->size(); ++i) EXPECT_EQ((*events)[i]->seq, static_cast<int64_t>(i) + 1);
}

TEST_F(NatsRelayTest, WhileNatsIsAwayTheBusReadsTheDatabase) {
  ASSERT_TRUE(RelayAndReader(10));

  uint64_t subscriptions = feed_->subscriptions();
  ASSERT_TRUE(nats_->Stop().ok());
  Write(10);  // nothing can be published: the store's notifications send the bus to the log
  ASSERT_TRUE(BusReaches(20)) << bus_->LastSeq();
  ASSERT_TRUE(nats_->StartAgain().ok()) << nats_->Log();
  // Back on the stream: whatever came while the subscription was being made again was read from
  // the log, and later events arrive as messages.
  ASSERT_TRUE(feed_->WaitForSubscription(subscriptions, 30s)) << nats_->Log();
  uint64_t log_reads = Count("cairn_nats_feed_log_reads_total");
  Write(10);
  ASSERT_TRUE(BusReaches(30)) << bus_->LastSeq();
  EXPECT_EQ(Count("cairn_nats_feed_log_reads_total"), log_reads) << nats_->Log();
  auto events = bus_->Read(0, 10000);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), static_cast<size_t>(written_));
  for (size_t i = 0; i < events->size(); ++i) EXPECT_EQ((*events)[i]->seq, static_cast<int64_t>(i) + 1);
}

TEST_F(NatsRelayTest, AServerThatLostItsStreamGetsItBackAndCarriesEventsAgain) {
  NatsRelay* relay = RelayAndReader(20);
  ASSERT_TRUE(relay);
  uint64_t subscriptions = feed_->subscriptions();
  ASSERT_TRUE(nats_->Restart(/*lose_storage=*/true).ok()) << nats_->Log();
  Write(10);  // the relay makes the stream again; the reader subscribes to the new one
  ASSERT_TRUE(BusReaches(30)) << bus_->LastSeq() << nats_->Log();
  ASSERT_TRUE(feed_->WaitForSubscription(subscriptions, 30s)) << nats_->Log();
  ASSERT_TRUE(relay->WaitPublished(30, 30s));
  // From here the bus can only get new events from the stream: it does not read the log again.
  uint64_t log_reads = Count("cairn_nats_feed_log_reads_total");
  Write(10);
  ASSERT_TRUE(BusReaches(40)) << bus_->LastSeq();
  EXPECT_EQ(Count("cairn_nats_feed_log_reads_total"), log_reads) << nats_->Log();
  auto newest = clients_.front()->LastPublishedSeq();  // the relay's client
  ASSERT_TRUE(newest.ok()) << newest.status().ToString();
  EXPECT_EQ(*newest, written_);
}

TEST_F(NatsRelayTest, ARelayThatCannotPublishSaysSoAfterItsGraceTime) {
  auto relaying = Connect();
  ASSERT_TRUE(relaying);
  std::mutex mu;
  std::condition_variable stuck_cv;
  bool stuck = false;
  NatsRelay::Options options;
  options.give_up_after = 300ms;
  options.on_stuck = [&] {
    std::lock_guard lock(mu);
    stuck = true;
    stuck_cv.notify_all();
  };
  Relay(*relaying, nullptr, options);
  ASSERT_TRUE(nats_->Stop().ok());
  Write(1);
  std::unique_lock lock(mu);
  EXPECT_TRUE(stuck_cv.wait_for(lock, 20s, [&] { return stuck; }));
}

TEST_F(NatsRelayTest, AMessageThatIsNotAnEventSendsTheBusToTheLog) {
  auto reading = Connect();
  ASSERT_TRUE(reading);
  StartReader(*reading);
  Write(3);  // no relay: nothing reaches the stream
  uint64_t reads = Count("cairn_nats_feed_log_reads_total");
  ASSERT_TRUE(reading->PublishBatch({{"1000000", "not an event"}}).ok());
  ASSERT_TRUE(BusReaches(3)) << bus_->LastSeq();
  EXPECT_EQ(Count("cairn_nats_feed_log_reads_total"), reads + 1);
  EXPECT_EQ(Count("cairn_nats_feed_received_total"), 0u);
}

TEST(NatsStreamClientTest, AnUnreachableServerOrABadStreamNameIsRefused) {
  NatsStreamOptions options;
  options.url = "nats://127.0.0.1:1";
  auto unreachable = NatsStreamClient::Connect(options);
  ASSERT_FALSE(unreachable.ok());
  EXPECT_EQ(unreachable.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(unreachable.status().message().find("nats://127.0.0.1:1"), std::string::npos);
  options.stream = "has.dots";
  auto bad_name = NatsStreamClient::Connect(options);
  ASSERT_FALSE(bad_name.ok());
  EXPECT_EQ(bad_name.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace cairn::bus::nats
