// Nested agents end to end (docs/agents.md "Sub-agents"): an orchestrator hands tasks to
// sub-agents with the built-in `delegate` tool; each sub-agent runs as a child execution, its
// answer comes back as the tool result, and agent.task.v1 records at
// executions/<parent>/tasks/<task> follow each task. The models are the scripted fixture server:
// each agent's system prompt carries a marker the rules match on.
#include <map>
#include <set>
#include <thread>

#include "session_support.h"

namespace cairn::e2e {
namespace {

using namespace std::chrono_literals;

json::object Delegate(const std::string& agent, const std::string& task) {
  return json::object{{"agent", agent}, {"task", task}};
}

class e2e_nested_agents : public SessionTest {
 protected:
  void Agent(const std::string& id, const std::string& marker, json::object more = {}) {
    more["agent_id"] = id;
    more["system_prompt"] = "You are " + marker + ".";
    if (!more.contains("stream")) more["stream"] = false;
    DefineAgent(more);
  }
  // The agent.task.v1 records of execution `parent`, oldest first.
  std::vector<json::object> Tasks(const std::string& parent) {
    auto tasks = ListAll("schema_name=agent.task.v1&path_prefix=executions/" + parent + "/tasks&include_context=true");
    std::reverse(tasks.begin(), tasks.end());
    return tasks;
  }
  json::object Execution(const std::string& id) {
    Response r = client().Get("/executions/" + id);
    EXPECT_EQ(r.status, 200) << r.body;
    return ObjectOf(r);
  }
  // Whether `done()` holds before the deadline, asked every 20 ms: for what has no event to wait
  // on (the fixture's request log, records read back through the API).
  template <typename F>
  bool Eventually(F done, std::chrono::milliseconds timeout = kToolWait) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(20ms);
    }
    return true;
  }
  // Waits until the fixture has received `n` chat requests naming `marker`.
  bool AwaitRequests(const std::string& marker, size_t n) {
    return Eventually([&] { return RequestsOf(marker).size() >= n; });
  }
  json::object Tree(const std::string& id) { return ObjectOf(client().Get("/executions/" + id + "/tree")); }
  // Waits on `stream` for the end of session run `execution_id`: it completed, and the session's
  // one answer is `answer`.
  void ExpectAnswered(SessionStream& stream, const std::string& sid, const std::string& execution_id,
                      const std::string& answer) {
    auto end = stream.AwaitEnd(execution_id);
    ASSERT_TRUE(end) << stream.Describe();
    EXPECT_EQ(end->event_type, "execution.completed") << stream.Describe();
    auto assistant = session_tests::WithRole(Messages(sid), "assistant");
    ASSERT_EQ(assistant.size(), 1u);
    EXPECT_EQ(StringAt(assistant[0], "content"), answer);
  }
  // The one execution of `agent` in flight or recorded.
  std::string ExecutionOf(const std::string& agent) {
    auto runs = ListPages("/executions?kind=agent&executor=" + agent);
    EXPECT_EQ(runs.size(), 1u);
    return runs.empty() ? "" : StringAt(runs[0], "id");
  }
  // The chat requests whose system prompt names `marker`.
  std::vector<json::object> RequestsOf(const std::string& marker) {
    std::vector<json::object> out;
    for (auto& request : LlmRequests()) {
      const json::array& messages = MessagesOf(request);
      if (!messages.empty() && StringAt(messages.front().as_object(), "content").find(marker) != std::string::npos) {
        out.push_back(request);
      }
    }
    return out;
  }
};

TEST_F(e2e_nested_agents, ParallelDelegationToTwoAgentTypesFeedsResultsBack) {
  Script({Rule(Match({{"any_content_contains", "ORCHESTRATOR"}, {"last_role", "user"}}),
               ToolCallsReply({{"delegate", Delegate("researcher", "find the facts")},
                               {"delegate", Delegate("writer", "write the draft")}})),
          Rule(Match({{"any_content_contains", "ORCHESTRATOR"}, {"last_role", "tool"}}), Text("final answer")),
          Rule(Match({{"any_content_contains", "RESEARCHER"}}), Text("facts: 42")),
          Rule(Match({{"any_content_contains", "WRITER"}}), Text("draft: hello"))});
  Agent("researcher", "RESEARCHER", json::object{{"description", "Finds facts."}});
  Agent("writer", "WRITER", json::object{{"description", "Writes drafts."}});
  Agent("boss", "ORCHESTRATOR", json::object{{"agents", json::array{"researcher", "writer"}}});

  json::object answer = AwaitAnswer(Say("plan the article", "boss"));
  ASSERT_EQ(StringAt(ContextOf(answer), "status"), "success") << JsonText(answer);
  EXPECT_EQ(StringAt(ContextOf(answer), "message"), "final answer");
  std::string root = StringAt(ContextOf(answer), "execution_id");

  // The model saw the delegate tool naming both agents and what they are for.
  auto boss = RequestsOf("ORCHESTRATOR");
  ASSERT_EQ(boss.size(), 2u);
  const json::object& tool = boss[0].at("tools").as_array().at(0).as_object().at("function").as_object();
  EXPECT_EQ(StringAt(tool, "name"), "delegate");
  EXPECT_NE(StringAt(tool, "description").find("researcher: Finds facts."), std::string::npos) << JsonText(tool);
  EXPECT_NE(StringAt(tool, "description").find("writer: Writes drafts."), std::string::npos);
  // Both answers came back as tool messages, each for its own call.
  auto results = ToolMessagesOf(boss[1]);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(StringAt(results[0], "content"), "facts: 42");
  EXPECT_EQ(StringAt(results[1], "content"), "draft: hello");

  // Two tasks, completed, each naming the child execution that did it.
  auto tasks = Tasks(root);
  ASSERT_EQ(tasks.size(), 2u);
  std::set<std::string> assignees;
  for (const auto& task : tasks) {
    const json::object& t = ContextOf(task);
    assignees.insert(StringAt(t, "assignee"));
    EXPECT_EQ(StringAt(t, "status"), "completed") << JsonText(task);
    EXPECT_EQ(StringAt(t, "parent_execution_id"), root);
    EXPECT_EQ(StringAt(task, "created_by"), "agent:boss");
    json::object child = Execution(StringAt(t, "execution_id"));
    EXPECT_EQ(StringAt(child, "parent_execution_id"), root) << JsonText(child);
    EXPECT_EQ(StringAt(child, "root_execution_id"), root);
    EXPECT_EQ(IntAt(child, "depth"), 1);
    EXPECT_EQ(StringAt(child, "executor"), StringAt(t, "assignee"));
    EXPECT_EQ(StringAt(child, "status"), "completed");
  }
  EXPECT_EQ(assignees, (std::set<std::string>{"researcher", "writer"}));
  EXPECT_EQ(StringAt(ContextOf(tasks[0]), "result"), "facts: 42");

  // The tree shows the sub-agents under the orchestrator, with its tasks.
  Response tree = client().Get("/executions/" + root + "/tree");
  ASSERT_EQ(tree.status, 200) << tree.body;
  json::object top = ObjectOf(tree);
  ASSERT_EQ(top.at("tasks").as_array().size(), 2u) << tree.body;
  const json::array& children = top.at("children").as_array();
  ASSERT_EQ(children.size(), 2u) << tree.body;
  std::set<std::string> child_ids, task_children;
  for (const auto& child : children) child_ids.insert(StringAt(child.as_object(), "id"));
  for (const auto& task : top.at("tasks").as_array()) task_children.insert(StringAt(task.as_object(), "execution_id"));
  EXPECT_EQ(child_ids, task_children);

  // Each run's conversation, from its snapshots: the calls and the results matched by id.
  Response conversation = client().Get("/executions/" + root + "/messages");
  ASSERT_EQ(conversation.status, 200) << conversation.body;
  json::object conversation_body = ObjectOf(conversation);
  const json::array& said = conversation_body.at("messages").as_array();
  std::vector<std::string> roles;
  for (const auto& m : said) roles.push_back(StringAt(m.as_object(), "role"));
  EXPECT_EQ(roles, (std::vector<std::string>{"system", "user", "assistant", "tool", "tool", "assistant"}));
  if (roles.size() == 6) {
    const json::array& calls = said[2].as_object().at("tool_calls").as_array();
    ASSERT_EQ(calls.size(), 2u);
    EXPECT_EQ(StringAt(said[3].as_object(), "tool_call_id"), StringAt(calls[0].as_object(), "id"));
    EXPECT_EQ(StringAt(said[4].as_object(), "content"), "draft: hello");
  }
  Response child_conversation = client().Get("/executions/" + StringAt(ContextOf(tasks[0]), "execution_id") + "/messages");
  ASSERT_EQ(child_conversation.status, 200) << child_conversation.body;
  json::object child_body = ObjectOf(child_conversation);
  EXPECT_EQ(StringAt(child_body, "agent_id"), "researcher");
  EXPECT_EQ(StringAt(child_body.at("messages").as_array().back().as_object(), "content"), "facts: 42");
  EXPECT_TRUE(IsError(client().Get("/executions/nope/messages"), 404, "not_found"));

  // In parallel: both sub-agents were asked in one write, before either answered.
  auto messages = ListAll("schema_name=user.message.v1&tag=delegated&include_context=true");
  ASSERT_EQ(messages.size(), 2u);
  int64_t asked = std::max(MicrosAt(messages[0], "created_at"), MicrosAt(messages[1], "created_at"));
  for (const char* agent : {"researcher", "writer"}) {
    auto responses = ListAll(std::string("schema_name=agent.response.v1&tag=agent:") + agent);
    ASSERT_EQ(responses.size(), 1u);
    EXPECT_LT(asked, MicrosAt(responses[0], "created_at"));
  }
}

