#include "bus/ephemeral_hub.h"


namespace cairn::bus {

struct EphemeralHub::Slot {
  explicit Slot(std::function<void(const EphemeralPtr&)> d) : deliver(std::move(d)) {}
  // Held by a delivery and by unsubscribe: once `active` is false under it, no delivery runs or
  // will run. (Publishers on several threads take turns per subscriber; a delivery only posts.)
  std::mutex mu;
  bool active = true;
  const std::function<void(const EphemeralPtr&)> deliver;
};

class EphemeralHub::HubSubscription final : public Subscription {
 public:
  HubSubscription(EphemeralHub* hub, uint64_t id, std::shared_ptr<Slot> slot)
      : hub_(hub), id_(id), slot_(std::move(slot)) {}
  ~HubSubscription() override {
    hub_->Unsubscribe(id_);  // no publish that starts from now on sees the slot
    std::lock_guard lock(slot_->mu);  // waits for a delivery in progress on another thread
    slot_->active = false;
  }

 private:
  EphemeralHub* hub_;
  uint64_t id_;
  std::shared_ptr<Slot> slot_;
};

EphemeralHub::EphemeralHub() : subscribers_(std::make_shared<const SlotList>()) {}

EphemeralHub::~EphemeralHub() = default;

void EphemeralHub::Publish(EphemeralPtr event) {
  if (!event) return;
  std::shared_ptr<const SlotList> subscribers;
  {
    std::lock_guard lock(mu_);
    subscribers = subscribers_;
  }
  for (const auto& [id, slot] : *subscribers) {
    std::lock_guard lock(slot->mu);
    if (slot->active) slot->deliver(event);
  }
}

std::unique_ptr<Subscription> EphemeralHub::Subscribe(std::function<void(const EphemeralPtr&)> deliver) {
  auto slot = std::make_shared<Slot>(std::move(deliver));
  std::lock_guard lock(mu_);
  uint64_t id = next_id_++;
  auto next = std::make_shared<SlotList>(*subscribers_);
  next->emplace_back(id, slot);
  subscribers_ = std::move(next);
  return std::make_unique<HubSubscription>(this, id, std::move(slot));
}

void EphemeralHub::Unsubscribe(uint64_t id) {
  std::lock_guard lock(mu_);
  auto next = std::make_shared<SlotList>();
  next->reserve(subscribers_->size());
  for (const auto& entry : *subscribers_) {
    if (entry.first != id) next->push_back(entry);
  }
  subscribers_ = std::move(next);
}

size_t EphemeralHub::subscriber_count() const {
  std::lock_guard lock(mu_);
  return subscribers_->size();
}

}  // namespace cairn::bus
