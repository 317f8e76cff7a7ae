// ExecutorHost (exec/executor_host.h) with a scripted test Executor, on the real SqliteStore (also
// the EventLog and the CursorStore) and LocalEventBus, each test in a fresh temporary directory.
//
// Results are awaited by polling the store for a condition up to a deadline (WaitFor); no fixed
// sleep is ever the assertion. "Nothing happened" is shown with a sentinel trigger written after
// the events under test: with concurrency 1 the consumer dispatches in log order and only starts
// the sentinel's run once every earlier run has finished, so once the sentinel is answered every
// earlier event has been fully handled.
#include "exec/executor_host.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/metrics.h"
#include "base/shard.h"
#include "bus/local_event_bus.h"
#include "exec/execution_record.h"
#include "store/sqlite/sqlite_store.h"
#include "support/sqlite_store.h"

namespace cairn::exec {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

constexpr char kActor[] = "tool:test";
constexpr char kConsumer[] = "exec:test";

// Waits until `pred` holds or `timeout` passes; returns whether it held.
template <typename Pred>
bool WaitFor(Pred pred, std::chrono::milliseconds timeout = 5000ms) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(2ms);
  }
  return true;
}

// Records every call; answers with a test.response.v1 tagged re:<trigger id>, or does what
// `behavior` says. Refusals answer with the code and mark the execution failed (as the tool
// executor does).
class TestExecutor final : public Executor {
 public:
  struct Call {
    std::string trigger_id;
    std::string type;
    std::string title;
    std::string execution_id;
    json::object context;
  };
  struct Refusal {
    std::string trigger_id;
    std::string code;
    std::string message;
  };

  explicit TestExecutor(std::string name = "a") : name_(std::move(name)) {}

  // Set before the executor is handed to the host; never changed afterwards.
  std::function<RunResult(const RunRequest&)> behavior;

  RunResult Run(const RunRequest& request) override {
    {
      std::lock_guard lock(mu_);
      calls_.push_back({request.trigger_event.breadcrumb_id, request.trigger_event.type, request.trigger_event.title,
                        request.execution_id, request.context});
    }
    if (behavior) return behavior(request);
    return Answer(request, "ok");
  }

  RunResult Refuse(const RunRequest& request, const std::string& code, const std::string& message) override {
    {
      std::lock_guard lock(mu_);
      refusals_.push_back({request.trigger_event.breadcrumb_id, code, message});
    }
    RunResult result = Answer(request, "refused");
    result.response.context.as_object()["code"] = code;
    result.failed = true;
    result.error_message = code + ": " + message;
    return result;
  }

  RunResult Answer(const RunRequest& request, const std::string& status) const {
    RunResult result;
    result.response.schema_name = "test.response.v1";
    result.response.title = "answer";
    result.response.tags = {"re:" + request.trigger_event.breadcrumb_id};
    result.response.context =
        json::object{{"trigger_id", request.trigger_event.breadcrumb_id}, {"status", status}, {"executor", name_}};
    return result;
  }

  std::vector<Call> Calls() {
    std::lock_guard lock(mu_);
    return calls_;
  }
  std::vector<std::string> CalledIds() {
    std::vector<std::string> ids;
    for (const auto& call : Calls()) ids.push_back(call.trigger_id);
    return ids;
  }
  std::vector<Refusal> Refusals() {
    std::lock_guard lock(mu_);
    return refusals_;
  }

 private:
  std::string name_;
  std::mutex mu_;
  std::vector<Call> calls_;
  std::vector<Refusal> refusals_;
};

model::Subscription TriggerOn(std::string schema, std::vector<std::string> types = {}) {
  model::Subscription sub;
  sub.role = model::SubscriptionRole::kTrigger;
  sub.selector.schema_name = std::move(schema);
  sub.selector.types = std::move(types);
  return sub;
}

ExecutorSpec Spec(int concurrency = 1, std::vector<model::Subscription> subs = {TriggerOn("task.v1")}) {
  ExecutorSpec spec;
  spec.consumer_id = kConsumer;
  spec.actor = kActor;
  spec.kind = "tool";
  spec.name = "test";
  spec.subscriptions = std::move(subs);
  spec.concurrency = concurrency;
  spec.timeout = 5000ms;
  return spec;
}

HostOptions Options() {
  HostOptions o;
  o.max_depth = 3;
  o.cursor_save_interval = 10ms;
  return o;
}

struct TriggerOpts {
  std::string schema = "task.v1";
  std::string owner = "default";
  std::string actor = "alice";
  std::optional<int64_t> depth;  // set: written as a non-root with this trace depth
  TriggerOpts& Schema(std::string v) {
    schema = std::move(v);
    return *this;
  }
  TriggerOpts& Owner(std::string v) {
    owner = std::move(v);
    return *this;
  }
  TriggerOpts& Actor(std::string v) {
    actor = std::move(v);
    return *this;
  }
  TriggerOpts& Depth(int64_t v) {
    depth = v;
    return *this;
  }
};

class ExecutorHostTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(store_.Open(clock_, &metrics_));
    ASSERT_TRUE(test_support::StartLocalBus(*store_, bus_));
  }
  void TearDown() override {
    host_.reset();  // stops before the bus and the store it uses
    bus_.reset();
    store_.Close();
  }

  // A new host (replacing, and so stopping, any previous one) on the same store and bus.
  ExecutorHost& StartHost(HostOptions options = Options()) {
    host_.reset();
    host_ = std::make_unique<ExecutorHost>(*store_, *store_, *store_, *bus_, clock_, runtime_, options, &metrics_);
    return *host_;
  }
  void Upsert(ExecutorSpec spec, std::shared_ptr<Executor> executor, int64_t start_seq = 0) {
    Status s = host_->Upsert(std::move(spec), std::move(executor), start_seq);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  model::Breadcrumb Write(std::string title, const TriggerOpts& o = {}) {
    model::BreadcrumbDraft draft;
    draft.schema_name = o.schema;
    draft.title = std::move(title);
    draft.context = json::object{{"q", draft.title}};
    if (o.depth) draft.trace = model::Trace{"trace-" + draft.title, "parent-of-" + draft.title, *o.depth};
    auto created = store_->Create(model::WriteContext{o.owner, o.actor}, draft, "");
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return created.ok() ? created->breadcrumb : model::Breadcrumb{};
  }

  int64_t LastSeq() { return store_->Stats().value().last_event_seq; }

  // The event that wrote `crumb` at its current version.
  model::Event EventOf(const model::Breadcrumb& crumb) {
    int64_t after = 0;
    while (true) {
      auto events = store_->ReadEvents(after, 500);
      EXPECT_TRUE(events.ok());
      if (!events.ok() || events->empty()) break;
      for (auto& e : *events) {
        if (e.breadcrumb_id == crumb.id && e.version == crumb.version && e.type != "breadcrumb.deleted") return e;
        after = e.seq;
      }
    }
    ADD_FAILURE() << "no event for " << crumb.id;
    return {};
  }

  // Every event whose trace says it was caused by `id` (claims and responses both are).
  std::vector<model::Event> EventsCausedBy(const std::string& id) {
    std::vector<model::Event> out;
    auto events = store_->ReadEvents(0, 100000);
    EXPECT_TRUE(events.ok());
    if (events.ok()) {
      for (auto& e : *events) {
        if (e.trace.caused_by == id) out.push_back(e);
      }
    }
    return out;
  }

  std::optional<model::Breadcrumb> Execution(const ExecutorSpec& spec, const std::string& trigger_id,
                                             int64_t version = 1, const std::string& type = "breadcrumb.created") {
    model::BreadcrumbQuery query;
    model::Event trigger;  // the key is the id, the version and whether it is a deletion
    trigger.type = type;
    trigger.breadcrumb_id = trigger_id;
    trigger.version = version;
    query.path = ExecutionRecordPath(ExecutionIdFor(spec, trigger));
    query.include_context = true;
    auto page = store_->List(spec.owner_id, query);
    EXPECT_TRUE(page.ok()) << page.status().ToString();
    if (!page.ok() || page->items.empty()) return std::nullopt;
    return page->items.front();
  }

  // The execution record of the trigger once it is written (runs are recorded when they finish).
  model::Breadcrumb WaitFinished(const ExecutorSpec& spec, const std::string& trigger_id, int64_t version = 1,
                                const std::string& type = "breadcrumb.created") {
    std::optional<model::Breadcrumb> record;
    bool done = WaitFor([&] {
      record = Execution(spec, trigger_id, version, type);
      return record.has_value();
    });
    EXPECT_TRUE(done) << "execution of " << trigger_id << " did not finish";
    return record.value_or(model::Breadcrumb{});
  }

  std::vector<model::Breadcrumb> Responses(const std::string& trigger_id) {
    model::BreadcrumbQuery query;
    query.all_tags = {"re:" + trigger_id};
    query.include_context = true;
    auto page = store_->List("default", query);
    EXPECT_TRUE(page.ok());
    return page.ok() ? page->items : std::vector<model::Breadcrumb>{};
  }

  static std::string Str(const json::value& context, std::string_view key) {
    const json::value* v = context.as_object().if_contains(key);
    return v && v->is_string() ? std::string(v->as_string()) : "";
  }
  static int64_t Int(const json::value& context, std::string_view key) {
    const json::value* v = context.as_object().if_contains(key);
    return v && v->is_int64() ? v->as_int64() : -1;
  }
  static bool HasTag(const model::Breadcrumb& crumb, const std::string& tag) {
    return std::find(crumb.tags.begin(), crumb.tags.end(), tag) != crumb.tags.end();
  }

  const Clock& clock_ = SystemClock::Instance();  // durations in execution records are real
  MetricsRegistry metrics_;
  test_support::TempSqliteStore store_{"cairn-host-test"};
  std::unique_ptr<bus::LocalEventBus> bus_;
  Runtime runtime_{RuntimeOptions{4, 8}};  // outlives the hosts: each stops its own runs
  std::unique_ptr<ExecutorHost> host_;
};