TEST_F(e2e_nested_agents, ASubAgentsStructuredOutputIsTheToolResult) {
  Script({Rule(Match({{"any_content_contains", "ORCHESTRATOR"}, {"last_role", "user"}}),
               ToolCallsReply({{"delegate", Delegate("triage", "triage the ticket")}})),
          Rule(Match({{"any_content_contains", "ORCHESTRATOR"}, {"last_role", "tool"}}), Text("triaged")),
          Rule(Match({{"any_content_contains", "TRIAGE"}}), Text(R"({"priority": "high"})"))});
  json::object schema{{"type", "object"},
                      {"properties", json::object{{"priority", json::object{{"type", "string"}}}}},
                      {"required", json::array{"priority"}}};
  Agent("triage", "TRIAGE", json::object{{"output", json::object{{"schema_name", "ticket.triage.v1"}, {"schema", schema}}}});
  Agent("boss", "ORCHESTRATOR", json::object{{"agents", json::array{"triage"}}});

  json::object answer = AwaitAnswer(Say("triage this", "boss"));
  ASSERT_EQ(StringAt(ContextOf(answer), "status"), "success") << JsonText(answer);
  EXPECT_EQ(StringAt(ContextOf(answer), "message"), "triaged");
  std::string root = StringAt(ContextOf(answer), "execution_id");
  // The orchestrator's model got the validated object as the tool result, long before any timeout.
  auto boss = RequestsOf("ORCHESTRATOR");
  ASSERT_EQ(boss.size(), 2u);
  auto results = ToolMessagesOf(boss[1]);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(json::parse(StringAt(results[0], "content")), json::parse(R"({"priority":"high"})"));
  auto tasks = Tasks(root);
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(StringAt(ContextOf(tasks[0]), "status"), "completed") << JsonText(tasks[0]);
  EXPECT_EQ(StringAt(Execution(StringAt(ContextOf(tasks[0]), "execution_id")), "status"), "completed");
}

TEST_F(e2e_nested_agents, AFailingSubAgentIsAnErrorResultNotAFailedOrchestrator) {
  Script({Rule(Match({{"any_content_contains", "ORCHESTRATOR"}, {"last_role", "user"}}),
               ToolCallsReply({{"delegate", Delegate("broken", "try this")}})),
          Rule(Match({{"any_content_contains", "ORCHESTRATOR"}, {"last_role", "tool"}}),
               Text("recovered after {{last_tool_content}}")),
          Rule(Match({{"any_content_contains", "BROKEN"}}),
               json::object{{"status", 401}, {"body", json::object{{"error", json::object{{"message", "bad key"}}}}}})});
  Agent("broken", "BROKEN");
  Agent("boss", "ORCHESTRATOR", json::object{{"agents", json::array{"broken"}}});
  // What a user attaches to "a task failed": a path glob over every execution's tasks and a
  // condition on the transition (a webhook or a trigger takes the same selector).
  SseClient failed_tasks(server().url() + "/events/stream?path=" + UrlEncode("executions/*/tasks/*") + "&when=" +
                         UrlEncode("record.context.status == 'failed' && (before == null || before.context.status != 'failed')"));
  failed_tasks.Start();
  ASSERT_TRUE(failed_tasks.WaitForOpen(10s)) << failed_tasks.Describe();

  json::object answer = AwaitAnswer(Say("go", "boss"));
  ASSERT_EQ(StringAt(ContextOf(answer), "status"), "success") << JsonText(answer);
  std::string message = StringAt(ContextOf(answer), "message");
  EXPECT_EQ(message.rfind("recovered after {\"error\"", 0), 0u) << message;
  EXPECT_NE(message.find("llm_error"), std::string::npos) << message;

  auto tasks = Tasks(StringAt(ContextOf(answer), "execution_id"));
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(StringAt(ContextOf(tasks[0]), "status"), "failed");
  json::object child = Execution(StringAt(ContextOf(tasks[0]), "execution_id"));
  EXPECT_EQ(StringAt(child, "status"), "failed");
  // The stream's first event is the task's move to failed (not its creation or its start).
  ASSERT_TRUE(failed_tasks.WaitForEvents(1, 10s)) << failed_tasks.Describe();
  json::object seen = failed_tasks.Events()[0].Json().as_object();
  EXPECT_EQ(StringAt(seen, "breadcrumb_id"), StringAt(tasks[0], "id")) << JsonText(seen);
  EXPECT_EQ(StringAt(seen, "type"), "breadcrumb.updated") << JsonText(seen);
  EXPECT_EQ(failed_tasks.Events().size(), 1u) << failed_tasks.Describe();
}

