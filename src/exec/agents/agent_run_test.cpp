// The agent loop (agent_run.h) against an in-process scripted LlmProvider (tests/support): no
// HTTP. The store and the bus are real (a SqliteStore in a temporary directory, the local bus), so
// snapshots, tool requests and their answers go where they go in the product.
#include "exec/agents/agent_run.h"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/json/parse.hpp>
#include <functional>
#include <boost/json/serialize.hpp>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "base/clock.h"
#include "base/metrics.h"
#include "bus/local_event_bus.h"
#include "model/tool_definition.h"
#include "support/scripted_llm_provider.h"
#include "support/sqlite_store.h"

namespace cairn::exec {
namespace {

namespace json = boost::json;
using test_support::AnswerReply;
using test_support::ToolCallReply;

constexpr int64_t kStart = 1'795'225'252'000'000;

// Hands every record created on the bus to `answer` on a thread of its own, as an executor
// would see it (woken by the bus, never polling).
class BusResponder {
 public:
  BusResponder(bus::EventBus& bus, std::function<void(const model::Event&)> answer)
      : bus_(bus), answer_(std::move(answer)), after_(bus.LastSeq()) {
    subscription_ = bus_.Subscribe([this] {
      std::lock_guard lock(mu_);
      woken_ = true;
      cv_.notify_all();
    });
    thread_ = std::thread([this] { Loop(); });
  }
  ~BusResponder() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
      cv_.notify_all();
    }
    thread_.join();
  }

 private:
  void Loop() {
    while (true) {
      auto events = bus_.Read(after_, 100);
      ASSERT_TRUE(events.ok()) << events.status().ToString();
      for (const auto& event : *events) {
        after_ = event->seq;
        if (event->type == "breadcrumb.created") answer_(*event);
      }
      std::unique_lock lock(mu_);
      if (events->empty()) cv_.wait(lock, [this] { return woken_ || stop_; });
      if (stop_) return;
      woken_ = false;
    }
  }

  bus::EventBus& bus_;
  std::function<void(const model::Event&)> answer_;
  int64_t after_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool woken_ = false;
  bool stop_ = false;
  std::unique_ptr<bus::Subscription> subscription_;
  std::thread thread_;
};

// Answers every tool.request.v1 for `tool` with a tool.response.v1 whose output is the request's
// input, as a tool executor would.
class EchoResponder {
 public:
  EchoResponder(store::Store& store, bus::EventBus& bus, std::string tool)
      : store_(store), tool_(std::move(tool)), responder_(bus, [this](const model::Event& e) { Answer(e); }) {}
  int answered() const { return answered_; }

 private:
  void Answer(const model::Event& request) {
    if (request.schema_name != model::kToolRequestSchema) return;
    const json::object& context = request.context.as_object();
    if (context.at("tool").as_string() != tool_) return;
    std::string request_id(context.at("request_id").as_string());
    model::BreadcrumbDraft draft;
    draft.schema_name = std::string(model::kToolResponseSchema);
    draft.title = tool_ + " response";
    draft.tags = {"tool:response", "request:" + request_id, "tool:" + tool_};
    draft.context = json::object{
        {"request_id", request_id}, {"tool", tool_}, {"status", "success"}, {"output", context.at("input")}};
    // Counted before the write: the agent may see the answer on the bus (and the test read this
    // count) before Create returns here.
    ++answered_;
    auto written = store_.Create(model::WriteContext{request.owner_id, "tool:" + tool_, true}, draft, "");
    ASSERT_TRUE(written.ok()) << written.status().ToString();
  }

  store::Store& store_;
  std::string tool_;
  std::atomic<int> answered_{0};
  BusResponder responder_;  // last: its thread uses the members above
};

class AgentRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(store_.Open(clock_, &metrics_));
    ASSERT_TRUE(test_support::StartLocalBus(*store_, bus_));
  }
  void TearDown() override {
    bus_.reset();
    store_.Close();
  }

  static model::AgentDefinition Agent(std::vector<std::string> tools = {}) {
    model::AgentDefinition def;
    def.agent_id = "helper";
    def.model = "scripted/test-model";
    def.system_prompt = "Be brief.";
    def.tools = std::move(tools);
    def.stream = false;
    def.tool_timeout_ms = 30000;
    return def;
  }

  // One run of `def` for the user message `text`, with `llm` as the model; `cancelled` may be
  // set by the script to stop the run.
  AgentOutcome Run(const model::AgentDefinition& def, test_support::ScriptedLlmProvider& llm,
                   const std::string& execution_id = "exec-1", const std::string& text = "What is 2+2?") {
    model::Event event;
    event.seq = 1;
    event.type = "breadcrumb.created";
    event.breadcrumb_id = "trigger-1";
    event.schema_name = "user.message.v1";
    event.owner_id = "default";
    event.created_by = "user:ada";
    event.trace = model::Trace{"trace-1", "", 0};
    event.context = json::object{{"content", text}};
    json::object trigger{{"id", "trigger-1"}, {"title", "ask"}, {"schema_name", "user.message.v1"},
                         {"context", event.context}};
    json::object context{{"trigger", trigger}};
    cancelled_ = false;
    RunRequest request{execution_id, Lineage{"", execution_id, 0, ""}, event, trigger, context, cancelled_};
    AgentDeps deps{*store_, *bus_, nullptr, [&llm](const std::string& model, bool) -> Result<ModelTarget> {
                     EXPECT_EQ(model, "scripted/test-model");
                     return ModelTarget{&llm, "scripted", "test-model"};
                   }};
    AgentRun run(def, deps, request);
    return run.Execute();
  }

  std::vector<model::Breadcrumb> Records(const std::string& schema, const std::string& tag) {
    model::BreadcrumbQuery query;
    query.schema_name = schema;
    query.all_tags = {tag};
    query.include_context = true;
    query.limit = 100;
    auto page = store_->List("default", query);
    EXPECT_TRUE(page.ok()) << page.status().ToString();
    return page.ok() ? page->items : std::vector<model::Breadcrumb>{};
  }

  static std::vector<std::string> Roles(const llm::ChatRequest& request) {
    std::vector<std::string> roles;
    for (const auto& m : request.messages) roles.push_back(m.role);
    return roles;
  }

  ManualClock clock_{kStart};
  MetricsRegistry metrics_;
  test_support::TempSqliteStore store_{"cairn-agent-run-test"};
  std::unique_ptr<bus::LocalEventBus> bus_;
  std::atomic<bool> cancelled_{false};
};

TEST_F(AgentRunTest, APlainAnswerEndsTheRunAfterOneModelCall) {
  test_support::ScriptedLlmProvider llm;
  llm.Reply(AnswerReply("4"));
  AgentOutcome outcome = Run(Agent(), llm);

  EXPECT_EQ(outcome.kind, AgentOutcome::Kind::kAnswer) << outcome.message;
  EXPECT_EQ(outcome.message, "4");
  EXPECT_EQ(outcome.model, "scripted-model");  // as the endpoint reported it
  EXPECT_TRUE(outcome.final_snapshot);
  EXPECT_EQ(outcome.state.step, 1);
  EXPECT_EQ(outcome.state.usage.total, 15);

  ASSERT_EQ(llm.calls(), 1u);
  const llm::ChatRequest request = llm.requests()[0];
  EXPECT_EQ(request.model, "test-model");
  EXPECT_TRUE(request.tools.empty());
  EXPECT_EQ(Roles(request), (std::vector<std::string>{"system", "user"}));
  EXPECT_EQ(request.messages[0].content, "Be brief.");
  EXPECT_EQ(request.messages[1].content, "What is 2+2?");

  // One snapshot, the final one, written by the agent.
  auto snapshots = Records(std::string(model::kAgentSnapshotSchema), "execution:exec-1");
  ASSERT_EQ(snapshots.size(), 1u);
  EXPECT_EQ(snapshots[0].created_by, "agent:helper");
  EXPECT_EQ(snapshots[0].context.at("is_final"), true);
  EXPECT_EQ(outcome.state.last_snapshot_id, snapshots[0].id);
}

