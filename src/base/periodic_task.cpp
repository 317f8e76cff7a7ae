#include "base/periodic_task.h"

namespace cairn {

PeriodicTask::PeriodicTask(std::chrono::milliseconds interval, std::function<void()> task) {
  thread_ = std::thread([this, interval, task = std::move(task)] {
    std::unique_lock lock(mu_);
    while (!wake_.wait_for(lock, interval, [this] { return stopping_; })) {
      lock.unlock();
      task();
      lock.lock();
    }
  });
}

PeriodicTask::~PeriodicTask() { Stop(); }

void PeriodicTask::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace cairn