TEST_F(e2e_nested_agents, TheDepthGuardAnswersTheModelAndEndsACycle) {
  // ping and pong delegate to each other; at depth 2 (max_delegation_depth 2) a further delegate
  // call is answered with an error, which the model then passes up.
  Script({Rule(Match({{"any_content_contains", "PING"}, {"last_role", "user"}}),
               ToolCallsReply({{"delegate", Delegate("pong", "go deeper")}})),
          Rule(Match({{"any_content_contains", "PONG"}, {"last_role", "user"}}),
               ToolCallsReply({{"delegate", Delegate("ping", "go deeper")}})),
          Rule(Match({{"last_role", "tool"}}), Text("up: {{last_tool_content}}"))});
  Agent("ping", "PING", json::object{{"agents", json::array{"pong"}}, {"max_delegation_depth", 2}});
  Agent("pong", "PONG", json::object{{"agents", json::array{"ping"}}, {"max_delegation_depth", 2}});

  json::object answer = AwaitAnswer(Say("start", "ping"));
  ASSERT_EQ(StringAt(ContextOf(answer), "status"), "success") << JsonText(answer);
  std::string message = StringAt(ContextOf(answer), "message");
  EXPECT_EQ(message.rfind("up: up: up: {\"error\"", 0), 0u) << message;
  EXPECT_NE(message.find("depth_exceeded"), std::string::npos) << message;
  // Three runs (ping, pong, ping at depth 2), two tasks: the refused call wrote nothing.
  EXPECT_EQ(ListAll("schema_name=agent.task.v1").size(), 2u);
  EXPECT_EQ(ListAll("schema_name=user.message.v1&tag=delegated").size(), 2u);
  EXPECT_EQ(LlmRequests().size(), 6u);
}

TEST_F(e2e_nested_agents, CancellingTheRootCancelsTheRunningSubAgentsPromptly) {
  Script({Rule(Match({{"any_content_contains", "ORCHESTRATOR"}, {"last_role", "user"}}),
               ToolCallsReply({{"delegate", Delegate("slow", "take your time")},
                               {"delegate", Delegate("slow", "take longer")}})),
          Rule(Match({{"any_content_contains", "ORCHESTRATOR"}, {"last_role", "tool"}}), Text("never")),
          Rule(Match({{"any_content_contains", "SLOW"}}), json::object{{"content", "late"}, {"delay_ms", 60000}})});
  Agent("slow", "SLOW");
  Agent("boss", "ORCHESTRATOR", json::object{{"agents", json::array{"slow"}}});
  std::string message = Say("go", "boss");
  ASSERT_TRUE(AwaitRequests("SLOW", 2)) << "the sub-agents never asked their model";
  std::string root = ExecutionOf("boss");
  ASSERT_EQ(ListPages("/executions?kind=agent&executor=slow&status=running").size(), 2u);

  auto cancelled_at = std::chrono::steady_clock::now();
  Response cancelled = client().Post("/executions/" + root + "/cancel", "");
  ASSERT_EQ(cancelled.status, 200) << cancelled.Describe();
  json::object answer = AwaitAnswer(message);
  EXPECT_EQ(StringAt(ContextOf(answer), "status"), "error") << JsonText(answer);
  EXPECT_TRUE(Eventually([&] { return ListPages("/executions?parent=" + root + "&status=cancelled").size() == 2; }))
      << JsonText(Tree(root));
  // Both sub-agents ended long before their model's 60 s reply, and say why.
  EXPECT_LT(std::chrono::steady_clock::now() - cancelled_at, 30s);
  auto children = ListPages("/executions?parent=" + root);
  ASSERT_EQ(children.size(), 2u);
  for (const auto& child : children) EXPECT_EQ(StringAt(child, "status"), "cancelled") << JsonText(child);
  EXPECT_EQ(StringAt(Execution(root), "status"), "cancelled");
  EXPECT_EQ(RequestsOf("ORCHESTRATOR").size(), 1u) << "the orchestrator is not asked again after the cancel";
}

TEST_F(e2e_nested_agents, ATimedOutTaskCancelsItsSubAgentAndItsSubtree) {
  Script({Rule(Match({{"any_content_contains", "ORCHESTRATOR"}, {"last_role", "user"}}),
               ToolCallsReply({{"delegate", Delegate("middle", "pass it on")}})),
          Rule(Match({{"any_content_contains", "ORCHESTRATOR"}, {"last_role", "tool"}}), Text("gave up")),
          Rule(Match({{"any_content_contains", "MIDDLE"}, {"last_role", "user"}}),
               ToolCallsReply({{"delegate", Delegate("slow", "take your time")}})),
          Rule(Match({{"any_content_contains", "SLOW"}}), json::object{{"content", "late"}, {"delay_ms", 60000}})});
  Agent("slow", "SLOW");
  Agent("middle", "MIDDLE", json::object{{"agents", json::array{"slow"}}});
  Agent("boss", "ORCHESTRATOR", json::object{{"agents", json::array{"middle"}}, {"tool_timeout_ms", 1500}});

  auto asked_at = std::chrono::steady_clock::now();
  json::object answer = AwaitAnswer(Say("go", "boss"));
  ASSERT_EQ(StringAt(ContextOf(answer), "status"), "success") << JsonText(answer);
  std::string root = StringAt(ContextOf(answer), "execution_id");
  // The model read the timeout, naming the sub-agent.
  auto boss = RequestsOf("ORCHESTRATOR");
  ASSERT_EQ(boss.size(), 2u);
  auto results = ToolMessagesOf(boss[1]);
  ASSERT_EQ(results.size(), 1u);
  json::value result = json::parse(StringAt(results[0], "content"));
  EXPECT_EQ(result.at("error").at("code"), "timeout") << JsonText(result);
  EXPECT_NE(json::value_to<std::string>(result.at("error").at("message")).find("middle"), std::string::npos);
  // The task says cancelled; the sub-agent and its own child stop long before the 60 s reply.
  auto tasks = Tasks(root);
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(StringAt(ContextOf(tasks[0]), "status"), "cancelled") << JsonText(tasks[0]);
  EXPECT_EQ(json::parse(StringAt(ContextOf(tasks[0]), "result")).at("error").at("code"), "timeout");
  EXPECT_TRUE(Eventually([&] {
    return ListPages("/executions?kind=agent&executor=middle&status=cancelled").size() == 1 &&
           ListPages("/executions?kind=agent&executor=slow&status=cancelled").size() == 1;
  })) << JsonText(Tree(root));
  EXPECT_LT(std::chrono::steady_clock::now() - asked_at, 30s);
  EXPECT_EQ(ListPages("/executions?status=running").size(), 0u);
}