TEST_F(AgentRunTest, AToolCallIsAnsweredThroughTheStoreThenTheModelAnswers) {
  EchoResponder echo(*store_, *bus_, "echo");
  test_support::ScriptedLlmProvider llm;
  llm.Reply(ToolCallReply({{"c1", "echo", R"({"text":"pong"})"}})).Reply(AnswerReply("it said pong"));
  AgentOutcome outcome = Run(Agent({"echo"}), llm);

  EXPECT_EQ(outcome.kind, AgentOutcome::Kind::kAnswer) << outcome.message;
  EXPECT_EQ(outcome.message, "it said pong");
  EXPECT_EQ(echo.answered(), 1);
  ASSERT_EQ(llm.calls(), 2u);
  // The second request carries the call and its answer as a tool message.
  const llm::ChatRequest second = llm.requests()[1];
  EXPECT_EQ(Roles(second), (std::vector<std::string>{"system", "user", "assistant", "tool"}));
  ASSERT_EQ(second.messages[2].tool_calls.size(), 1u);
  EXPECT_EQ(second.messages[2].tool_calls[0].name, "echo");
  EXPECT_EQ(second.messages[3].tool_call_id, "c1");
  EXPECT_EQ(json::parse(second.messages[3].content), json::parse(R"({"text":"pong"})"));

  // The request the agent wrote: its id from execution, step and call; the requester's lineage.
  auto requests = Records(std::string(model::kToolRequestSchema), "request:exec-1-1-0");
  ASSERT_EQ(requests.size(), 1u);
  const json::object& context = requests[0].context.as_object();
  EXPECT_EQ(context.at("tool"), "echo");
  EXPECT_EQ(context.at("requested_by"), "agent:helper");
  EXPECT_EQ(context.at("execution_id"), "exec-1");
  EXPECT_EQ(context.at("root_execution_id"), "exec-1");
  EXPECT_EQ(context.at("input"), json::parse(R"({"text":"pong"})"));
  EXPECT_EQ(requests[0].trace.caused_by, "trigger-1");
}

TEST_F(AgentRunTest, StopsAtMaxIterations) {
  test_support::ScriptedLlmProvider llm;
  // An unknown tool is answered at once with an error: each reply is one more step.
  llm.Reply(ToolCallReply({{"c1", "nope", R"({"n":1})"}})).Reply(ToolCallReply({{"c2", "nope", R"({"n":2})"}}));
  model::AgentDefinition def = Agent();
  def.max_iterations = 2;
  AgentOutcome outcome = Run(def, llm);

  EXPECT_EQ(outcome.kind, AgentOutcome::Kind::kStopped) << outcome.message;
  EXPECT_EQ(outcome.stop_reason, "max_iterations");
  EXPECT_NE(outcome.message.find("max_iterations is 2"), std::string::npos) << outcome.message;
  EXPECT_EQ(llm.calls(), 2u);
  // The model was told the tool does not exist.
  const llm::ChatRequest second = llm.requests()[1];
  ASSERT_EQ(second.messages.back().role, "tool");
  EXPECT_NE(second.messages.back().content.find("unknown_tool"), std::string::npos) << second.messages.back().content;
}

TEST_F(AgentRunTest, StopsWhenTheSameCallIsAskedThreeTimes) {
  test_support::ScriptedLlmProvider llm;
  for (int i = 0; i < 3; ++i) llm.Reply(ToolCallReply({{"c" + std::to_string(i), "nope", R"({"same":true})"}}));
  llm.Reply(AnswerReply("never asked for"));
  AgentOutcome outcome = Run(Agent(), llm);

  EXPECT_EQ(outcome.kind, AgentOutcome::Kind::kStopped) << outcome.message;
  EXPECT_EQ(outcome.stop_reason, "repeated_tool_call");
  EXPECT_NE(outcome.message.find("nope with the same arguments 3 times"), std::string::npos) << outcome.message;
  EXPECT_EQ(llm.calls(), 3u);
  EXPECT_EQ(llm.remaining(), 1u);
}