TEST_F(ExecutorHostTest, TriggerRunsOnceWithContextAndWritesResponseAndExecution) {
  model::Subscription config = TriggerOn("config.v1");
  config.role = model::SubscriptionRole::kContext;
  config.key = "config";
  config.fetch = model::FetchMethod::kLatest;
  ExecutorSpec spec = Spec(1, {TriggerOn("task.v1"), config});
  model::Breadcrumb cfg = Write("cfg", TriggerOpts().Schema("config.v1"));  // context, not a trigger
  auto exec = std::make_shared<TestExecutor>();
  StartHost();
  Upsert(spec, exec);

  model::Breadcrumb t = Write("t", TriggerOpts().Depth(1));
  model::Breadcrumb record = WaitFinished(spec, t.id);
  EXPECT_EQ(record.schema_name, std::string(kExecutionSchema));
  EXPECT_EQ(ExecutionStatus(record.context), "completed");
  EXPECT_EQ(Int(record.context, "attempt"), 1);
  const json::object& trigger = record.context.as_object().at("trigger").as_object();
  EXPECT_EQ(Str(trigger, "breadcrumb_id"), t.id);
  EXPECT_GT(Int(trigger, "seq"), 0);
  EXPECT_EQ(Str(record.context, "executor"), spec.name);
  EXPECT_EQ(Str(record.context, "root_execution_id"), Str(record.context, "id")) << "a bus-triggered run is a root";
  EXPECT_TRUE(record.context.as_object().at("parent_execution_id").is_null());
  EXPECT_TRUE(record.context.as_object().at("error").is_null());
  EXPECT_TRUE(HasTag(record, "status:completed"));
  EXPECT_EQ(record.updated_by, kActor);

  std::vector<model::Breadcrumb> responses = Responses(t.id);
  ASSERT_EQ(responses.size(), 1u);
  const model::Breadcrumb& response = responses[0];
  EXPECT_EQ(response.trace.caused_by, t.id);
  EXPECT_EQ(response.trace.depth, 2);  // trigger depth + 1
  EXPECT_EQ(response.trace.trace_id, "trace-t");
  EXPECT_EQ(response.created_by, kActor);

  std::vector<TestExecutor::Call> calls = exec->Calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ("executions/" + calls[0].execution_id, record.path.value_or(""));
  EXPECT_EQ(calls[0].context.at("trigger").as_object().at("id").as_string(), t.id);
  ASSERT_TRUE(calls[0].context.contains("config"));
  EXPECT_EQ(calls[0].context.at("config").as_object().at("id").as_string(), cfg.id);

  // Exactly once: after a later trigger has been answered, t still ran once.
  model::Breadcrumb sentinel = Write("sentinel");
  WaitFinished(spec, sentinel.id);
  EXPECT_EQ(exec->CalledIds(), (std::vector<std::string>{t.id, sentinel.id}));
  EXPECT_EQ(Responses(t.id).size(), 1u);
}

TEST_F(ExecutorHostTest, FailedRunAndNoResponse) {
  auto exec = std::make_shared<TestExecutor>();
  exec->behavior = [raw = exec.get()](const RunRequest& r) {
    RunResult result = raw->Answer(r, "ok");
    if (r.trigger_event.title == "fail") {
      result.failed = true;
      result.error_message = "boom";
    } else {
      result.respond = false;
    }
    return result;
  };
  ExecutorSpec spec = Spec();
  StartHost();
  Upsert(spec, exec);

  model::Breadcrumb failing = Write("fail");
  model::Breadcrumb silent = Write("silent");
  model::Breadcrumb failed = WaitFinished(spec, failing.id);
  EXPECT_EQ(ExecutionStatus(failed.context), "failed");
  EXPECT_EQ(Str(failed.context.as_object().at("error"), "message"), "boom");
  EXPECT_TRUE(HasTag(failed, "status:failed"));
  EXPECT_EQ(Responses(failing.id).size(), 1u);  // a failed run still answers

  model::Breadcrumb quiet = WaitFinished(spec, silent.id);
  EXPECT_EQ(ExecutionStatus(quiet.context), "completed");
  EXPECT_TRUE(Responses(silent.id).empty());
}

TEST_F(ExecutorHostTest, NotTriggeredByOtherOwnersItselfOtherSchemasOrDeletions) {
  auto exec = std::make_shared<TestExecutor>();
  ExecutorSpec spec = Spec();
  StartHost();
  Upsert(spec, exec);

  model::Breadcrumb deleted = Write("deleted-later");
  WaitFinished(spec, deleted.id);  // its creation is a trigger
  model::Breadcrumb other_owner = Write("other-owner", TriggerOpts().Owner("acme"));
  model::Breadcrumb own = Write("own", TriggerOpts().Actor(kActor));
  model::Breadcrumb other_schema = Write("other-schema", TriggerOpts().Schema("note.v1"));
  ASSERT_TRUE(store_->Delete(model::WriteContext{"default", "alice"}, deleted.id, std::nullopt).ok());
  model::Breadcrumb sentinel = Write("sentinel");
  WaitFinished(spec, sentinel.id);

  EXPECT_EQ(exec->CalledIds(), (std::vector<std::string>{deleted.id, sentinel.id}));
  for (const auto& id : {other_owner.id, own.id, other_schema.id}) {
    EXPECT_TRUE(EventsCausedBy(id).empty()) << id;  // no claim, no response
  }
  EXPECT_TRUE(exec->Refusals().empty());
}

TEST_F(ExecutorHostTest, DeletionTriggersWhenTheSelectorAsksForIt) {
  auto exec = std::make_shared<TestExecutor>();
  ExecutorSpec spec = Spec(1, {TriggerOn("task.v1", {"breadcrumb.deleted"})});
  StartHost();
  Upsert(spec, exec);

  model::Breadcrumb doomed = Write("doomed");  // a creation: not asked for
  ASSERT_TRUE(store_->Delete(model::WriteContext{"default", "alice"}, doomed.id, std::nullopt).ok());
  model::Breadcrumb record = WaitFinished(spec, doomed.id, 1, "breadcrumb.deleted");
  EXPECT_EQ(ExecutionStatus(record.context), "completed");
  std::vector<TestExecutor::Call> calls = exec->Calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].trigger_id, doomed.id);
  EXPECT_EQ(calls[0].type, "breadcrumb.deleted");
}