TEST_F(e2e_nested_agents, ATaskGivenUpBeforeItsSubAgentStartedNamesItsExecution) {
  // One slow run at a time: the second task's sub-agent has not started when both are given up.
  Script({Rule(Match({{"any_content_contains", "ORCHESTRATOR"}, {"last_role", "user"}}),
               ToolCallsReply({{"delegate", Delegate("slow", "first")}, {"delegate", Delegate("slow", "second")}})),
          Rule(Match({{"any_content_contains", "ORCHESTRATOR"}, {"last_role", "tool"}}), Text("gave up")),
          Rule(Match({{"any_content_contains", "SLOW"}}), json::object{{"content", "late"}, {"delay_ms", 60000}})});
  Agent("slow", "SLOW", json::object{{"concurrency", 1}});
  Agent("boss", "ORCHESTRATOR", json::object{{"agents", json::array{"slow"}}, {"tool_timeout_ms", 1500}});

  json::object answer = AwaitAnswer(Say("go", "boss"));
  ASSERT_EQ(StringAt(ContextOf(answer), "status"), "success") << JsonText(answer);
  EXPECT_EQ(RequestsOf("SLOW").size(), 1u) << "the second sub-agent never asked its model";
  auto tasks = Tasks(StringAt(ContextOf(answer), "execution_id"));
  ASSERT_EQ(tasks.size(), 2u);
  std::set<std::string> children;
  for (const auto& task : tasks) {
    EXPECT_EQ(StringAt(ContextOf(task), "status"), "cancelled") << JsonText(task);
    children.insert(StringAt(ContextOf(task), "execution_id"));
  }
  children.erase("");
  ASSERT_EQ(children.size(), 2u) << JsonText(tasks[0]) << JsonText(tasks[1]);
  // The execution each task names is the one its sub-agent ran (or, never started, ends) under.
  EXPECT_TRUE(Eventually([&] {
    for (const auto& id : children) {
      Response r = client().Get("/executions/" + id);
      if (r.status != 200 || StringAt(ObjectOf(r), "status") != "cancelled") return false;
    }
    return true;
  })) << client().Get("/executions?kind=agent&executor=slow").body;
}

TEST_F(e2e_nested_agents, ACancelledOrchestratorsOpenTasksEndCancelled) {
  Script({Rule(Match({{"any_content_contains", "ORCHESTRATOR"}, {"last_role", "user"}}),
               ToolCallsReply({{"delegate", Delegate("slow", "take your time")},
                               {"delegate", Delegate("quick", "be quick")}})),
          Rule(Match({{"any_content_contains", "ORCHESTRATOR"}, {"last_role", "tool"}}), Text("never")),
          Rule(Match({{"any_content_contains", "QUICK"}}), Text("quick done")),
          Rule(Match({{"any_content_contains", "SLOW"}}), json::object{{"content", "late"}, {"delay_ms", 60000}})});
  Agent("slow", "SLOW");
  Agent("quick", "QUICK");
  Agent("boss", "ORCHESTRATOR", json::object{{"agents", json::array{"slow", "quick"}}});
  std::string message = Say("go", "boss");
  ASSERT_TRUE(AwaitRequests("SLOW", 1));
  std::string root = ExecutionOf("boss");
  // The quick task is taken before the cancel; the slow one is open.
  ASSERT_TRUE(Eventually([&] {
    for (const auto& task : Tasks(root)) {
      if (StringAt(ContextOf(task), "assignee") == "quick") return StringAt(ContextOf(task), "status") == "completed";
    }
    return false;
  }));
  // The slow sub-agent started: its task moved from pending to running, naming its execution.
  std::string slow = ExecutionOf("slow");
  for (const auto& task : Tasks(root)) {
    if (StringAt(ContextOf(task), "assignee") != "slow") continue;
    EXPECT_EQ(StringAt(ContextOf(task), "status"), "running") << JsonText(task);
    EXPECT_EQ(StringAt(ContextOf(task), "execution_id"), slow);
  }
  ASSERT_EQ(client().Post("/executions/" + root + "/cancel", "").status, 200);
  EXPECT_EQ(StringAt(ContextOf(AwaitAnswer(message)), "status"), "error");
  std::map<std::string, std::string> status;
  for (const auto& task : Tasks(root)) status[StringAt(ContextOf(task), "assignee")] = StringAt(ContextOf(task), "status");
  EXPECT_EQ(status, (std::map<std::string, std::string>{{"quick", "completed"}, {"slow", "cancelled"}}));
}