TEST_F(AgentRunTest, StopsWhenTheTokenBudgetIsSpent) {
  test_support::ScriptedLlmProvider llm;
  llm.Reply(ToolCallReply({{"c1", "nope", "{}"}}, llm::Usage{100, 50, 150})).Reply(AnswerReply("never asked for"));
  model::AgentDefinition def = Agent();
  def.max_tokens_per_execution = 100;
  AgentOutcome outcome = Run(def, llm);

  EXPECT_EQ(outcome.kind, AgentOutcome::Kind::kStopped) << outcome.message;
  EXPECT_EQ(outcome.stop_reason, "token_budget");
  EXPECT_NE(outcome.message.find("used 150 tokens, its budget is 100"), std::string::npos) << outcome.message;
  EXPECT_EQ(llm.calls(), 1u);
  EXPECT_EQ(outcome.state.usage.total, 150);
}

TEST_F(AgentRunTest, AnLlmErrorEndsTheRunWithItsMessage) {
  test_support::ScriptedLlmProvider llm;
  llm.Fail(Status::Unavailable("scripted: the endpoint is down (HTTP 503)"));
  AgentOutcome outcome = Run(Agent(), llm);

  EXPECT_EQ(outcome.kind, AgentOutcome::Kind::kError);
  EXPECT_EQ(outcome.code, "llm_error");
  EXPECT_EQ(outcome.message, "scripted: the endpoint is down (HTTP 503)");
  EXPECT_EQ(llm.calls(), 1u);
  EXPECT_TRUE(Records(std::string(model::kAgentSnapshotSchema), "execution:exec-1").empty());
}

TEST_F(AgentRunTest, ARecordedFinalReplyIsNotAskedForAgain) {
  test_support::ScriptedLlmProvider first;
  first.Reply(AnswerReply("4"));
  ASSERT_EQ(Run(Agent(), first).kind, AgentOutcome::Kind::kAnswer);

  // The same execution again (a restart before its response was written): the answer comes from
  // the snapshot. A model call would fail: this script is empty.
  test_support::ScriptedLlmProvider again;
  AgentOutcome outcome = Run(Agent(), again);
  EXPECT_EQ(outcome.kind, AgentOutcome::Kind::kAnswer) << outcome.code << ": " << outcome.message;
  EXPECT_EQ(outcome.message, "4");
  EXPECT_EQ(again.calls(), 0u);
  EXPECT_EQ(Records(std::string(model::kAgentSnapshotSchema), "execution:exec-1").size(), 1u);
}

TEST_F(AgentRunTest, AResumedRunTakesTheToolAnswerFromTheStoreWithoutAskingTheModelAgain) {
  // The first run records the model's tool call, writes the request and is stopped (a crash)
  // while it waits for the answer.
  test_support::ScriptedLlmProvider first;
  first.Reply(ToolCallReply({{"c1", "echo", R"({"text":"pong"})"}}), [this] { cancelled_ = true; });
  AgentOutcome stopped = Run(Agent({"echo"}), first, "exec-r");
  ASSERT_EQ(stopped.kind, AgentOutcome::Kind::kError);
  EXPECT_EQ(stopped.code, "cancelled");

  // Meanwhile the tool answered.
  model::BreadcrumbDraft response;
  response.schema_name = std::string(model::kToolResponseSchema);
  response.title = "echo response";
  response.tags = {"tool:response", "request:exec-r-1-0", "tool:echo"};
  response.context = json::object{{"request_id", "exec-r-1-0"}, {"tool", "echo"}, {"status", "success"},
                                  {"output", "pong"}};
  ASSERT_TRUE(store_->Create(model::WriteContext{"default", "tool:echo", true}, response, "").ok());

  // The same execution resumes: the recorded reply is not requested again, the request is not
  // written again, the stored answer becomes the tool message of the next (only) model call.
  test_support::ScriptedLlmProvider again;
  again.Reply(AnswerReply("it said pong"));
  AgentOutcome outcome = Run(Agent({"echo"}), again, "exec-r");
  EXPECT_EQ(outcome.kind, AgentOutcome::Kind::kAnswer) << outcome.code << ": " << outcome.message;
  EXPECT_EQ(outcome.message, "it said pong");
  EXPECT_EQ(first.calls(), 1u);
  ASSERT_EQ(again.calls(), 1u);
  const llm::ChatRequest resumed = again.requests()[0];
  EXPECT_EQ(Roles(resumed), (std::vector<std::string>{"system", "user", "assistant", "tool"}));
  EXPECT_EQ(resumed.messages[2].tool_calls[0].id, "c1");
  EXPECT_EQ(resumed.messages[3].content, "pong");
  EXPECT_EQ(Records(std::string(model::kToolRequestSchema), "request:exec-r-1-0").size(), 1u);
  EXPECT_EQ(outcome.state.step, 2);
}