// A selector that asks for creations and deletions runs for both. The deletion event carries the
// record's last version, which is also the version its creation (or last update) was claimed at.
TEST_F(ExecutorHostTest, SelectorWithCreatedAndDeletedRunsForBoth) {
  auto exec = std::make_shared<TestExecutor>();
  ExecutorSpec spec = Spec(1, {TriggerOn("task.v1", {"breadcrumb.created", "breadcrumb.deleted"})});
  StartHost();
  Upsert(spec, exec);

  model::Breadcrumb doomed = Write("doomed");
  WaitFinished(spec, doomed.id);
  ASSERT_TRUE(store_->Delete(model::WriteContext{"default", "alice"}, doomed.id, std::nullopt).ok());
  model::Breadcrumb sentinel = Write("sentinel");
  WaitFinished(spec, sentinel.id);

  std::vector<std::string> types;
  for (const auto& call : exec->Calls()) types.push_back(call.type + " " + call.title);
  EXPECT_EQ(types, (std::vector<std::string>{"breadcrumb.created doomed", "breadcrumb.deleted doomed",
                                             "breadcrumb.created sentinel"}))
      << "the deletion of a record whose creation ran is never run (same claim path and response key)";
}

TEST_F(ExecutorHostTest, DepthGuardRefusesAtMaxAndDropsBeyond) {
  auto exec = std::make_shared<TestExecutor>();
  ExecutorSpec spec = Spec();
  StartHost();  // max_depth 3
  Upsert(spec, exec);

  model::Breadcrumb at_max = Write("at-max", TriggerOpts().Depth(3));
  model::Breadcrumb record = WaitFinished(spec, at_max.id);
  EXPECT_EQ(ExecutionStatus(record.context), "failed");  // the refusal says so
  EXPECT_EQ(Str(record.context.as_object().at("error"), "code"), "depth_exceeded");
  std::vector<model::Breadcrumb> responses = Responses(at_max.id);
  ASSERT_EQ(responses.size(), 1u);
  EXPECT_EQ(Str(responses[0].context, "code"), "depth_exceeded");
  EXPECT_EQ(responses[0].trace.depth, 4);
  ASSERT_EQ(exec->Refusals().size(), 1u);
  EXPECT_EQ(exec->Refusals()[0].code, "depth_exceeded");
  EXPECT_TRUE(exec->Calls().empty());  // Run never called

  model::Breadcrumb beyond = Write("beyond", TriggerOpts().Depth(4));
  model::Breadcrumb sentinel = Write("sentinel", TriggerOpts().Depth(2));  // below the limit: runs
  WaitFinished(spec, sentinel.id);
  EXPECT_TRUE(EventsCausedBy(beyond.id).empty());  // no claim, no answer: nothing written
  EXPECT_EQ(exec->CalledIds(), (std::vector<std::string>{sentinel.id}));
  EXPECT_EQ(exec->Refusals().size(), 1u);
}

TEST_F(ExecutorHostTest, TimeoutCancelsTheRunAndRefuses) {
  auto exec = std::make_shared<TestExecutor>();
  exec->behavior = [raw = exec.get()](const RunRequest& r) {
    WaitFor([&] { return r.cancelled.load(); });  // a run that only ends when cancelled
    return raw->Answer(r, "late");
  };
  ExecutorSpec spec = Spec();
  spec.timeout = 100ms;
  StartHost();
  Upsert(spec, exec);

  model::Breadcrumb t = Write("slow");
  model::Breadcrumb record = WaitFinished(spec, t.id);
  EXPECT_EQ(ExecutionStatus(record.context), "failed");
  EXPECT_EQ(Str(record.context.as_object().at("error"), "code"), "timeout");
  std::vector<model::Breadcrumb> responses = Responses(t.id);
  ASSERT_EQ(responses.size(), 1u);  // the refusal, not the late answer
  EXPECT_EQ(Str(responses[0].context, "code"), "timeout");
  EXPECT_EQ(exec->Calls().size(), 1u);
  ASSERT_EQ(exec->Refusals().size(), 1u);
  EXPECT_EQ(exec->Refusals()[0].code, "timeout");
}

TEST_F(ExecutorHostTest, ConcurrencyIsBoundedAndEveryTriggerAnswered) {
  // Each run waits (bounded) until another run is in flight too, or all five have started, so a
  // host that allows 2 at once reaches 2 deterministically and one that allows more shows it.
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    int current = 0;
    int max_seen = 0;
    int started = 0;
  };
  auto state = std::make_shared<State>();
  auto exec = std::make_shared<TestExecutor>();
  exec->behavior = [raw = exec.get(), state](const RunRequest& r) {
    std::unique_lock lock(state->mu);
    state->max_seen = std::max(state->max_seen, ++state->current);
    ++state->started;
    state->cv.notify_all();
    state->cv.wait_for(lock, 2s, [&] { return state->current >= 2 || state->started == 5; });
    --state->current;
    state->cv.notify_all();
    return raw->Answer(r, "ok");
  };
  ExecutorSpec spec = Spec(2);
  StartHost();
  Upsert(spec, exec);

  // One transaction, so all five are readable at once and the consumer could dispatch them all.
  std::vector<store::WriteOp> ops;
  for (int i = 0; i < 5; ++i) {
    model::BreadcrumbDraft d;
    d.schema_name = "task.v1";
    d.title = "t" + std::to_string(i);
    ops.push_back(store::WriteOp::Create(d));
  }
  auto written = store_->Apply(model::WriteContext{"default", "alice"}, ops);
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  for (const auto& outcome : *written) {
    model::Breadcrumb record = WaitFinished(spec, outcome.breadcrumb.id);
    EXPECT_EQ(ExecutionStatus(record.context), "completed");
    EXPECT_EQ(Responses(outcome.breadcrumb.id).size(), 1u);
  }
  EXPECT_EQ(exec->Calls().size(), 5u);
  std::lock_guard lock(state->mu);
  EXPECT_LE(state->max_seen, 2);
  EXPECT_EQ(state->max_seen, 2);
}

