// ToolResponseWaiter: waits for the tool.response.v1 answers to an agent's tool requests,
// event-driven (woken by the bus, never polling the store).
//
// Create it BEFORE writing the requests: it remembers the bus position and subscribes at once, so
// an answer committed after that is read from the bus. Answers that may be older (a resumed
// execution whose requests were written before a crash) are found with `look_in_store`.
#pragma once

#include <atomic>
#include <boost/json/object.hpp>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "bus/event_bus.h"
#include "store/store.h"

namespace cairn::exec {

class ToolResponseWaiter {
 public:
  ToolResponseWaiter(store::Store& store, bus::EventBus& bus, std::string owner_id);
  ToolResponseWaiter(const ToolResponseWaiter&) = delete;
  ToolResponseWaiter& operator=(const ToolResponseWaiter&) = delete;

  // The stored answer (tool.response.v1 context) to `request_id` from `tool` (any tool when
  // empty), if there is one.
  static Result<std::optional<boost::json::object>> FindStored(store::Store& store, const std::string& owner_id,
                                                              const std::string& request_id, const std::string& tool);

  // Calls `on_answer(request_id, response context)` for each request of `requests` (request id →
  // the tool asked) as its answer is found, until all are answered, the deadline passes or
  // `cancelled` is set. Only an answer from the tool asked counts: another tool whose selectors
  // took the request, or a request of someone else's that reused the id, does not answer it.
  // Returns the ids still unanswered. Errors only from reading the bus or the store.
  Result<std::set<std::string>> Wait(std::map<std::string, std::string> requests, bool look_in_store,
                                     std::chrono::steady_clock::time_point deadline, const std::atomic<bool>& cancelled,
                                     const std::function<void(const std::string&, const boost::json::object&)>& on_answer);

 private:
  store::Store& store_;
  bus::EventBus& bus_;
  std::string owner_id_;
  int64_t after_seq_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool woken_ = true;
  std::unique_ptr<bus::Subscription> subscription_;
};

}  // namespace cairn::exec