TEST_F(e2e_nested_agents, ParallelTasksShareWhatIsLeftOfTheTreesBudget) {
  auto costs = [](int64_t total, json::object reply) {
    reply["usage"] = json::object{{"prompt_tokens", total - 1}, {"completion_tokens", 1}, {"total_tokens", total}};
    return reply;
  };
  // The root may spend 12. Its first reply costs 2 and hands out two tasks at once: each gets half
  // of the 10 left. The spender's first reply costs 5, all of its share: it stops before asking
  // again. The other answers at once, for 5. The sub-agents spent what was left, yet the root's
  // model reads their results (once) and answers.
  Script({Rule(Match({{"any_content_contains", "ORCHESTRATOR"}, {"last_role", "user"}}),
               costs(2, ToolCallsReply({{"delegate", Delegate("spender", "spend")}, {"delegate", Delegate("saver", "save")}}))),
          Rule(Match({{"any_content_contains", "ORCHESTRATOR"}, {"last_role", "tool"}}), costs(5, Text("read both"))),
          Rule(Match({{"any_content_contains", "SPENDER"}, {"last_role", "user"}}),
               costs(5, ToolCallsReply({{"echo", json::object{{"text", "more"}}}}))),
          Rule(Match({{"any_content_contains", "SPENDER"}, {"last_role", "tool"}}), costs(5, Text("never"))),
          Rule(Match({{"any_content_contains", "SAVER"}}), costs(5, Text("saved")))});
  Agent("spender", "SPENDER", json::object{{"tools", json::array{"echo"}}});
  Agent("saver", "SAVER");
  Agent("boss", "ORCHESTRATOR", json::object{{"agents", json::array{"spender", "saver"}}, {"max_tokens_per_execution", 12}});

  json::object answer = AwaitAnswer(Say("go", "boss"));
  ASSERT_EQ(StringAt(ContextOf(answer), "status"), "success") << JsonText(answer);
  EXPECT_EQ(StringAt(ContextOf(answer), "message"), "read both") << JsonText(answer);
  EXPECT_FALSE(ContextOf(answer).contains("stop_reason")) << JsonText(answer);
  std::string root = StringAt(ContextOf(answer), "execution_id");
  // Each message carried its share, not the whole remainder.
  auto delegated = ListAll("schema_name=user.message.v1&tag=delegated&include_context=true");
  ASSERT_EQ(delegated.size(), 2u);
  for (const auto& m : delegated) EXPECT_EQ(IntAt(ContextOf(m), "token_budget"), 5) << JsonText(m);
  EXPECT_EQ(RequestsOf("SPENDER").size(), 1u);
  EXPECT_EQ(RequestsOf("SAVER").size(), 1u);
  // The spender's task failed with the budget error, which the root's model read as its result.
  std::map<std::string, json::object> tasks;
  for (const auto& task : Tasks(root)) tasks[StringAt(ContextOf(task), "assignee")] = ContextOf(task);
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(StringAt(tasks["spender"], "status"), "failed") << JsonText(tasks["spender"]);
  json::value result = json::parse(StringAt(tasks["spender"], "result"));
  EXPECT_EQ(result.at("error").at("code"), "token_budget") << JsonText(result);
  EXPECT_NE(json::value_to<std::string>(result.at("error").at("message")).find("budget is 5"), std::string::npos);
  EXPECT_EQ(StringAt(tasks["saver"], "status"), "completed") << JsonText(tasks["saver"]);
  auto boss = RequestsOf("ORCHESTRATOR");
  ASSERT_EQ(boss.size(), 2u);
  auto results = ToolMessagesOf(boss[1]);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_NE(StringAt(results[0], "content").find("token_budget"), std::string::npos) << JsonText(results[0]);
  EXPECT_EQ(StringAt(results[1], "content"), "saved");
  // The tree's tokens: the root's own 7 and its sub-agents' 10.
  EXPECT_EQ(IntAt(ObjAt(ContextOf(answer), "usage"), "total"), 17) << JsonText(answer);
}

TEST_F(e2e_nested_agents, TheSessionChannelCarriesTheSubAgentsEventsInOrder) {
  Script({Rule(Match({{"any_content_contains", "ORCHESTRATOR"}, {"last_role", "user"}}),
               ToolCallsReply({{"delegate", Delegate("researcher", "look it up")}})),
          Rule(Match({{"any_content_contains", "ORCHESTRATOR"}, {"last_role", "tool"}}), Text("final")),
          Rule(Match({{"any_content_contains", "RESEARCHER"}, {"last_role", "user"}}),
               ToolCallsReply({{"echo", json::object{{"text", "lookup"}}}})),
          Rule(Match({{"any_content_contains", "RESEARCHER"}, {"last_role", "tool"}}), Text("found it"))});
  Agent("researcher", "RESEARCHER", json::object{{"tools", json::array{"echo"}}, {"stream", true}});
  SessionAgent("boss", json::object{{"system_prompt", "You are ORCHESTRATOR."},
                                    {"tools", json::array{}},
                                    {"agents", json::array{"researcher"}}});
  std::string sid = NewSessionId("boss");
  SessionStream stream(server(), sid);
  ASSERT_TRUE(stream.Open()) << stream.Describe();
  Posted p = Send(sid, "plan it");
  ASSERT_TRUE(stream.AwaitType("execution.completed", p.execution_id)) << stream.Describe();

  // The sub-agent's frames name it, its execution and its parent (the session's run).
  std::vector<SessionEvent> all = stream.Events(true);
  std::vector<SessionEvent> child;
  std::string child_id;
  for (const auto& e : all) {
    if (StringAt(e.data, "parent_execution_id") != p.execution_id) continue;
    if (e.event_type == "agent.step" || e.event_type == "agent.token") child_id = e.execution_id;
    child.push_back(e);
  }
  ASSERT_FALSE(child_id.empty()) << DescribeEvents(all);
  std::vector<SessionEvent> steps;
  std::string streamed;
  int step_index = -1, end_index = -1, root_end = -1;
  for (size_t i = 0; i < all.size(); ++i) {
    const SessionEvent& e = all[i];
    if (e.execution_id == child_id && e.event_type == "agent.step") {
      EXPECT_EQ(StringAt(e.data, "agent_id"), "researcher") << e.Describe();
      steps.push_back(e);
      step_index = static_cast<int>(i);
    } else if (e.execution_id == child_id && e.event_type == "agent.token") {
      EXPECT_EQ(StringAt(e.data, "agent_id"), "researcher") << e.Describe();
      EXPECT_EQ(StringAt(e.data, "parent_execution_id"), p.execution_id);
      streamed += e.content;
    } else if (e.execution_id == child_id && e.event_type == "execution.completed") {
      end_index = static_cast<int>(i);
    } else if (e.execution_id == p.execution_id && e.event_type == "execution.completed") {
      root_end = static_cast<int>(i);
    }
  }
  // Each step once: the reply asking for echo, then the final answer (the snapshot recording the
  // echo answer does not repeat the first).
  ASSERT_EQ(steps.size(), 2u) << DescribeEvents(all);
  EXPECT_EQ(IntAt(steps[0].metadata, "step"), 1);
  EXPECT_EQ(IntAt(steps[1].metadata, "step"), 2);
  // Then the child's end, then the root's.
  const json::array& calls = steps.front().metadata.at("tool_calls").as_array();
  ASSERT_EQ(calls.size(), 1u) << steps.front().Describe();
  EXPECT_NE(JsonText(calls[0]).find("echo"), std::string::npos);
  EXPECT_EQ(steps.back().content, "found it");
  EXPECT_TRUE(session_tests::IsTrueAt(steps.back().metadata, "is_final"));
  EXPECT_EQ(streamed, "found it");
  EXPECT_LT(step_index, end_index) << DescribeEvents(all);
  EXPECT_LT(end_index, root_end) << DescribeEvents(all);
  for (size_t i = 1; i < steps.size(); ++i) EXPECT_GT(steps[i].seq, steps[i - 1].seq);
}

// The suite `Base` on a server that syncs each commit (--sync normal): kill -9 loses none.
template <typename Base>
class Recovering : public Base {
 protected:
  std::vector<std::string> ServerArgs() const override {
    auto args = Base::ServerArgs();
    args.insert(args.end(), {"--sync", "normal"});
    return args;
  }
};