TEST_F(ExecutorHostTest, HigherPriorityTriggersReadTogetherStartFirst) {
  model::Subscription low = TriggerOn("task.v1");
  model::Subscription high = TriggerOn("urgent.v1");
  high.priority = 10;
  ExecutorSpec spec = Spec(/*concurrency=*/1, {low, high});
  // Written before the executor starts: it reads them in one batch.
  model::Breadcrumb a = Write("a");
  model::Breadcrumb b = Write("b");
  model::Breadcrumb urgent = Write("urgent", TriggerOpts().Schema("urgent.v1"));
  model::Breadcrumb c = Write("c");
  auto exec = std::make_shared<TestExecutor>();
  StartHost();
  Upsert(spec, exec);
  WaitFinished(spec, c.id);
  WaitFinished(spec, urgent.id);
  EXPECT_EQ(exec->CalledIds(), (std::vector<std::string>{urgent.id, a.id, b.id, c.id}));

  // After a restart nothing runs again: the cursor never passed a trigger not yet claimed.
  host_.reset();
  auto again = std::make_shared<TestExecutor>();
  StartHost();
  Upsert(spec, again);
  model::Breadcrumb sentinel = Write("sentinel");
  WaitFinished(spec, sentinel.id);
  EXPECT_EQ(again->CalledIds(), (std::vector<std::string>{sentinel.id}));
}

TEST_F(ExecutorHostTest, DurableCursorAcrossHostRestart) {
  ExecutorSpec spec = Spec();
  auto first = std::make_shared<TestExecutor>("first");
  StartHost();
  Upsert(spec, first);
  model::Breadcrumb a = Write("a");
  model::Breadcrumb b = Write("b");
  WaitFinished(spec, a.id);
  WaitFinished(spec, b.id);
  host_.reset();  // Stop: the cursor is saved
  auto cursor = store_->LoadCursor(kConsumer);
  ASSERT_TRUE(cursor.ok() && cursor->has_value());
  EXPECT_GE(**cursor, EventOf(b).seq);

  model::Breadcrumb c = Write("c");
  model::Breadcrumb d = Write("d");
  auto second = std::make_shared<TestExecutor>("second");
  StartHost();
  // start_seq past everything: only the stored cursor can make c and d run.
  Upsert(spec, second, LastSeq());
  WaitFinished(spec, c.id);
  WaitFinished(spec, d.id);
  EXPECT_EQ(first->CalledIds(), (std::vector<std::string>{a.id, b.id}));
  EXPECT_EQ(second->CalledIds(), (std::vector<std::string>{c.id, d.id}));
  EXPECT_EQ(Responses(a.id).size(), 1u);
}

TEST_F(ExecutorHostTest, DurableCursorAcrossRemove) {
  ExecutorSpec spec = Spec();
  auto first = std::make_shared<TestExecutor>("first");
  StartHost();
  Upsert(spec, first);
  model::Breadcrumb a = Write("a");
  WaitFinished(spec, a.id);
  host_->Remove(kConsumer, /*forget_cursor=*/false);
  EXPECT_TRUE(host_->ConsumerIds().empty());

  model::Breadcrumb b = Write("b");
  auto second = std::make_shared<TestExecutor>("second");
  Upsert(spec, second, LastSeq());
  WaitFinished(spec, b.id);
  EXPECT_EQ(first->CalledIds(), (std::vector<std::string>{a.id}));
  EXPECT_EQ(second->CalledIds(), (std::vector<std::string>{b.id}));

  host_->Remove(kConsumer, /*forget_cursor=*/true);
  auto cursor = store_->LoadCursor(kConsumer);
  ASSERT_TRUE(cursor.ok());
  EXPECT_FALSE(cursor->has_value());
}

TEST_F(ExecutorHostTest, RecoveryRunsAClaimedUnfinishedTriggerOnce) {
  ExecutorSpec spec = Spec();
  model::Breadcrumb t = Write("t");
  // The crash: claimed and the cursor past it, but no response and no execution record.
  model::Event event = EventOf(t);
  auto claim = store_->ClaimTrigger(store::TriggerClaim{kConsumer, TriggerKey(event), t.id, "default", event.seq, 1, 0});
  ASSERT_TRUE(claim.ok()) << claim.status().ToString();
  ASSERT_EQ(*claim, 1);
  ASSERT_TRUE(store_->SaveCursor(kConsumer, LastSeq()).ok());

  auto exec = std::make_shared<TestExecutor>();
  StartHost();
  Upsert(spec, exec);
  model::Breadcrumb record = WaitFinished(spec, t.id);
  EXPECT_EQ(ExecutionStatus(record.context), "completed");
  EXPECT_EQ(Int(record.context, "attempt"), 2);
  EXPECT_EQ(Responses(t.id).size(), 1u);

  model::Breadcrumb sentinel = Write("sentinel");
  WaitFinished(spec, sentinel.id);
  EXPECT_EQ(exec->CalledIds(), (std::vector<std::string>{t.id, sentinel.id}));
}

