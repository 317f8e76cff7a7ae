#include "app/bus_setup.h"

#include <condition_variable>
#include <mutex>
#include <thread>

#include "app/store_setup.h"
#include "base/log.h"
#include "base/thread_name.h"
#include "bus/nats/nats_event_feed.h"
#include "bus/nats/nats_relay.h"
#include "bus/nats/nats_stream_client.h"
#include "store/postgres/pg_lease.h"

namespace cairn::app {
namespace {

// The advisory lock key of the relay's lease ("cairn-rl" in ASCII).
constexpr int64_t kRelayLeaseKey = 0x636169726e2d726c;
// A relay that could not publish for this long hands the lease over (its process may be cut off
// from NATS while others are not) and waits this long before it asks for the lease again.
constexpr auto kRelayGiveUpAfter = std::chrono::seconds(5);
constexpr auto kRelayPauseAfterGivingUp = std::chrono::seconds(10);

bool IsNatsUrl(const std::string& value) { return value.starts_with("nats://"); }

// The store's log, as it is.
class LocalSource final : public BusSource {
 public:
  explicit LocalSource(store::EventLog& log) : log_(log) {}
  store::EventLog& log() override { return log_; }
  std::string description() const override { return "local"; }

 private:
  store::EventLog& log_;
};

// The stream: a feed in front of the store's log for the bus, and the relay, active while this
// process holds the relay's lease.
class NatsSource final : public BusSource {
 public:
  NatsSource(store::EventLog& store_log, std::unique_ptr<bus::nats::NatsStreamClient> client, std::string store_uri,
             std::string description, MetricsRegistry& metrics)
      : store_log_(store_log),
        client_(std::move(client)),
        feed_(store_log, *client_, &metrics),
        relay_(store_log, *client_, &metrics, RelayOptions()),
        store_uri_(std::move(store_uri)),
        description_(std::move(description)) {}
  ~NatsSource() override { Stop(); }

  Status Start() {
    CAIRN_RETURN_IF_ERROR(feed_.Start());
    // Every commit of the cluster (this process's writer, other processes through the store's
    // notifications) wakes the relay, which reads the log only while it is the one relaying, and
    // the feed, which sends the bus to the log only while NATS cannot be reached.
    store_log_.SetCommittedEventsListener([this](std::vector<model::Event>, bool) {
      relay_.Notify();
      feed_.StoreCommitted();
    });
    relay_.Start();
    leader_ = std::thread([this] {
      NameThisThread("relay-lease");
      Lead();
    });
    return Status::Ok();
  }

  store::EventLog& log() override { return feed_; }
  std::string description() const override { return description_; }

  void Stop() override {
    std::shared_ptr<store::postgres::PgLease> lease;
    {
      std::lock_guard lock(mu_);
      if (stopping_ && !leader_.joinable()) return;
      stopping_ = true;
      lease = lease_;
    }
    cv_.notify_all();
    if (lease) lease->RequestStop();  // ends a wait for it
    if (leader_.joinable()) leader_.join();
    relay_.Stop();
    store_log_.SetCommittedEventsListener(nullptr);
    feed_.Stop();
  }

 private:
  bus::nats::NatsRelay::Options RelayOptions() {
    bus::nats::NatsRelay::Options options;
    options.give_up_after = kRelayGiveUpAfter;
    options.on_stuck = [this] {
      std::lock_guard lock(mu_);
      stuck_ = true;
      cv_.notify_all();
    };
    return options;
  }

  // Takes the relay's lease, relays while it holds it, and takes it again when it was lost (or,
  // after a pause, when it handed it over for being unable to publish).
  void Lead() {
    while (true) {
      store::postgres::PgLease::Options options;
      options.uri = store_uri_;
      options.key = kRelayLeaseKey;
      options.purpose = "the relay of events to NATS";
      auto lease = std::make_shared<store::postgres::PgLease>(options);
      {
        std::lock_guard lock(mu_);
        if (stopping_) return;
        lease_ = lease;
        lost_ = false;
      }
      if (!lease->Acquire([this] {
            std::lock_guard lock(mu_);
            lost_ = true;
            cv_.notify_all();
          }).ok()) {
        return;  // stopped while waiting
      }
      relay_.SetActive(true);
      bool stuck = false;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [this] { return stopping_ || lost_ || stuck_; });
        stuck = stuck_;
        stuck_ = false;
        lease_.reset();
      }
      relay_.SetActive(false);
      lease->Stop();  // the lease goes with its connection: another process may take it now
      if (stuck) {
        std::unique_lock lock(mu_);
        cv_.wait_for(lock, kRelayPauseAfterGivingUp, [this] { return stopping_; });
      }
    }
  }

  store::EventLog& store_log_;
  std::unique_ptr<bus::nats::NatsStreamClient> client_;
  bus::nats::NatsEventFeed feed_;
  bus::nats::NatsRelay relay_;
  const std::string store_uri_;
  const std::string description_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool lost_ = false;   // the lease's connection broke
  bool stuck_ = false;  // the relay could not publish for kRelayGiveUpAfter
  std::shared_ptr<store::postgres::PgLease> lease_;  // the one being taken or held
  std::thread leader_;
};

}  // namespace

Status CheckBusSettings(const Settings& settings) {
  const std::string& choice = settings.GetString("bus");
  if (choice == "local") return Status::Ok();
  if (!IsNatsUrl(choice)) {
    return Status(StatusCode::kInvalidArgument, "bus: expected local or a NATS URL (nats://host:4222), got '" + choice + "'",
                  "bus");
  }
  if (!IsPostgresUri(settings.GetString("store"))) {
    return Status(StatusCode::kInvalidArgument,
                  "bus: a NATS bus joins processes that share a PostgreSQL store; set --store postgresql://... as well "
                  "(docs/deploy.md)",
                  "bus");
  }
  return bus::nats::CheckStreamName(settings.GetString("nats_stream"));
}

Result<std::unique_ptr<BusSource>> OpenBusSource(const Settings& settings, store::EventLog& store_log,
                                                 MetricsRegistry& metrics) {
  CAIRN_RETURN_IF_ERROR(CheckBusSettings(settings));
  const std::string& choice = settings.GetString("bus");
  if (choice == "local") return std::unique_ptr<BusSource>(std::make_unique<LocalSource>(store_log));
  bus::nats::NatsStreamOptions options;
  options.url = choice;
  options.stream = settings.GetString("nats_stream");
  // The stream keeps events as long as the log does; a reader further behind reads the log anyway.
  options.max_age = std::chrono::milliseconds(settings.GetInt("event_retention_ms"));
  CAIRN_ASSIGN_OR_RETURN(auto client, bus::nats::NatsStreamClient::Connect(options));
  std::string description = "NATS JetStream at " + bus::nats::NatsUrlForLog(options.url) + ", stream " + options.stream;
  auto source = std::make_unique<NatsSource>(store_log, std::move(client), settings.GetString("store"), description,
                                             metrics);
  CAIRN_RETURN_IF_ERROR(source->Start());
  return std::unique_ptr<BusSource>(std::move(source));
}

}  // namespace cairn::app
