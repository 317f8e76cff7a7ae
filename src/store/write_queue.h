// WriteQueue: the bounded queue in front of a store's single writer thread (SQLite's
// GroupCommitWriter, PostgreSQL's PgWriter). Callers queue write closures; the writer thread takes
// them in batches of at most `max_batch` and reports each one's Status through its `done`.
// CommitListenerSlot: the one listener a writer calls after each commit.
//
// Both writers are one design on two databases: what differs is how a batch is committed, which
// stays with each of them.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "model/event.h"

namespace cairn::store {

template <typename WriteFn>
class WriteQueue {
 public:
  struct Pending {
    WriteFn fn;
    std::function<void(Status)> done;
  };

  WriteQueue(size_t max_batch, size_t max_queue) : max_batch_(max_batch), max_queue_(max_queue) {}

  // Queues `fn` and waits for the Status its batch reports. kResourceExhausted when the queue is
  // full, kUnavailable after Close().
  Status Submit(WriteFn fn) {
    auto promise = std::make_shared<std::promise<Status>>();
    std::future<Status> result = promise->get_future();
    CAIRN_RETURN_IF_ERROR(Enqueue(Pending{std::move(fn), [promise](Status status) { promise->set_value(std::move(status)); }}));
    return result.get();
  }

  // Queues `fn` without waiting: `done` (may be empty) gets its Status on the writer thread, or at
  // once on the caller's thread when the write is refused.
  void Post(WriteFn fn, std::function<void(Status)> done) {
    if (!done) done = [](const Status&) {};
    Status queued = Enqueue(Pending{std::move(fn), done});
    if (!queued.ok()) done(std::move(queued));
  }

  // The writer thread's loop: calls `commit` with each batch, in queue order, and returns once
  // Close() was called and nothing is left.
  void Drain(const std::function<void(std::deque<Pending>&)>& commit) {
    while (true) {
      std::deque<Pending> batch;
      {
        std::unique_lock lock(mu_);
        wake_.wait(lock, [this] { return closing_ || !queue_.empty(); });
        if (queue_.empty()) return;  // closing with nothing left
        while (!queue_.empty() && batch.size() < max_batch_) {
          batch.push_back(std::move(queue_.front()));
          queue_.pop_front();
        }
      }
      commit(batch);
    }
  }

  // Refuses later writes; what is queued is still drained. Idempotent.
  void Close() {
    {
      std::lock_guard lock(mu_);
      closing_ = true;
    }
    wake_.notify_one();
  }

 private:
  Status Enqueue(Pending pending) {
    {
      std::lock_guard lock(mu_);
      if (closing_) return Status::Unavailable("store is closed");
      if (queue_.size() >= max_queue_) {
        return Status::ResourceExhausted("write queue is full (" + std::to_string(max_queue_) + " pending)");
      }
      queue_.push_back(std::move(pending));
    }
    wake_.notify_one();
    return Status::Ok();
  }

  const size_t max_batch_;
  const size_t max_queue_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<Pending> queue_;
  bool closing_ = false;
};

// The listener a writer calls after each commit in which a write succeeded, with the events the
// commit appended. Set() returns only when no call of the previous listener is running, so whatever
// it captured may be destroyed then; a listener must not call Set() itself.
class CommitListenerSlot {
 public:
  using Listener = std::function<void(std::vector<model::Event>)>;
  void Set(Listener listener) {
    std::lock_guard lock(mu_);
    listener_ = std::move(listener);
  }
  void Call(std::vector<model::Event> events) {
    std::lock_guard lock(mu_);
    if (listener_) listener_(std::move(events));
  }

 private:
  std::mutex mu_;  // held while the listener runs and while it is replaced; not the queue's
  Listener listener_;
};

}  // namespace cairn::store