TEST_F(AgentRunTest, ParallelTasksShareWhatIsLeftAndTheModelReadsTheirResultsPastTheBudget) {
  // Each delegated task is answered as its sub-agent would, having spent 40 tokens.
  std::vector<int64_t> budgets;
  std::mutex budgets_mu;
  BusResponder subagents(*bus_, [&](const model::Event& e) {
    if (e.schema_name != model::kUserMessageSchema) return;
    const json::object& asked = e.context.as_object();
    std::string agent(asked.at("agent_id").as_string()), request_id(asked.at("request_id").as_string());
    {
      std::lock_guard lock(budgets_mu);
      budgets.push_back(asked.at("token_budget").as_int64());
    }
    model::BreadcrumbDraft draft;
    draft.schema_name = std::string(model::kAgentResponseSchema);
    draft.title = agent + " response";
    draft.tags = {"agent:response", "agent:" + agent, "request:" + request_id};
    draft.context = json::object{{"status", "success"}, {"agent_id", agent}, {"request_id", request_id},
                                 {"message", agent + " done"}, {"usage", {{"prompt", 30}, {"completion", 10}, {"total", 40}}}};
    ASSERT_TRUE(store_->Create(model::WriteContext{"default", "agent:" + agent, true}, draft, "").ok());
  });
  model::AgentDefinition def = Agent();
  def.agents = {"a", "b"};
  def.max_tokens_per_execution = 100;
  test_support::ScriptedLlmProvider llm;
  // 20 tokens, two tasks: 80 are left, 40 each. They spend them all (total 100): the model still
  // reads their results, once; its next delegate call gets nothing to hand out, and the run stops.
  llm.Reply(ToolCallReply({{"c1", "delegate", R"({"agent":"a","task":"x"})"}, {"c2", "delegate", R"({"agent":"b","task":"y"})"}},
                          llm::Usage{15, 5, 20}))
      .Reply(ToolCallReply({{"c3", "delegate", R"({"agent":"a","task":"more"})"}}, llm::Usage{5, 5, 10}))
      .Reply(AnswerReply("never asked for"));
  AgentOutcome outcome = Run(def, llm);

  EXPECT_EQ(outcome.kind, AgentOutcome::Kind::kStopped) << outcome.message;
  EXPECT_EQ(outcome.stop_reason, "token_budget");
  EXPECT_EQ(budgets, (std::vector<int64_t>{40, 40}));
  ASSERT_EQ(llm.calls(), 2u);
  const llm::ChatRequest second = llm.requests()[1];
  ASSERT_EQ(Roles(second), (std::vector<std::string>{"system", "user", "assistant", "tool", "tool"}));
  EXPECT_EQ(second.messages[3].content, "a done");
  EXPECT_EQ(second.messages[4].content, "b done");
  // The third task was refused (nothing left), answered to the model, and no message was written.
  ASSERT_EQ(outcome.state.messages.back().role, "tool");
  EXPECT_NE(outcome.state.messages.back().content.find("token_budget"), std::string::npos)
      << outcome.state.messages.back().content;
  EXPECT_EQ(Records(std::string(model::kUserMessageSchema), "delegated").size(), 2u);
  EXPECT_EQ(outcome.state.usage.total, 110);
}

}  // namespace
}  // namespace cairn::exec