// ---- a sub-agent asks the user -------------------------------------------------------------------

// A session's orchestrator hands a task to `asker`, which asks the user a question; the answer
// (given in `answer`) resumes it, and its result reaches the orchestrator's final answer.
class e2e_nested_user_input : public e2e_nested_agents {
 protected:
  void SetUp() override {
    e2e_nested_agents::SetUp();
    if (HasFatalFailure()) return;
    Script({Rule(Match({{"any_content_contains", "ORCHESTRATOR"}, {"last_role", "user"}}),
                 ToolCallsReply({{"delegate", Delegate("asker", "book the train")}})),
            Rule(Match({{"any_content_contains", "ORCHESTRATOR"}, {"last_role", "tool"}}),
                 Text("All set: {{last_tool_content}}")),
            Rule(Match({{"any_content_contains", "ASKER"}, {"last_role", "user"}}),
                 ToolCallsReply({{"user_input", json::object{{"question", "Which city do you leave from?"}}}})),
            Rule(Match({{"any_content_contains", "ASKER"}, {"last_role", "tool"}}), Text("booked from {{last_tool_content}}"))});
    Agent("asker", "ASKER", json::object{{"description", "Books trains."}});
    SessionAgent("boss", json::object{{"system_prompt", "You are ORCHESTRATOR."},
                                      {"tools", json::array{}},
                                      {"agents", json::array{"asker"}}});
    sid_ = NewSessionId("boss");
  }

  // Opens the session's stream, sends the first message and waits until the tree waits for the
  // user: the session's run paused with the sub-agent's question.
  void AskAndAwaitThePause() {
    stream_ = std::make_unique<SessionStream>(server(), sid_);
    ASSERT_TRUE(stream_->Open()) << stream_->Describe();
    posted_ = Send(sid_, "Book me a train to Porto");
    auto paused = stream_->AwaitType("execution.paused", posted_.execution_id);
    ASSERT_TRUE(paused) << stream_->Describe();
    paused_ = *paused;
    auto tasks = Tasks(posted_.execution_id);
    ASSERT_EQ(tasks.size(), 1u);
    child_ = StringAt(ContextOf(tasks[0]), "execution_id");
    ASSERT_FALSE(child_.empty()) << JsonText(tasks[0]);
  }

  std::string sid_, child_;
  std::unique_ptr<SessionStream> stream_;
  Posted posted_;
  SessionEvent paused_;
};

TEST_F(e2e_nested_user_input, ASubAgentsQuestionPausesTheTreeAndTheSessionsAnswerResumesIt) {
  AskAndAwaitThePause();
  // The session's notification names the sub-agent that asks, and its question.
  EXPECT_EQ(paused_.role, "notification") << JsonText(paused_.data);
  EXPECT_NE(paused_.content.find("asker"), std::string::npos) << JsonText(paused_.data);
  EXPECT_NE(paused_.content.find("Which city do you leave from?"), std::string::npos) << JsonText(paused_.data);
  EXPECT_EQ(StringAt(paused_.metadata, "agent_id"), "asker") << JsonText(paused_.data);
  EXPECT_EQ(StringAt(paused_.metadata, "asked_by_execution_id"), child_) << JsonText(paused_.data);

  // The sub-agent, its task and the session's run all wait.
  json::object child = Execution(child_);
  EXPECT_EQ(StringAt(child, "status"), "paused") << JsonText(child);
  EXPECT_EQ(StringAt(child, "parent_execution_id"), posted_.execution_id);
  EXPECT_EQ(StringAt(ObjAt(child, "awaiting_input"), "question"), "Which city do you leave from?") << JsonText(child);
  json::object task = ContextOf(Tasks(posted_.execution_id).at(0));
  EXPECT_EQ(StringAt(task, "status"), "waiting") << JsonText(task);
  EXPECT_EQ(StringAt(ObjAt(task, "awaiting_input"), "agent_id"), "asker") << JsonText(task);
  json::object root = Execution(posted_.execution_id);
  EXPECT_EQ(StringAt(root, "status"), "paused") << JsonText(root);
  EXPECT_EQ(StringAt(ObjAt(root, "awaiting_input"), "execution_id"), child_) << JsonText(root);
  // The session channel showed the task waiting and the sub-agent paused, naming it.
  ASSERT_TRUE(stream_->Await([&](const SessionEvent& e) { return e.event_type == "task.waiting"; })) << stream_->Describe();
  ASSERT_TRUE(stream_->AwaitType("execution.paused", child_)) << stream_->Describe();
  for (const auto& e : stream_->Events()) {
    if (e.event_type != "task.waiting" && !(e.event_type == "execution.paused" && e.execution_id == child_)) continue;
    EXPECT_EQ(StringAt(e.data, "agent_id"), "asker") << e.Describe();
    EXPECT_EQ(StringAt(e.data, "parent_execution_id"), posted_.execution_id) << e.Describe();
    EXPECT_NE(e.content.find("Which city"), std::string::npos) << e.Describe();
  }
  EXPECT_EQ(RequestsOf("ASKER").size(), 1u);
  EXPECT_EQ(RequestsOf("ORCHESTRATOR").size(), 1u);

  // Bad answers are refused and change nothing.
  auto before = StoreSnapshot();
  EXPECT_TRUE(session_tests::IsErrorNaming(PostJson("/executions/" + child_ + "/input", json::object{}), 422,
                                           "validation_failed", "content"));
  EXPECT_TRUE(IsError(PostJson("/executions/nope/input", json::object{{"content", "x"}}), 404, "not_found"));
  EXPECT_EQ(StoreSnapshot(), before);

  // The answer, as a message in the session, resumes the sub-agent and then the orchestrator.
  Posted answer = Send(sid_, "Lisbon");
  EXPECT_EQ(answer.execution_id, posted_.execution_id) << "the message answers the paused run, it starts none";
  ASSERT_NO_FATAL_FAILURE(ExpectAnswered(*stream_, sid_, posted_.execution_id, "All set: booked from Lisbon"));
  // Each model was asked once per step: nothing was asked again.
  auto asker = RequestsOf("ASKER");
  ASSERT_EQ(asker.size(), 2u);
  auto tool_messages = ToolMessagesOf(asker[1]);
  ASSERT_EQ(tool_messages.size(), 1u);
  EXPECT_EQ(StringAt(tool_messages[0], "content"), "Lisbon");
  EXPECT_EQ(RequestsOf("ORCHESTRATOR").size(), 2u);
  EXPECT_EQ(StringAt(Execution(child_), "status"), "completed");
  EXPECT_EQ(StringAt(ContextOf(Tasks(posted_.execution_id).at(0)), "status"), "completed");
  EXPECT_TRUE(stream_->AwaitType("execution.completed", child_)) << stream_->Describe();
  EXPECT_EQ(ListAll("schema_name=agent.response.v1&tag=agent:asker").size(), 1u);

  // Neither waits any more: answering again is a conflict.
  EXPECT_TRUE(IsError(PostJson("/executions/" + child_ + "/input", json::object{{"content", "Porto"}}), 409, "conflict"));
  EXPECT_TRUE(IsError(PostJson("/executions/" + posted_.execution_id + "/input", json::object{{"content", "Porto"}}),
                      409, "conflict"));
}

