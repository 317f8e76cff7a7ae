// CompactQueue: a first-in first-out queue that holds little memory while it is empty (internal).
//
// An event stream keeps two queues (frames to write, ephemeral frames held back), and a server
// keeps thousands of idle streams: std::deque allocates about 600 bytes even when empty, a
// vector nothing. The items live in a vector with a moving head; a drained queue keeps its
// capacity for the next burst only up to kKeptCapacity items (else it frees it), and the slots
// before the head are reclaimed once they are half of the vector.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace cairn::server {

template <typename T>
class CompactQueue {
 public:
  bool empty() const { return head_ == items_.size(); }
  size_t size() const { return items_.size() - head_; }

  void push_back(T item) {
    if (head_ > 0 && head_ * 2 >= items_.size()) {  // the spent front is half the vector: reclaim it
      items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
    items_.push_back(std::move(item));
  }

  // The oldest item; the queue must not be empty.
  T& front() { return items_[head_]; }
  // The i-th oldest item, i < size().
  T& operator[](size_t i) { return items_[head_ + i]; }
  const T& operator[](size_t i) const { return items_[head_ + i]; }

  // Removes the oldest item; the queue must not be empty.
  void pop_front() {
    items_[head_] = T{};  // let go of what it holds now, not when the slot is reclaimed
    if (++head_ == items_.size()) Clear();
  }

  // Keeps the `count` oldest items and removes the rest.
  void truncate(size_t count) {
    if (count >= size()) return;
    items_.resize(head_ + count);
    if (empty()) Clear();
  }

 private:
  static constexpr size_t kKeptCapacity = 8;

  void Clear() {
    head_ = 0;
    if (items_.capacity() > kKeptCapacity) {
      std::vector<T>().swap(items_);
    } else {
      items_.clear();
    }
  }

  std::vector<T> items_;
  size_t head_ = 0;  // index of the oldest item
};

}  // namespace cairn::server
