// ResponseWaiter: waits for the answers to requests a run wrote — tool.response.v1 to an agent's
// or a workflow step's tool requests, workflow.result.v1 to a step's workflow requests,
// agent.response.v1 to a step's messages to an agent — event-driven (woken by the bus, never
// polling the store).
//
// Create it BEFORE writing the requests: it remembers the bus position and subscribes at once, so
// an answer committed after that is read from the bus. Answers that may be older (a resumed
// execution whose requests were written before a crash) are found with `look_in_store`.
#pragma once

#include <atomic>
#include <boost/json/object.hpp>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bus/event_bus.h"
#include "model/reserved.h"
#include "store/store.h"

namespace cairn::exec {

// Which answers count: records of `schema` whose context names the request (`request_id`) and
// the executor asked in `source_field`, tagged "<source_tag>:<name>".
struct ResponseKind {
  std::string_view schema;
  std::string_view source_field;
  std::string_view source_tag;
};
inline constexpr ResponseKind kToolResponses{model::kToolResponseSchema, "tool", "tool"};
inline constexpr ResponseKind kWorkflowResults{model::kWorkflowResultSchema, "workflow", "workflow"};
inline constexpr ResponseKind kAgentResponses{model::kAgentResponseSchema, "agent_id", "agent"};

class ResponseWaiter {
 public:
  ResponseWaiter(store::Store& store, bus::EventBus& bus, std::string owner_id, ResponseKind kind = kToolResponses);
  // Waits for answers of any of `kinds` (an agent's tool responses and its sub-agents' answers);
  // a request id is answered by whichever kind names it first.
  ResponseWaiter(store::Store& store, bus::EventBus& bus, std::string owner_id, std::vector<ResponseKind> kinds);
  ResponseWaiter(const ResponseWaiter&) = delete;
  ResponseWaiter& operator=(const ResponseWaiter&) = delete;

  // The stored answer (its context) to `request_id` from `source` (any when empty), if there is one.
  static Result<std::optional<boost::json::object>> FindStored(store::Store& store, const std::string& owner_id,
                                                              const std::string& request_id, const std::string& source,
                                                              ResponseKind kind = kToolResponses);

  // Events that end a Wait early, which then returns what is still unanswered (an orchestrator's
  // sub-agent task that starts waiting for its user). Evaluated on the bus's thread too: cheap.
  void InterruptOn(std::function<bool(const model::Event&)> interrupt);

  // Calls `on_answer(request_id, response context)` for each request of `requests` (request id →
  // the executor asked) as its answer is found, until all are answered, the deadline passes or
  // `cancelled` (or `also_cancelled`, when given) is set. Only an answer from the executor asked counts: another tool whose
  // selectors took the request, or a request of someone else's that reused the id, does not.
  // Returns the ids still unanswered. Errors only from reading the bus or the store.
  Result<std::set<std::string>> Wait(std::map<std::string, std::string> requests, bool look_in_store,
                                     std::chrono::steady_clock::time_point deadline, const std::atomic<bool>& cancelled,
                                     const std::function<void(const std::string&, const boost::json::object&)>& on_answer,
                                     const std::atomic<bool>* also_cancelled = nullptr);

 private:
  store::Store& store_;
  bus::EventBus& bus_;
  std::string owner_id_;
  std::vector<ResponseKind> kinds_;
  const ResponseKind* KindOf(const model::Event& event) const;
  int64_t after_seq_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool woken_ = true;
  // The request ids a Wait waits for: only their answers wake it (asked on the bus's thread).
  std::mutex awaited_mu_;
  std::set<std::string> awaited_;
  std::function<bool(const model::Event&)> interrupt_;
  std::unique_ptr<bus::Subscription> subscription_;
};

}  // namespace cairn::exec