TEST_F(ExecutorHostTest, CompletedExecutionIsNeverRunAgain) {
  ExecutorSpec spec = Spec();
  model::Breadcrumb t = Write("t");
  model::Event event = EventOf(t);
  model::WriteContext ctx{"default", kActor};
  // A finished run whose claim was not released yet: claimed, recorded, cursor before the trigger.
  ASSERT_TRUE(store_->ClaimTrigger(store::TriggerClaim{kConsumer, TriggerKey(event), t.id, "default", event.seq, 1, 0}).ok());
  ExecutionRecord finished;
  finished.id = ExecutionIdFor(spec, event);
  finished.kind = spec.kind;
  finished.executor = spec.name;
  finished.status = "completed";
  finished.trigger = event;
  auto done = store_->Create(ctx, ExecutionDraft(finished), "");
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  ASSERT_TRUE(store_->SaveCursor(kConsumer, event.seq - 1).ok());  // before the trigger

  auto exec = std::make_shared<TestExecutor>();
  StartHost();
  Upsert(spec, exec);
  model::Breadcrumb sentinel = Write("sentinel");
  WaitFinished(spec, sentinel.id);
  EXPECT_EQ(exec->CalledIds(), (std::vector<std::string>{sentinel.id}));
  EXPECT_TRUE(Responses(t.id).empty());
  auto record = Execution(spec, t.id);
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(record->version, 1);  // untouched since the test wrote it
  EXPECT_TRUE(WaitFor([&] { return store_->ListClaims(kConsumer).value().empty(); }));  // released
}

TEST_F(ExecutorHostTest, ShutdownWritesNothingForRunsInFlightAndTheyRunAgain) {
  ExecutorSpec spec = Spec();
  auto first = std::make_shared<TestExecutor>("first");
  first->behavior = [raw = first.get()](const RunRequest& r) {
    WaitFor([&] { return r.cancelled.load(); });
    return raw->Answer(r, "cancelled");
  };
  StartHost();
  Upsert(spec, first);
  model::Breadcrumb t = Write("t");
  ASSERT_TRUE(WaitFor([&] { return !first->Calls().empty(); }));
  host_.reset();  // cancels the run; nothing is written for it
  EXPECT_FALSE(Execution(spec, t.id).has_value());
  EXPECT_EQ(store_->ListClaims(kConsumer).value().size(), 1u);  // the claim stays: the run is unfinished
  EXPECT_TRUE(Responses(t.id).empty());

  auto second = std::make_shared<TestExecutor>("second");
  StartHost();
  Upsert(spec, second);
  model::Breadcrumb finished = WaitFinished(spec, t.id);
  EXPECT_EQ(ExecutionStatus(finished.context), "completed");
  EXPECT_EQ(Int(finished.context, "attempt"), 2);
  EXPECT_EQ(second->CalledIds(), (std::vector<std::string>{t.id}));
  ASSERT_EQ(Responses(t.id).size(), 1u);
  EXPECT_EQ(Str(Responses(t.id)[0].context, "executor"), "second");
}

TEST_F(ExecutorHostTest, ReloadUsesTheNewExecutorForLaterTriggers) {
  ExecutorSpec spec = Spec();
  auto old_exec = std::make_shared<TestExecutor>("old");
  auto new_exec = std::make_shared<TestExecutor>("new");
  StartHost();
  Upsert(spec, old_exec);
  model::Breadcrumb before = Write("before");
  WaitFinished(spec, before.id);

  ExecutorSpec reloaded = spec;
  reloaded.definition_version = 2;
  Upsert(reloaded, new_exec);
  EXPECT_EQ(host_->ConsumerIds(), (std::vector<std::string>{kConsumer}));
  model::Breadcrumb after = Write("after");
  WaitFinished(spec, after.id);

  EXPECT_EQ(old_exec->CalledIds(), (std::vector<std::string>{before.id}));
  EXPECT_EQ(new_exec->CalledIds(), (std::vector<std::string>{after.id}));
  ASSERT_EQ(Responses(after.id).size(), 1u);
  EXPECT_EQ(Str(Responses(after.id)[0].context, "executor"), "new");
}

// An executor removed and started again (a tool definition made unusable, then fixed) while a run
// is still in flight in this process: the new consumer must not take the `running` record over
// as if its process had died, or the trigger runs twice.
TEST_F(ExecutorHostTest, RemoveThenUpsertDoesNotRunAnInFlightTriggerAgain) {
  ExecutorSpec spec = Spec();
  // The first executor's run holds until the test lets it go (or the run is cancelled).
  auto release = std::make_shared<std::atomic<bool>>(false);
  auto first = std::make_shared<TestExecutor>("first");
  first->behavior = [raw = first.get(), release](const RunRequest& r) {
    WaitFor([&] { return release->load() || r.cancelled.load(); });
    return raw->Answer(r, "ok");
  };
  StartHost();
  Upsert(spec, first);
  model::Breadcrumb t = Write("t");
  ASSERT_TRUE(WaitFor([&] { return !first->Calls().empty(); }));

  host_->Remove(kConsumer, /*forget_cursor=*/false);  // the run in flight goes on
  auto second = std::make_shared<TestExecutor>("second");
  Upsert(spec, second);
  model::Breadcrumb sentinel = Write("sentinel");
  WaitFinished(spec, sentinel.id);
  release->store(true);
  WaitFinished(spec, t.id);

  EXPECT_EQ(second->CalledIds(), (std::vector<std::string>{sentinel.id}))
      << "the new consumer ran a trigger the removed one was still running";
  EXPECT_EQ(first->CalledIds(), (std::vector<std::string>{t.id}));
}

