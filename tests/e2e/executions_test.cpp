// Executions end to end (docs/executions.md): one record shape for every run, lineage from an
// agent's tool calls, GET /executions/{id}/tree, cancelling a tree, and a session run assembling
// the context its agent subscribed to. The real server runs against the scripted fixture LLM;
// what the model saw is read back from the fixture.
#include "session_support.h"

namespace cairn::e2e {
namespace {

// Every system message of a chat request, joined.
std::string SystemTextOf(const json::object& request) {
  std::string text;
  for (const auto& m : MessagesOf(request)) {
    if (StringAt(m.as_object(), "role") == "system") text += StringAt(m.as_object(), "content") + "\n";
  }
  return text;
}

const json::array& ChildrenOf(const json::object& node) {
  static const json::array kNone;
  const json::value* children = node.if_contains("children");
  return children && children->is_array() ? children->as_array() : kNone;
}

class e2e_executions : public SessionTest {
 protected:
  json::object Tree(const std::string& id) {
    Response r = client().Get("/executions/" + id + "/tree");
    EXPECT_EQ(r.status, 200) << r.Describe();
    return r.status == 200 ? ObjectOf(r) : json::object{};
  }
};

// The seeds' promise: "the assistant knows the page I'm on", through a session, and the tool call
// the agent makes is a child of its run.
TEST_F(e2e_executions, ASessionRunSeesThePageItSubscribedToAndItsToolCallIsAChild) {
  Script({Rule(Match({{"last_role", "user"}}), ToolCallsReply({{"echo", json::object{{"look", "pricing"}}}})),
          Rule(Match({{"last_role", "tool"}}), Text("You are on the pricing page."))});
  json::array selectors{
      json::object{{"role", "trigger"}, {"schema_name", "user.message.v1"}, {"types", json::array{"breadcrumb.created"}},
                   {"context_match", json::array{json::object{{"path", "$.agent_id"}, {"op", "eq"}, {"value", "browser"}}}}},
      json::object{{"role", "context"}, {"schema_name", "browser.page.context.v1"}, {"key", "page"}, {"fetch", "latest"}}};
  SessionAgent("browser", json::object{{"subscriptions", json::object{{"selectors", selectors}}}, {"tools", json::array{"echo"}}});
  // Two page visits: the latest one is what the agent sees, rendered through its llm_hints.
  tools().Create(json::object{{"title", "Home"}, {"schema_name", "browser.page.context.v1"},
                              {"context", json::object{{"url", "https://shop.example/home"}}}});
  tools().Create(json::object{
      {"title", "Pricing"},
      {"schema_name", "browser.page.context.v1"},
      {"context", json::object{{"url", "https://shop.example/pricing"}, {"secret_cookie", "do-not-show"}}},
      {"llm_hints", json::object{{"template", "The user is looking at {{url}}"}}}});

  std::string sid = NewSessionId("browser", json::object{{"initial_context_url", "https://shop.example/start"}});
  SessionStream stream(server(), sid);
  ASSERT_TRUE(stream.Open()) << stream.Describe();
  Posted p = Send(sid, "what page am I on?",
                  json::object{{"context_url", "https://shop.example/pricing#plans"}, {"related_type", "product"},
                               {"related_id", "p-42"}});
  auto end = stream.AwaitEnd(p.execution_id);
  ASSERT_TRUE(end) << stream.Describe();
  ASSERT_EQ(end->event_type, "execution.completed") << stream.Describe();

  auto requests = LlmRequests();
  ASSERT_EQ(requests.size(), 2u);
  std::string system = SystemTextOf(requests[0]);
  EXPECT_NE(system.find("The user is looking at https://shop.example/pricing"), std::string::npos) << system;
  EXPECT_EQ(system.find("shop.example/home"), std::string::npos) << "only the latest page: " << system;
  EXPECT_EQ(system.find("do-not-show"), std::string::npos) << "the record's llm_hints decide: " << system;
  EXPECT_NE(system.find("https://shop.example/start"), std::string::npos) << "initial_context_url: " << system;
  EXPECT_NE(system.find("https://shop.example/pricing#plans"), std::string::npos) << "context_url: " << system;
  EXPECT_NE(system.find("p-42"), std::string::npos) << "related_id: " << system;

  // The session run and its tool call: one tree.
  json::object run = GetExecution(p.execution_id);
  EXPECT_EQ(StringAt(run, "kind"), "agent");
  EXPECT_EQ(StringAt(run, "executor"), "browser");
  EXPECT_EQ(StringAt(run, "session_id"), sid);
  EXPECT_EQ(StringAt(run, "root_execution_id"), p.execution_id);
  EXPECT_EQ(IntAt(run, "depth"), 0);
  EXPECT_FALSE(StringAt(ObjAt(run, "definition"), "id").empty()) << JsonText(run);
  json::object tree = Tree(p.execution_id);
  EXPECT_EQ(StringAt(tree, "status"), "completed");
  ASSERT_EQ(ChildrenOf(tree).size(), 1u) << JsonText(tree);
  const json::object& child = ChildrenOf(tree)[0].as_object();
  EXPECT_EQ(StringAt(child, "kind"), "tool");
  EXPECT_EQ(StringAt(child, "executor"), "echo");
  EXPECT_EQ(StringAt(child, "status"), "completed");
  EXPECT_EQ(StringAt(child, "parent_execution_id"), p.execution_id);
  EXPECT_EQ(IntAt(child, "depth"), 1);
  EXPECT_TRUE(ChildrenOf(child).empty());

  // The session's stream tells the child's end, naming it and its parent.
  auto child_end = stream.Await(
      [&](const SessionEvent& e) { return e.execution_id == StringAt(child, "id"); }, kSessionWait, "the tool run's end");
  ASSERT_TRUE(child_end) << stream.Describe();
  EXPECT_EQ(child_end->event_type, "execution.completed");
  EXPECT_EQ(StringAt(child_end->data, "parent_execution_id"), p.execution_id);
  EXPECT_EQ(StringAt(child_end->metadata, "executor"), "echo");
  EXPECT_LT(child_end->seq, end->seq) << "the tool ended before the run that waited for it";

  // The child through the listing filters and on its own.
  auto children = ListEvery("/executions?parent=" + p.execution_id);
  ASSERT_EQ(children.size(), 1u);
  EXPECT_EQ(StringAt(children[0], "id"), StringAt(child, "id"));
  EXPECT_EQ(StringAt(children[0], "session_id"), sid) << "a child works for its root's session";
  EXPECT_EQ(ListEvery("/executions?root=" + p.execution_id).size(), 2u);
  EXPECT_EQ(ListEvery("/executions?kind=tool&executor=echo&session_id=" + sid).size(), 1u);
  json::object tool_run = GetExecution(StringAt(child, "id"));
  EXPECT_EQ(StringAt(tool_run, "root_execution_id"), p.execution_id);
  EXPECT_EQ(StringAt(ObjAt(tool_run, "input"), "look"), "pricing");
  // A child's tree is its own subtree.
  EXPECT_TRUE(ChildrenOf(Tree(StringAt(child, "id"))).empty());
}

TEST_F(e2e_executions, ABusTriggeredAgentRunAndItsToolCallFormATree) {
  Script({Rule(Match({{"last_role", "user"}}), ToolCallsReply({{"echo", json::object{{"n", 1}}}})),
          Rule(Match({{"last_role", "tool"}}), Text("echoed"))});
  DefineAgent(json::object{{"agent_id", "bus-agent"}, {"tools", json::array{"echo"}}});
  std::string message = Say("echo something", "bus-agent");
  json::object answer = AwaitAnswer(message);
  std::string id = StringAt(ContextOf(answer), "execution_id");
  ASSERT_FALSE(id.empty()) << JsonText(answer);

  json::object run = GetExecution(id);
  EXPECT_EQ(StringAt(run, "kind"), "agent");
  EXPECT_EQ(StringAt(run, "status"), "completed");
  EXPECT_EQ(StringAt(ObjAt(run, "trigger"), "breadcrumb_id"), message);
  EXPECT_EQ(IntAt(ObjAt(run, "token_usage"), "total") > 0, true) << JsonText(run);
  EXPECT_EQ(IntAt(run, "step_count"), 2);
  json::object tree = Tree(id);
  ASSERT_EQ(ChildrenOf(tree).size(), 1u) << JsonText(tree);
  EXPECT_EQ(StringAt(ChildrenOf(tree)[0].as_object(), "executor"), "echo");
  EXPECT_EQ(ListEvery("/executions?kind=agent&executor=bus-agent").size(), 1u);
  EXPECT_EQ(ListEvery("/executions?agent_id=bus-agent").size(), 1u);
}

TEST_F(e2e_executions, ATriggerIsRenderedThroughItsLlmHints) {
  Script({Rule(Match({{"last_role", "user"}}), Text("noted"))});
  json::array selectors{json::object{{"role", "trigger"}, {"schema_name", "alert.v1"}}};
  DefineAgent(json::object{{"agent_id", "watcher"}, {"subscriptions", json::object{{"selectors", selectors}}}});
  json::object alert = tools().Create(json::object{
      {"title", "Disk alert"},
      {"schema_name", "alert.v1"},
      {"context", json::object{{"level", "high"}, {"token", "s3cr3t"}}},
      {"llm_hints", json::object{{"template", "Alert of level {{level}}"}}}});
  json::object answer = AwaitAnswer(StringAt(alert, "id"));
  ASSERT_EQ(StringAt(ContextOf(answer), "status"), "success") << JsonText(answer);
  auto requests = LlmRequests();
  ASSERT_EQ(requests.size(), 1u);
  std::vector<std::string> turns = TurnsOf(requests[0]);
  ASSERT_FALSE(turns.empty());
  EXPECT_NE(turns.back().find("Alert of level high"), std::string::npos) << turns.back();
  EXPECT_EQ(turns.back().find("s3cr3t"), std::string::npos) << "the hints leave it out: " << turns.back();
}

TEST_F(e2e_executions, CancellingASessionRunCancelsTheToolItWaitsFor) {
  // A process tool that notes it started, then hangs far longer than the test.
  std::string marker = server().root_dir() + "/hang.started";
  std::string script = WriteScript("hang.sh", "#!/bin/sh\n: > " + marker + "\nexec sleep 30\n");
  tools().DefineTool({{"name", "hang"}, {"runtime", "process"}, {"command", json::array{json::value(script)}},
                      {"env", json::array{"PATH"}}, {"cwd", server().root_dir()}, {"timeout_ms", 60000}});
  Script({Rule(Match({{"last_role", "user"}}), ToolCallsReply({{"hang", json::object{}}})),
          Rule(Match({{"last_role", "tool"}}), Text("woke up"))});
  SessionAgent("napper", json::object{{"tools", json::array{"hang"}}});
  std::string sid = NewSessionId("napper");
  SessionStream stream(server(), sid);
  ASSERT_TRUE(stream.Open()) << stream.Describe();
  Posted p = Send(sid, "hang around");
  ASSERT_TRUE(WaitForFile(marker, kSessionWait)) << "the tool never started";

  // While it hangs, the tool's run is visible as running (it has no record before it ends).
  auto running = ListEvery("/executions?status=running&kind=tool&root=" + p.execution_id);
  ASSERT_EQ(running.size(), 1u);
  EXPECT_EQ(StringAt(running[0], "parent_execution_id"), p.execution_id);
  EXPECT_EQ(StringAt(GetExecution(StringAt(running[0], "id")), "status"), "running");

  auto started = std::chrono::steady_clock::now();
  Response cancelled = client().Post("/executions/" + p.execution_id + "/cancel", "");
  ASSERT_EQ(cancelled.status, 200) << cancelled.Describe();
  auto end = stream.AwaitEnd(p.execution_id);
  ASSERT_TRUE(end) << stream.Describe();
  EXPECT_EQ(end->event_type, "execution.cancelled");
  // The tool run ends too (its record says cancelled), long before its 30 s sleep.
  json::object record = tools().AwaitEvent(
      "agent.execution.v1", [&](const json::object& e) { return StringAt(ContextOf(e), "parent_execution_id") == p.execution_id; });
  EXPECT_EQ(StringAt(ContextOf(record), "status"), "cancelled") << JsonText(record);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
  json::object tree = Tree(p.execution_id);
  ASSERT_EQ(ChildrenOf(tree).size(), 1u) << JsonText(tree);
  EXPECT_EQ(StringAt(ChildrenOf(tree)[0].as_object(), "status"), "cancelled");
}

TEST_F(e2e_executions, ABusTriggeredRunInFlightIsVisibleAndCancelledWithItsTool) {
  std::string marker = server().root_dir() + "/hang2.started";
  std::string script = WriteScript("hang2.sh", "#!/bin/sh\n: > " + marker + "\nexec sleep 30\n");
  tools().DefineTool({{"name", "hang"}, {"runtime", "process"}, {"command", json::array{json::value(script)}},
                      {"env", json::array{"PATH"}}, {"cwd", server().root_dir()}, {"timeout_ms", 60000}});
  Script({Rule(Match({{"last_role", "user"}}), ToolCallsReply({{"hang", json::object{}}})),
          Rule(Match({{"last_role", "tool"}}), Text("never"))});
  DefineAgent(json::object{{"agent_id", "waiter"}, {"tools", json::array{"hang"}}});
  std::string message = Say("wait for it", "waiter");
  ASSERT_TRUE(WaitForFile(marker, kSessionWait)) << "the tool never started";

  // Neither run has a record yet; both are visible as running, the tool under the agent.
  auto agents = ListEvery("/executions?kind=agent&executor=waiter&status=running");
  ASSERT_EQ(agents.size(), 1u);
  std::string id = StringAt(agents[0], "id");
  EXPECT_EQ(StringAt(ObjAt(agents[0], "trigger"), "breadcrumb_id"), message);
  json::object tree = Tree(id);
  ASSERT_EQ(ChildrenOf(tree).size(), 1u) << JsonText(tree);
  EXPECT_EQ(StringAt(ChildrenOf(tree)[0].as_object(), "status"), "running");

  Response cancelled = client().Post("/executions/" + id + "/cancel", "");
  ASSERT_EQ(cancelled.status, 200) << cancelled.Describe();
  EXPECT_TRUE(ObjectOf(cancelled).at("cancel_requested").as_bool());
  json::object answer = AwaitAnswer(message);
  EXPECT_EQ(StringAt(ContextOf(answer), "status"), "error") << JsonText(answer);
  json::object run = GetExecution(id);
  EXPECT_EQ(StringAt(run, "status"), "cancelled") << JsonText(run);
  EXPECT_EQ(StringAt(ObjAt(run, "error"), "code"), "cancelled");
  // The tool's run ends on its own (its process is killed): its record says cancelled.
  json::object tool_record = tools().AwaitEvent(
      "agent.execution.v1", [&](const json::object& e) { return StringAt(ContextOf(e), "parent_execution_id") == id; });
  EXPECT_EQ(StringAt(ContextOf(tool_record), "status"), "cancelled") << JsonText(tool_record);
  json::object ended = Tree(id);
  ASSERT_EQ(ChildrenOf(ended).size(), 1u) << JsonText(ended);
  EXPECT_EQ(StringAt(ChildrenOf(ended)[0].as_object(), "status"), "cancelled");
  EXPECT_EQ(LlmRequests().size(), 1u) << "the model is not asked again after the cancel";
  // An ended run cannot be cancelled again.
  EXPECT_TRUE(IsError(client().Post("/executions/" + id + "/cancel", ""), 409, "conflict"));
}

TEST_F(e2e_executions, Kill9InTheMiddleOfATreeResumesItWithoutRepeatingACall) {
  Script({Rule(Match({{"last_role", "user"}}), ToolCallsReply({{"sleep", json::object{{"ms", 1500}}}})),
          Rule(Match({{"last_role", "tool"}}), Text("rested"))});
  SessionAgent("sleeper");
  std::string sid = NewSessionId("sleeper");
  Posted p;
  {
    SessionStream stream(server(), sid);
    ASSERT_TRUE(stream.Open()) << stream.Describe();
    p = Send(sid, "take a nap");
    ASSERT_TRUE(stream.AwaitType("tool.called", p.execution_id)) << stream.Describe();
  }
  server().Kill9();
  ASSERT_TRUE(server().Start()) << server().error();
  ReconnectTools();
  SessionStream stream(server(), sid, {}, "since=0");
  ASSERT_TRUE(stream.Open()) << stream.Describe();
  auto end = stream.AwaitEnd(p.execution_id);
  ASSERT_TRUE(end) << stream.Describe();
  EXPECT_EQ(end->event_type, "execution.completed") << stream.Describe();

  EXPECT_EQ(LlmRequests().size(), 2u) << "each model call once";
  EXPECT_EQ(ListAll("schema_name=tool.request.v1").size(), 1u) << "the tool was requested once";
  json::object tree = Tree(p.execution_id);
  EXPECT_EQ(StringAt(tree, "status"), "completed");
  ASSERT_EQ(ChildrenOf(tree).size(), 1u) << JsonText(tree);
  const json::object& child = ChildrenOf(tree)[0].as_object();
  EXPECT_EQ(StringAt(child, "status"), "completed");
  EXPECT_EQ(StringAt(child, "parent_execution_id"), p.execution_id);
}

TEST_F(e2e_executions, BadFiltersAndUnknownIdsAreRefused) {
  EXPECT_TRUE(IsError(client().Get("/executions?kind=robot"), 400, "bad_request"));
  EXPECT_TRUE(IsError(client().Get("/executions?parent="), 400, "bad_request"));
  EXPECT_TRUE(IsError(client().Get("/executions?agent_id=a&kind=tool"), 400, "bad_request"));
  EXPECT_TRUE(IsError(client().Get("/executions/nope/tree"), 404, "not_found"));
  EXPECT_TRUE(IsError(client().Get("/executions/" + std::string(300, 'x')), 404, "not_found"));
  EXPECT_TRUE(IsError(client().Get("/executions/x/tree?depth=2"), 400, "bad_request"));
  EXPECT_TRUE(IsError(client().Post("/executions/nope/cancel", ""), 404, "not_found"));
  // A client cannot graft its own tool request into someone's tree.
  Response grafted = client().Post(
      "/breadcrumbs", JsonText(json::object{{"schema_name", "tool.request.v1"}, {"title", "graft"},
                                            {"context", json::object{{"tool", "echo"}, {"input", json::object{}},
                                                                     {"execution_id", "someone"},
                                                                     {"root_execution_id", "someone"},
                                                                     {"execution_depth", 0}}}}));
  EXPECT_TRUE(IsError(grafted, 422, "validation_failed")) << grafted.Describe();
}

}  // namespace
}  // namespace cairn::e2e