TEST_F(e2e_nested_user_input, TheSubAgentsOwnExecutionTakesTheAnswerToo) {
  AskAndAwaitThePause();
  Response r = PostJson("/executions/" + child_ + "/input", json::object{{"content", "Lisbon"}});
  ASSERT_EQ(r.status, 200) << r.Describe();
  EXPECT_EQ(StringAt(ObjectOf(r), "id"), posted_.execution_id) << "answered through the session's run";
  ASSERT_NO_FATAL_FAILURE(ExpectAnswered(*stream_, sid_, posted_.execution_id, "All set: booked from Lisbon"));
}

TEST_F(e2e_nested_user_input, CancellingThePausedRootCancelsTheWaitingSubAgent) {
  AskAndAwaitThePause();
  Response r = client().Post("/executions/" + posted_.execution_id + "/cancel", "");
  ASSERT_EQ(r.status, 200) << r.Describe();
  EXPECT_TRUE(Eventually([&] { return StringAt(Execution(child_), "status") == "cancelled"; })) << JsonText(Execution(child_));
  EXPECT_EQ(StringAt(Execution(posted_.execution_id), "status"), "cancelled");
  EXPECT_EQ(StringAt(ContextOf(Tasks(posted_.execution_id).at(0)), "status"), "cancelled");
  EXPECT_EQ(RequestsOf("ASKER").size(), 1u);
  EXPECT_TRUE(IsError(PostJson("/executions/" + child_ + "/input", json::object{{"content", "x"}}), 409, "conflict"));
}

TEST_F(e2e_nested_user_input, CancellingTheWaitingSubAgentItselfIsReadWhenTheSessionsRunGoesOn) {
  AskAndAwaitThePause();
  Response r = client().Post("/executions/" + child_ + "/cancel", "");
  ASSERT_EQ(r.status, 200) << r.Describe();
  EXPECT_TRUE(Eventually([&] { return StringAt(Execution(child_), "status") == "cancelled"; })) << JsonText(Execution(child_));
  EXPECT_EQ(StringAt(Execution(posted_.execution_id), "status"), "paused");
  // Resumed without an answer, the session's run reads the cancellation as the task's result.
  ASSERT_EQ(client().Post("/executions/" + posted_.execution_id + "/resume", "").status, 200);
  auto end = stream_->AwaitEnd(posted_.execution_id);
  ASSERT_TRUE(end) << stream_->Describe();
  EXPECT_EQ(end->event_type, "execution.completed") << stream_->Describe();
  auto boss = RequestsOf("ORCHESTRATOR");
  ASSERT_EQ(boss.size(), 2u);
  auto results = ToolMessagesOf(boss[1]);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_NE(StringAt(results[0], "content").find("cancelled"), std::string::npos) << JsonText(results[0]);
  EXPECT_EQ(StringAt(ContextOf(Tasks(posted_.execution_id).at(0)), "status"), "cancelled");
  EXPECT_EQ(RequestsOf("ASKER").size(), 1u);
}

TEST_F(e2e_nested_agents, AQuestionFromDeepInTheTreePausesEveryOrchestratorAboveIt) {
  Script({Rule(Match({{"any_content_contains", "ORCHESTRATOR"}, {"last_role", "user"}}),
               ToolCallsReply({{"delegate", Delegate("planner", "plan the trip")}})),
          Rule(Match({{"any_content_contains", "ORCHESTRATOR"}, {"last_role", "tool"}}), Text("All set: {{last_tool_content}}")),
          Rule(Match({{"any_content_contains", "PLANNER"}, {"last_role", "user"}}),
               ToolCallsReply({{"delegate", Delegate("asker", "book the train")}})),
          Rule(Match({{"any_content_contains", "PLANNER"}, {"last_role", "tool"}}), Text("planned: {{last_tool_content}}")),
          Rule(Match({{"any_content_contains", "ASKER"}, {"last_role", "user"}}),
               ToolCallsReply({{"user_input", json::object{{"question", "Which city?"}}}})),
          Rule(Match({{"any_content_contains", "ASKER"}, {"last_role", "tool"}}), Text("booked from {{last_tool_content}}"))});
  Agent("asker", "ASKER");
  Agent("planner", "PLANNER", json::object{{"agents", json::array{"asker"}}});
  SessionAgent("boss", json::object{{"system_prompt", "You are ORCHESTRATOR."},
                                    {"tools", json::array{}},
                                    {"agents", json::array{"planner"}}});
  std::string sid = NewSessionId("boss");
  SessionStream stream(server(), sid);
  ASSERT_TRUE(stream.Open()) << stream.Describe();
  Posted p = Send(sid, "Plan a trip to Porto");
  auto paused = stream.AwaitType("execution.paused", p.execution_id);
  ASSERT_TRUE(paused) << stream.Describe();
  EXPECT_EQ(StringAt(paused->metadata, "agent_id"), "asker") << JsonText(paused->data);

  // The planner waits as well (it gave up its worker), its task too, with the asker's question.
  auto root_tasks = Tasks(p.execution_id);
  ASSERT_EQ(root_tasks.size(), 1u);
  json::object planner_task = ContextOf(root_tasks[0]);
  EXPECT_EQ(StringAt(planner_task, "status"), "waiting") << JsonText(planner_task);
  EXPECT_EQ(StringAt(ObjAt(planner_task, "awaiting_input"), "agent_id"), "asker") << JsonText(planner_task);
  std::string planner = StringAt(planner_task, "execution_id");
  EXPECT_EQ(StringAt(Execution(planner), "status"), "paused");
  auto planner_tasks = Tasks(planner);
  ASSERT_EQ(planner_tasks.size(), 1u);
  EXPECT_EQ(StringAt(ContextOf(planner_tasks[0]), "status"), "waiting") << JsonText(planner_tasks[0]);
  std::string asker = StringAt(ContextOf(planner_tasks[0]), "execution_id");
  EXPECT_EQ(StringAt(Execution(asker), "status"), "paused");
  EXPECT_EQ(StringAt(Execution(asker), "root_execution_id"), p.execution_id);
  EXPECT_EQ(IntAt(Execution(asker), "depth"), 2);

  Send(sid, "Lisbon");
  ASSERT_NO_FATAL_FAILURE(ExpectAnswered(stream, sid, p.execution_id, "All set: planned: booked from Lisbon"));
  EXPECT_EQ(RequestsOf("ASKER").size(), 2u);
  EXPECT_EQ(RequestsOf("PLANNER").size(), 2u);
  EXPECT_EQ(RequestsOf("ORCHESTRATOR").size(), 2u);
  for (const auto& id : {planner, asker}) EXPECT_EQ(StringAt(Execution(id), "status"), "completed") << id;
}

