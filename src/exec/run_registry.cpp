#include "exec/run_registry.h"

#include <algorithm>
#include <set>

#include "base/json_util.h"

namespace cairn::exec {
namespace json = boost::json;
namespace {

constexpr size_t kRemembered = 1024;

std::string Key(const std::string& owner_id, const std::string& id) { return owner_id + "\n" + id; }

}  // namespace

struct RunRegistry::Run {
  std::string owner_id;
  std::string trigger_id;
  json::object record;
  std::atomic<bool>* cancel = nullptr;
  std::atomic<bool> requested{false};

  void Cancel() {
    requested = true;
    cancel->store(true);
  }
};

RunRegistry::Registration::Registration(Registration&& other) noexcept
    : registry_(std::exchange(other.registry_, nullptr)), run_(std::move(other.run_)) {}

RunRegistry::Registration& RunRegistry::Registration::operator=(Registration&& other) noexcept {
  if (this != &other) {
    if (registry_ && run_) registry_->Remove(run_);
    registry_ = std::exchange(other.registry_, nullptr);
    run_ = std::move(other.run_);
  }
  return *this;
}

RunRegistry::Registration::~Registration() {
  if (registry_ && run_) registry_->Remove(run_);
}

bool RunRegistry::Registration::cancel_requested() const { return run_ && run_->requested; }

RunRegistry::Registration RunRegistry::Add(const std::string& owner_id, json::object record,
                                           const std::string& trigger_id, std::atomic<bool>* cancel) {
  auto run = std::make_shared<Run>();
  run->owner_id = owner_id;
  run->trigger_id = trigger_id;
  run->cancel = cancel;
  std::string id = StringMember(record, "id");
  std::string parent = StringMember(record, "parent_execution_id");
  std::string root = StringMember(record, "root_execution_id");
  run->record = std::move(record);
  std::lock_guard lock(mu_);
  bool cancelled = (!trigger_id.empty() && cancelled_triggers_.Contains(trigger_id)) ||
                   cancelled_executions_.Contains(Key(owner_id, id)) ||
                   (!parent.empty() && cancelled_executions_.Contains(Key(owner_id, parent))) ||
                   (!root.empty() && cancelled_executions_.Contains(Key(owner_id, root)));
  // An ancestor between parent and root may be the cancelled one: walk the chain in flight.
  for (std::string up = parent; !cancelled && !up.empty();) {
    auto it = by_id_.find(Key(owner_id, up));
    if (it == by_id_.end()) break;
    cancelled = it->second->requested;
    up = StringMember(it->second->record, "parent_execution_id");
  }
  if (cancelled) run->Cancel();
  by_id_.emplace(Key(owner_id, id), run);
  return Registration(this, std::move(run));
}

void RunRegistry::Remove(const std::shared_ptr<Run>& run) {
  std::lock_guard lock(mu_);
  auto [begin, end] = by_id_.equal_range(Key(run->owner_id, StringMember(run->record, "id")));
  for (auto it = begin; it != end; ++it) {
    if (it->second == run) {
      by_id_.erase(it);
      return;
    }
  }
}

size_t RunRegistry::CancelTrigger(const std::string& trigger_id) {
  size_t told = 0;
  {
    std::lock_guard lock(mu_);
    std::vector<std::pair<std::string, std::string>> roots;  // owner, execution id
    for (auto& [key, run] : by_id_) {
      if (run->trigger_id == trigger_id) roots.emplace_back(run->owner_id, StringMember(run->record, "id"));
    }
    if (!roots.empty()) {
      for (const auto& [owner, id] : roots) told += CancelTreeLocked(owner, id);
      return told;
    }
    cancelled_triggers_.Remember(trigger_id);
  }
  return WakePaused("", "", trigger_id);
}

size_t RunRegistry::CancelTree(const std::string& owner_id, const std::string& execution_id) {
  size_t told;
  {
    std::lock_guard lock(mu_);
    told = CancelTreeLocked(owner_id, execution_id);
  }
  return told + WakePaused(owner_id, execution_id, "");
}

void RunRegistry::SetPausedWaker(PausedWaker wake) {
  std::lock_guard lock(waker_mu_);
  waker_ = std::move(wake);
}

size_t RunRegistry::WakePaused(const std::string& owner_id, const std::string& execution_id,
                               const std::string& trigger_id) {
  std::lock_guard lock(waker_mu_);
  return waker_ ? waker_(owner_id, execution_id, trigger_id) : 0;
}

size_t RunRegistry::CancelTreeLocked(const std::string& owner_id, const std::string& execution_id) {
  cancelled_executions_.Remember(Key(owner_id, execution_id));
  // Descendants in flight: every run whose parent is in the tree, until no more join.
  std::set<std::string> tree{execution_id};
  size_t told = 0;
  for (bool grew = true; grew;) {
    grew = false;
    for (auto& [key, run] : by_id_) {
      if (run->owner_id != owner_id) continue;
      std::string id = StringMember(run->record, "id");
      if (tree.count(id) && run->requested) continue;
      // Its root too: the ancestors between may run in other processes (docs/deploy.md).
      if (tree.count(id) || tree.count(StringMember(run->record, "parent_execution_id")) ||
          StringMember(run->record, "root_execution_id") == execution_id) {
        if (!run->requested) ++told;
        run->Cancel();
        grew = tree.insert(id).second || grew;
      }
    }
  }
  return told;
}

std::optional<json::object> RunRegistry::Find(const std::string& owner_id, const std::string& execution_id) const {
  std::lock_guard lock(mu_);
  auto it = by_id_.find(Key(owner_id, execution_id));
  if (it == by_id_.end()) return std::nullopt;
  return it->second->record;
}

std::vector<json::object> RunRegistry::InFlight(const std::string& owner_id, const std::string& root_execution_id) const {
  std::lock_guard lock(mu_);
  std::vector<json::object> out;
  for (const auto& [key, run] : by_id_) {
    if (run->owner_id != owner_id) continue;
    if (!root_execution_id.empty() && StringMember(run->record, "root_execution_id") != root_execution_id) continue;
    out.push_back(run->record);
  }
  return out;
}

void RunRegistry::RecentIds::Remember(const std::string& id) {
  if (!set.insert(id).second) return;
  order.push_back(id);
  if (order.size() > kRemembered) {
    set.erase(order.front());
    order.pop_front();
  }
}

}  // namespace cairn::exec
