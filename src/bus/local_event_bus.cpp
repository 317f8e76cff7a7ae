#include "bus/local_event_bus.h"

#include <algorithm>

#include "base/log.h"
#include "base/thread_name.h"

namespace cairn::bus {
namespace {

constexpr size_t kFetchBatch = 1024;

}  // namespace

class LocalEventBus::Handle final : public Subscription {
 public:
  Handle(LocalEventBus* bus, uint64_t id) : bus_(bus), id_(id) {}
  ~Handle() override { bus_->Unsubscribe(id_); }

 private:
  LocalEventBus* bus_;
  uint64_t id_;
};

Result<std::unique_ptr<LocalEventBus>> LocalEventBus::Start(store::EventLog& log, size_t window_events,
                                                            MetricsRegistry* metrics) {
  CAIRN_ASSIGN_OR_RETURN(store::EventLogBounds bounds, log.Bounds());
  std::unique_ptr<LocalEventBus> bus(new LocalEventBus(log, window_events, bounds.last_seq));
  LocalEventBus* raw = bus.get();
  if (metrics) {
    metrics->AddGauge("cairn_bus_last_seq", "Newest event seq published by the bus",
                      [raw] { return static_cast<double>(raw->LastSeq()); });
    metrics->AddGauge("cairn_bus_subscribers", "Bus subscribers (SSE streams, deliverers)",
                      [raw] { return static_cast<double>(raw->subscriber_count_.load()); });
    raw->published_by_tenant_ = std::make_unique<LabeledCounters>(
        *metrics, "cairn_events_total", "Events published by the bus, by the tenant of their record", "tenant");
  }
  log.SetCommittedEventsListener([raw](std::vector<model::Event> committed, bool exact) {
    if (exact && committed.empty()) return;  // a commit without events (a claim, a cursor)
    {
      std::lock_guard lock(raw->signal_mu_);
      raw->dirty_ = true;
      raw->read_log_ = raw->read_log_ || !exact;
      if (raw->committed_.empty()) {
        raw->committed_ = std::move(committed);
      } else {
        for (auto& event : committed) raw->committed_.push_back(std::move(event));
      }
    }
    raw->signal_.notify_one();
  });
  bus->thread_ = std::thread([raw] {
    NameThisThread("bus");
    raw->Run();
  });
  return bus;
}

LocalEventBus::LocalEventBus(store::EventLog& log, size_t window_events, int64_t last_seq)
    : log_(log), window_events_(std::max<size_t>(window_events, 1)), last_seq_(last_seq) {}

LocalEventBus::~LocalEventBus() { Stop(); }

void LocalEventBus::Stop() {
  {
    std::lock_guard lock(signal_mu_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  signal_.notify_one();
  if (thread_.joinable()) thread_.join();
  log_.SetCommittedEventsListener(nullptr);
}

void LocalEventBus::Run() {
  while (true) {
    std::vector<model::Event> committed;
    bool read_log = false;
    {
      std::unique_lock lock(signal_mu_);
      signal_.wait(lock, [this] { return dirty_ || stopping_; });
      if (stopping_) return;
      dirty_ = false;
      committed.swap(committed_);
      read_log = read_log_;
      read_log_ = false;
    }
    std::vector<EventPtr> fresh;
    if (Publish(std::move(committed), read_log, &fresh) && !fresh.empty()) {
      CountByTenant(fresh);  // first, so whoever is woken by an event finds it counted
      WakeSubscribers(fresh);
    }
  }
}

void LocalEventBus::CountByTenant(const std::vector<EventPtr>& fresh) {
  if (!published_by_tenant_) return;
  // One lookup per run of events of one tenant (a commit's events are usually one tenant's).
  for (size_t i = 0; i < fresh.size();) {
    size_t end = i + 1;
    while (end < fresh.size() && fresh[end]->owner_id == fresh[i]->owner_id) ++end;
    published_by_tenant_->For(fresh[i]->owner_id).Increment(end - i);
    i = end;
  }
}

bool LocalEventBus::Publish(std::vector<model::Event> committed, bool read_log, std::vector<EventPtr>* fresh) {
  int64_t last = last_seq_.load();
  // Events already published (read from the log before they were handed over) are dropped.
  auto first_new = std::find_if(committed.begin(), committed.end(), [last](const model::Event& e) { return e.seq > last; });
  committed.erase(committed.begin(), first_new);
  // What continues the window without a gap is published as handed over; anything else (a commit
  // that handed nothing over, a gap) is read from the log, which has every committed event.
  bool contiguous = !read_log && (committed.empty() || committed.front().seq == last + 1);
  for (size_t i = 1; contiguous && i < committed.size(); ++i) {
    contiguous = committed[i].seq == committed[i - 1].seq + 1;
  }
  if (!contiguous) return Fetch(fresh);
  if (committed.empty()) return true;
  for (auto& event : committed) fresh->push_back(std::make_shared<const model::Event>(std::move(event)));
  std::unique_lock lock(window_mu_);
  for (const auto& event : *fresh) window_.push_back(event);
  while (window_.size() > window_events_) window_.pop_front();
  last_seq_ = window_.back()->seq;
  return true;
}

bool LocalEventBus::Fetch(std::vector<EventPtr>* fresh) {
  while (true) {
    auto events = log_.ReadEvents(last_seq_.load(), kFetchBatch);
    if (!events.ok()) {
      CAIRN_LOG_ERROR("bus: cannot read the event log: {}", events.status().message());
      return false;
    }
    if (events->empty()) return true;
    size_t first = fresh->size();
    for (auto& event : *events) fresh->push_back(std::make_shared<const model::Event>(std::move(event)));
    {
      std::unique_lock lock(window_mu_);
      for (size_t i = first; i < fresh->size(); ++i) window_.push_back((*fresh)[i]);
      while (window_.size() > window_events_) window_.pop_front();
      last_seq_ = window_.back()->seq;
    }
    if (events->size() < kFetchBatch) return true;
  }
}

template <typename Ask>
void LocalEventBus::ForCandidates(const model::Event& event, Ask&& ask) {
  for (uint64_t id : every_event_) ask(id);
  if (auto it = by_id_.find(event.breadcrumb_id); it != by_id_.end()) {
    for (uint64_t id : it->second) ask(id);
  }
  if (!by_tag_.empty()) {
    for (const std::string& tag : event.tags) {
      if (auto it = by_tag_.find(tag); it != by_tag_.end()) {
        for (uint64_t id : it->second) ask(id);
      }
    }
  }
  if (!event.schema_name) return;
  if (auto it = by_schema_.find(*event.schema_name); it != by_schema_.end()) {
    for (uint64_t id : it->second) ask(id);
  }
  auto fields = by_field_.find(*event.schema_name);
  if (fields == by_field_.end() || !event.context.is_object()) return;
  for (const auto& [field, values] : fields->second) {
    const boost::json::value* v = event.context.as_object().if_contains(field);
    if (v == nullptr || !v->is_string()) continue;
    auto it = values.find(std::string(v->as_string()));
    if (it == values.end()) continue;
    for (uint64_t id : it->second) ask(id);
  }
}

void LocalEventBus::WakeSubscribers(const std::vector<EventPtr>& fresh) {
  int64_t published = last_seq_.load();
  std::lock_guard lock(subscribers_mu_);  // held while waking, so Unsubscribe waits for it
  // Each event goes to the subscribers it may interest (the index), each of which judges it.
  // Woken: those whose interest took an event, those without an interest, and those whose lag is
  // due; the others are not even looked at (a thousand quiet subscribers cost nothing per commit).
  std::vector<uint64_t> woken;
  for (const EventPtr& event : fresh) {
    ForCandidates(*event, [&](uint64_t id) {
      Subscriber& sub = subscribers_.at(id);
      // One that subscribed without keys needs only one yes per commit (an SSE stream, a waiter).
      if (sub.interested && !sub.asked_every_event) return;
      if (sub.asked_seq == event->seq) return;
      sub.asked_seq = event->seq;
      if (sub.interest(*event) && !sub.interested) {
        sub.interested = true;
        woken.push_back(id);
      }
    });
  }
  checked_seq_.store(published, std::memory_order_release);
  for (auto due = lag_due_.begin(); due != lag_due_.end() && due->first <= published; ++due) {
    Subscriber& sub = subscribers_.at(due->second);
    if (!sub.interested) {
      sub.interested = true;
      woken.push_back(due->second);
    }
  }
  for (uint64_t id : woken) {
    Subscriber& sub = subscribers_.at(id);
    sub.interested = false;
    sub.woken_seq = published;
    lag_due_.erase(sub.due);
    sub.due = lag_due_.emplace(published + sub.lag, id);
    sub.wake();
  }
  for (uint64_t id : every_commit_) subscribers_.at(id).wake();
}

void LocalEventBus::Index(uint64_t id, const InterestKeys& keys, bool add) {
  auto apply = [&](Ids& ids) {
    if (add) {
      ids.insert(id);
    } else {
      ids.erase(id);
    }
  };
  if (keys.every_event) return apply(every_event_);
  for (const auto& schema : keys.schemas) apply(by_schema_[schema]);
  for (const auto& breadcrumb_id : keys.breadcrumb_ids) apply(by_id_[breadcrumb_id]);
  for (const auto& tag : keys.tags) apply(by_tag_[tag]);
  for (const auto& f : keys.fields) apply(by_field_[f.schema][f.field][f.value]);
  if (add) return;
  // Empty entries go, so the index does not grow with definitions that came and went.
  std::erase_if(by_schema_, [](const auto& entry) { return entry.second.empty(); });
  std::erase_if(by_id_, [](const auto& entry) { return entry.second.empty(); });
  std::erase_if(by_tag_, [](const auto& entry) { return entry.second.empty(); });
  for (const auto& f : keys.fields) {
    auto& fields = by_field_[f.schema];
    auto& values = fields[f.field];
    if (values[f.value].empty()) values.erase(f.value);
    if (values.empty()) fields.erase(f.field);
    if (fields.empty()) by_field_.erase(f.schema);
  }
}

bool LocalEventBus::InWindow(int64_t after_seq) const {
  std::shared_lock lock(window_mu_);
  if (after_seq >= last_seq_.load()) return true;  // nothing to read
  return !window_.empty() && after_seq >= window_.front()->seq - 1;
}

Result<std::vector<EventPtr>> LocalEventBus::Read(int64_t after_seq, size_t limit) {
  std::vector<EventPtr> out;
  {
    std::shared_lock lock(window_mu_);
    int64_t published = last_seq_.load();
    if (after_seq >= published || limit == 0) return out;
    if (!window_.empty() && after_seq >= window_.front()->seq - 1) {
      // Window seqs are consecutive, so the position of after_seq + 1 is an offset.
      size_t start = static_cast<size_t>(after_seq + 1 - window_.front()->seq);
      for (size_t i = start; i < window_.size() && out.size() < limit; ++i) out.push_back(window_[i]);
      return out;
    }
  }
  // Behind the window: catch up from the log, never past what has been published.
  CAIRN_ASSIGN_OR_RETURN(auto events, log_.ReadEvents(after_seq, limit));
  int64_t published = last_seq_.load();
  for (auto& event : events) {
    if (event.seq > published) break;
    out.push_back(std::make_shared<const model::Event>(std::move(event)));
  }
  return out;
}

std::unique_ptr<Subscription> LocalEventBus::Subscribe(std::function<void()> wake) {
  return Add(std::move(wake), nullptr, 0, InterestKeys{}, false);
}

std::unique_ptr<Subscription> LocalEventBus::SubscribeWhen(std::function<void()> wake, Interest interest, int64_t lag) {
  return Add(std::move(wake), std::move(interest), lag, InterestKeys{}, false);
}

std::unique_ptr<Subscription> LocalEventBus::SubscribeWhen(std::function<void()> wake, Interest interest, int64_t lag,
                                                           InterestKeys keys) {
  return Add(std::move(wake), std::move(interest), lag, std::move(keys), true);
}

std::unique_ptr<Subscription> LocalEventBus::Add(std::function<void()> wake, Interest interest, int64_t lag,
                                                 InterestKeys keys, bool asked_every_event) {
  std::lock_guard lock(subscribers_mu_);
  uint64_t id = next_id_++;
  const bool indexed = static_cast<bool>(interest);
  subscribers_.emplace(id, Subscriber{std::move(wake), std::move(interest),
                                      // Never so far that a woken subscriber's read leaves the window.
                                      std::clamp<int64_t>(lag, 1, std::max<int64_t>(1, static_cast<int64_t>(window_events_ / 2))),
                                      last_seq_.load(), std::move(keys)});
  Subscriber& sub = subscribers_.at(id);
  sub.asked_every_event = asked_every_event;
  if (indexed) {
    Index(id, sub.keys, true);
    sub.due = lag_due_.emplace(sub.woken_seq + sub.lag, id);
  } else {
    every_commit_.insert(id);
  }
  ++subscriber_count_;
  return std::make_unique<Handle>(this, id);
}

void LocalEventBus::Unsubscribe(uint64_t id) {
  std::lock_guard lock(subscribers_mu_);
  auto it = subscribers_.find(id);
  if (it == subscribers_.end()) return;
  if (it->second.interest) {
    Index(id, it->second.keys, false);
    lag_due_.erase(it->second.due);
  } else {
    every_commit_.erase(id);
  }
  subscribers_.erase(it);
  --subscriber_count_;
}

}  // namespace cairn::bus
