// Stand-ins for the store and the bus, for tests of code that takes them but whose subject is
// elsewhere (routes, streams).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bus/event_bus.h"
#include "store/store.h"

namespace cairn::test_support {

// A store that holds nothing: Get is NotFound, List is empty, writes fail with Internal("unused").
class NullStore final : public store::Store {
 public:
  Result<store::CreateResult> Create(const model::WriteContext&, const model::BreadcrumbDraft&, const std::string&) override {
    return Status::Internal("unused");
  }
  Result<model::Breadcrumb> Get(const std::string&, const std::string& id) override {
    return Status::NotFound(id + " not found");
  }
  Result<model::Breadcrumb> Update(const model::WriteContext&, const std::string&, const model::BreadcrumbPatch&,
                                   std::optional<int64_t>) override {
    return Status::Internal("unused");
  }
  Status Delete(const model::WriteContext&, const std::string&, std::optional<int64_t>) override {
    return Status::Internal("unused");
  }
  Result<std::vector<store::WriteOutcome>> Apply(const model::WriteContext&, const std::vector<store::WriteOp>&) override {
    return Status::Internal("unused");
  }
  Result<store::Page> List(const std::string&, const model::BreadcrumbQuery&) override { return store::Page{}; }
  Result<std::vector<model::BreadcrumbVersion>> History(const std::string&, const std::string&) override {
    return Status::Internal("unused");
  }
  Result<int64_t> SweepExpired() override { return int64_t{0}; }
  Result<store::StoreStats> Stats() override { return store::StoreStats{}; }
  void Close() override {}
};

// A bus whose log retains seqs [first, last] (for resume points) and never publishes anything.
class FixedBoundsBus final : public bus::EventBus {
 public:
  FixedBoundsBus(int64_t first, int64_t last) : bounds_{first, last} {}
  Result<std::vector<bus::EventPtr>> Read(int64_t, size_t) override { return std::vector<bus::EventPtr>{}; }
  bool InWindow(int64_t) const override { return true; }
  int64_t LastSeq() const override { return bounds_.last_seq; }
  Result<store::EventLogBounds> Bounds() override { return bounds_; }
  std::unique_ptr<bus::Subscription> Subscribe(std::function<void()>) override { return nullptr; }

 private:
  store::EventLogBounds bounds_;
};

}  // namespace cairn::test_support