class e2e_nested_user_input_recovery : public Recovering<e2e_nested_user_input> {};

TEST_F(e2e_nested_user_input_recovery, KillWhileWaitingThenTheAnswerResumesWithoutAskingAnyModelAgain) {
  AskAndAwaitThePause();
  stream_.reset();
  server().Kill9();
  ASSERT_TRUE(server().Start()) << server().error();
  ReconnectTools();
  // After the restart the tree still waits.
  ASSERT_TRUE(Eventually([&] { return StringAt(Execution(child_), "status") == "paused"; }));
  EXPECT_EQ(StringAt(Execution(posted_.execution_id), "status"), "paused");

  SessionStream stream(server(), sid_);
  ASSERT_TRUE(stream.Open()) << stream.Describe();
  Posted answer = Send(sid_, "Lisbon");
  EXPECT_EQ(answer.execution_id, posted_.execution_id);
  ASSERT_NO_FATAL_FAILURE(ExpectAnswered(stream, sid_, posted_.execution_id, "All set: booked from Lisbon"));
  EXPECT_EQ(RequestsOf("ASKER").size(), 2u);
  EXPECT_EQ(RequestsOf("ORCHESTRATOR").size(), 2u);
  EXPECT_EQ(ListAll("schema_name=user.message.v1&tag=delegated").size(), 1u);
  EXPECT_EQ(ListAll("schema_name=agent.response.v1&tag=agent:asker").size(), 1u);
}

class e2e_nested_agents_recovery : public Recovering<e2e_nested_agents> {};

TEST_F(e2e_nested_agents_recovery, KillMidTreeCompletesOnceWithoutRepeatingFinishedWork) {
  Script({Rule(Match({{"any_content_contains", "ORCHESTRATOR"}, {"last_role", "user"}}),
               ToolCallsReply({{"delegate", Delegate("quick", "be quick")}, {"delegate", Delegate("slow", "be slow")}})),
          Rule(Match({{"any_content_contains", "ORCHESTRATOR"}, {"last_role", "tool"}}), Text("all done")),
          Rule(Match({{"any_content_contains", "QUICK"}}), Text("quick done")),
          Rule(Match({{"any_content_contains", "SLOW"}}), json::object{{"content", "slow done"}, {"delay_ms", 1500}})});
  Agent("quick", "QUICK");
  Agent("slow", "SLOW");
  Agent("boss", "ORCHESTRATOR", json::object{{"agents", json::array{"quick", "slow"}}});
  std::string message = Say("go", "boss");
  // One sub-agent has answered, the other waits for its model: crash now.
  tools().AwaitEvent("agent.response.v1", [](const json::object& e) { return HasTag(e, "agent:quick"); });
  ASSERT_TRUE(AwaitRequests("SLOW", 1));
  server().Kill9();
  ASSERT_TRUE(server().Start()) << server().error();
  ReconnectTools();

  json::object answer = AwaitAnswer(message);
  ASSERT_EQ(StringAt(ContextOf(answer), "status"), "success") << JsonText(answer);
  EXPECT_EQ(StringAt(ContextOf(answer), "message"), "all done");
  // The orchestrator's first reply and the finished sub-agent were not asked again.
  auto boss = RequestsOf("ORCHESTRATOR");
  ASSERT_EQ(boss.size(), 2u);
  EXPECT_EQ(RequestsOf("QUICK").size(), 1u);
  auto results = ToolMessagesOf(boss[1]);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(StringAt(results[0], "content"), "quick done");
  EXPECT_EQ(StringAt(results[1], "content"), "slow done");
  // Each request was written once and answered once.
  EXPECT_EQ(ListAll("schema_name=user.message.v1&tag=delegated").size(), 2u);
  EXPECT_EQ(ListAll("schema_name=agent.response.v1&tag=agent:quick").size(), 1u);
  EXPECT_EQ(ListAll("schema_name=agent.response.v1&tag=agent:slow").size(), 1u);
  EXPECT_EQ(ListAll("schema_name=agent.response.v1&tag=agent:boss").size(), 1u);
  auto tasks = Tasks(StringAt(ContextOf(answer), "execution_id"));
  ASSERT_EQ(tasks.size(), 2u);
  for (const auto& task : tasks) EXPECT_EQ(StringAt(ContextOf(task), "status"), "completed") << JsonText(task);
}

TEST_F(e2e_nested_agents, BadDelegateCallsAreAnsweredWithErrorsTheModelReads) {
  Script({Rule(Match({{"any_content_contains", "ORCHESTRATOR"}, {"last_role", "user"}}),
               ToolCallsReply({{"delegate", Delegate("stranger", "x")},
                               {"delegate", json::object{{"agent", "helper"}}},
                               {"delegate", Delegate("helper", "fine")},
                               {"delegate", Delegate("helper", "one too many")}})),
          Rule(Match({{"any_content_contains", "ORCHESTRATOR"}, {"last_role", "tool"}}), Text("done")),
          Rule(Match({{"any_content_contains", "HELPER"}}), Text("helped"))});
  Agent("helper", "HELPER");
  Agent("boss", "ORCHESTRATOR", json::object{{"agents", json::array{"helper"}}, {"max_children", 1}});
  json::object answer = AwaitAnswer(Say("go", "boss"));
  ASSERT_EQ(StringAt(ContextOf(answer), "status"), "success") << JsonText(answer);
  auto results = ToolMessagesOf(RequestsOf("ORCHESTRATOR").at(1));
  ASSERT_EQ(results.size(), 4u);
  EXPECT_NE(StringAt(results[0], "content").find("unknown_agent"), std::string::npos) << JsonText(results[0]);
  EXPECT_NE(StringAt(results[1], "content").find("invalid_arguments"), std::string::npos) << JsonText(results[1]);
  EXPECT_EQ(StringAt(results[2], "content"), "helped");
  EXPECT_NE(StringAt(results[3], "content").find("too_many_children"), std::string::npos) << JsonText(results[3]);
  EXPECT_EQ(ListAll("schema_name=agent.task.v1").size(), 1u);

  // Clients cannot write task records: they are cairn's.
  Response forged = client().Post("/breadcrumbs", R"({"title":"t","schema_name":"agent.task.v1","context":{}})");
  EXPECT_TRUE(IsClientError(forged)) << forged.body;
}

}  // namespace
}  // namespace cairn::e2e