TEST_F(ExecutorHostTest, APausedRunGivesUpItsWorkerAndGoesOnWhenAnsweredEvenAfterARestart) {
  // The run of "ask" pauses until the answer to request "q-1" is stored; other triggers answer.
  auto executor = std::make_shared<TestExecutor>();
  std::atomic<bool> answered{false};
  executor->behavior = [&](const RunRequest& request) {
    if (request.trigger_event.title != "ask" || answered) return executor->Answer(request, "ok");
    RunResult paused;
    paused.respond = false;
    paused.paused = true;
    paused.awaiting = {"q-1"};
    paused.awaiting_input = json::object{{"question", "which?"}};
    return paused;
  };
  auto paused_record = [&](const std::string& id) {
    return WaitFor([&] {
      auto record = Execution(Spec(), id);
      return record && Str(record->context, "status") == "paused";
    });
  };
  StartHost();
  Upsert(Spec(), executor);
  model::Breadcrumb ask = Write("ask");
  ASSERT_TRUE(paused_record(ask.id));
  auto record = Execution(Spec(), ask.id);
  EXPECT_EQ(record->context.as_object().at("awaiting_input").as_object().at("question"), "which?");
  EXPECT_TRUE(Responses(ask.id).empty());
  // Its one worker (concurrency 1) is free: another trigger runs meanwhile.
  model::Breadcrumb other = Write("other");
  WaitFinished(Spec(), other.id);

  // A restart: the paused run runs again (from the claim) and pauses again.
  StartHost();
  Upsert(Spec(), executor);
  ASSERT_TRUE(WaitFor([&] {
    auto again = Execution(Spec(), ask.id);
    return again && Str(again->context, "status") == "paused" && Int(again->context, "attempt") == 2;
  }));
  EXPECT_EQ(executor->Calls().size(), 3u);

  // The answer appears: the run goes on once, ends and answers once.
  answered = true;
  model::BreadcrumbDraft response;
  response.schema_name = std::string(model::kToolResponseSchema);
  response.title = "answer";
  response.tags = {"request:q-1"};
  response.context = json::object{{"request_id", "q-1"}, {"status", "success"}, {"output", "this"}};
  ASSERT_TRUE(store_->Create(model::WriteContext{"default", "alice", true}, response, "").ok());
  ASSERT_TRUE(WaitFor([&] {
    auto ended = Execution(Spec(), ask.id);
    return ended && Str(ended->context, "status") == "completed";
  }));
  EXPECT_EQ(Responses(ask.id).size(), 1u);
  EXPECT_EQ(Int(Execution(Spec(), ask.id)->context, "attempt"), 3);
  EXPECT_FALSE(Execution(Spec(), ask.id)->context.as_object().contains("awaiting_input"));
  // Nothing runs it again: a sentinel after it is answered, and "ask" was run three times.
  WaitFinished(Spec(), Write("sentinel").id);
  std::vector<std::string> called = executor->CalledIds();
  EXPECT_EQ(std::count(called.begin(), called.end(), ask.id), 3);
}

}  // namespace
}  // namespace cairn::exec

namespace cairn::exec {
namespace {

// Sharded (several processes sharing the store): a consumer runs only while its shard is held.
HostOptions Sharded() {
  HostOptions o = Options();
  o.shards = 4;
  return o;
}

TEST_F(ExecutorHostTest, ShardedConsumersRunOnlyWhileTheirShardIsHeldAndResumeWhereTheyStopped) {
  ExecutorSpec spec = Spec();
  const int shard = ShardOf(kConsumer, 4);
  auto exec = std::make_shared<TestExecutor>();
  StartHost(Sharded());
  Upsert(spec, exec);
  EXPECT_FALSE(host_->Runs(kConsumer)) << "started without its shard";
  model::Breadcrumb a = Write("a");
  host_->TakeShard((shard + 1) % 4);  // another shard: still dormant
  EXPECT_FALSE(host_->Runs(kConsumer));
  host_->TakeShard(shard);
  EXPECT_TRUE(host_->Runs(kConsumer));
  WaitFinished(spec, a.id);

  host_->ReleaseShard(shard);
  EXPECT_FALSE(host_->Runs(kConsumer));
  ASSERT_TRUE(WaitFor([&] { return host_->ShardReleased(shard); }));
  EXPECT_EQ(host_->ShardsHeld(), 1u);
  model::Breadcrumb b = Write("b");
  host_->TakeShard(shard);  // dormant meanwhile: b waited for it
  WaitFinished(spec, b.id);
  EXPECT_EQ(exec->CalledIds(), (std::vector<std::string>{a.id, b.id}));
  EXPECT_EQ(Responses(a.id).size(), 1u);
}

// The hand-over between processes: the shard is free only once the runs in flight ended, and the
// next holder (here another host on the same store) neither runs them again nor misses later ones.
TEST_F(ExecutorHostTest, AReleasedShardIsFreeOnlyOnceItsRunsEndedAndTheNextHolderDoesNotRunThemAgain) {
  ExecutorSpec spec = Spec();
  const int shard = ShardOf(kConsumer, 4);
  auto let_go = std::make_shared<std::atomic<bool>>(false);
  auto first = std::make_shared<TestExecutor>("first");
  first->behavior = [raw = first.get(), let_go](const RunRequest& r) {
    WaitFor([&] { return let_go->load() || r.cancelled.load(); });
    return raw->Answer(r, "ok");
  };
  StartHost(Sharded());
  Upsert(spec, first);
  host_->TakeShard(shard);
  model::Breadcrumb t = Write("t");
  ASSERT_TRUE(WaitFor([&] { return !first->Calls().empty(); }));
  host_->ReleaseShard(shard);
  EXPECT_FALSE(host_->ShardReleased(shard)) << "released while its run was in flight";
  let_go->store(true);
  ASSERT_TRUE(WaitFor([&] { return host_->ShardReleased(shard); }));
  WaitFinished(spec, t.id);
  EXPECT_TRUE(store_->ListClaims(kConsumer).value().empty()) << "the finished run's claim was kept";

  auto second = std::make_shared<TestExecutor>("second");
  StartHost(Sharded());
  Upsert(spec, second, 0);  // from the start of the log, were it not for the stored cursor
  host_->TakeShard(shard);
  model::Breadcrumb sentinel = Write("sentinel");
  WaitFinished(spec, sentinel.id);
  EXPECT_EQ(second->CalledIds(), (std::vector<std::string>{sentinel.id}));
  EXPECT_EQ(Responses(t.id).size(), 1u);
}

TEST_F(ExecutorHostTest, ADormantConsumerStartsFromItsRefreshOrNotAtAll) {
  ExecutorSpec spec = Spec();
  const int shard = ShardOf(kConsumer, 4);
  auto stale = std::make_shared<TestExecutor>("stale");
  auto fresh = std::make_shared<TestExecutor>("fresh");
  StartHost(Sharded());
  ASSERT_TRUE(host_->Upsert(spec, stale, 0, {}, [&]() -> Result<std::optional<std::pair<ExecutorSpec, std::shared_ptr<Executor>>>> {
    return std::optional<std::pair<ExecutorSpec, std::shared_ptr<Executor>>>(std::make_pair(spec, fresh));
  }).ok());
  model::Breadcrumb a = Write("a");
  host_->TakeShard(shard);
  WaitFinished(spec, a.id);
  EXPECT_TRUE(stale->CalledIds().empty());
  EXPECT_EQ(fresh->CalledIds(), (std::vector<std::string>{a.id}));

  // A definition gone (or unusable) while its consumer was dormant, with a position to catch up
  // from: the executor as it was answers what came before (its own stream then retires it).
  host_->ReleaseShard(shard);
  ASSERT_TRUE(WaitFor([&] { return host_->ShardReleased(shard); }));
  auto gone = []() -> Result<std::optional<std::pair<ExecutorSpec, std::shared_ptr<Executor>>>> {
    return std::optional<std::pair<ExecutorSpec, std::shared_ptr<Executor>>>();
  };
  ASSERT_TRUE(host_->Upsert(spec, stale, 0, {}, gone).ok());
  model::Breadcrumb b = Write("b");
  host_->TakeShard(shard);
  EXPECT_TRUE(host_->Runs(kConsumer));
  WaitFinished(spec, b.id);
  EXPECT_EQ(stale->CalledIds(), (std::vector<std::string>{b.id}));

  // Without one (it never ran, or retired and forgot it): nothing starts.
  host_->ReleaseShard(shard);
  ASSERT_TRUE(WaitFor([&] { return host_->ShardReleased(shard); }));
  host_->Remove(kConsumer, /*forget_cursor=*/true);
  ASSERT_TRUE(host_->Upsert(spec, stale, 0, {}, gone).ok());
  host_->TakeShard(shard);
  EXPECT_FALSE(host_->Runs(kConsumer));
}

// A run that cannot end while its shard is handed over (it waits for something only the shard's
// next holder would run) is interrupted after the grace: it writes nothing, keeps its claim, and
// the next holder runs it again.
TEST_F(ExecutorHostTest, ARunStillInFlightAfterTheHandOverGraceIsInterruptedAndRunsAgainInTheNextHolder) {
  ExecutorSpec spec = Spec();
  const int shard = ShardOf(kConsumer, 4);
  auto first = std::make_shared<TestExecutor>("first");
  first->behavior = [raw = first.get()](const RunRequest& r) {
    WaitFor([&] { return r.cancelled.load(); }, 20000ms);  // waits for what never comes
    return raw->Answer(r, "cancelled");
  };
  HostOptions options = Sharded();
  options.handover_grace = 50ms;
  StartHost(options);
  Upsert(spec, first);
  host_->TakeShard(shard);
  model::Breadcrumb t = Write("t");
  ASSERT_TRUE(WaitFor([&] { return !first->Calls().empty(); }));
  host_->ReleaseShard(shard);
  ASSERT_TRUE(WaitFor([&] { return host_->ShardReleased(shard); })) << "the run was not interrupted";
  EXPECT_FALSE(Execution(spec, t.id).has_value()) << "an interrupted run wrote its result";
  EXPECT_EQ(store_->ListClaims(kConsumer).value().size(), 1u);

  auto second = std::make_shared<TestExecutor>("second");
  StartHost(Sharded());
  Upsert(spec, second);
  host_->TakeShard(shard);
  model::Breadcrumb finished = WaitFinished(spec, t.id);
  EXPECT_EQ(Int(finished.context, "attempt"), 2);
  EXPECT_EQ(second->CalledIds(), (std::vector<std::string>{t.id}));
  EXPECT_EQ(Responses(t.id).size(), 1u);
}

}  // namespace
}  // namespace cairn::exec
