// Workflows end to end (docs/workflows.md): workflow.def.v1 definitions run by the real server,
// started with POST /workflows/{name}/runs (a workflow.request.v1 the workflow answers with one
// workflow.result.v1), steps as child executions — tools, agents (against the scripted fixture
// LLM) and other workflows — in parallel where their needs allow, for_each, retries, on_error,
// cancel, and a kill -9 in the middle of a run.
#include "agent_support.h"

namespace cairn::e2e {
namespace {

using namespace std::chrono_literals;

const json::object& ErrorOf(const json::object& record) {
  static const json::object kNone;
  const json::value* error = ContextOf(record).if_contains("error");
  return error && error->is_object() ? error->as_object() : kNone;
}

struct StartedRun {
  std::string execution_id;
  std::string request_id;
};

class e2e_workflows : public AgentTest {
 protected:
  // Survives kill -9 (a process crash), which is all these tests need, and is fast.
  std::vector<std::string> ServerArgs() const override {
    std::vector<std::string> args = AgentTest::ServerArgs();
    args.insert(args.end(), {"--sync", "normal"});
    return args;
  }

  json::object Define(const json::object& context) {
    return tools().Create(json::object{{"schema_name", "workflow.def.v1"}, {"title", context.at("name")}, {"context", context}});
  }
  Response Start(const std::string& name, const json::value& input) {
    return client().Post("/workflows/" + name + "/runs", JsonText(json::object{{"input", input}}));
  }
  StartedRun StartOk(const std::string& name, const json::value& input) {
    Response r = Start(name, input);
    EXPECT_EQ(r.status, 202) << r.Describe();
    json::object body = r.status == 202 ? ObjectOf(r) : json::object{};
    return StartedRun{StringAt(body, "execution_id"), StringAt(body, "request_id")};
  }
  // The workflow.result.v1 event answering `run`.
  json::object AwaitResult(const StartedRun& run) {
    return tools().AwaitEvent("workflow.result.v1", [&](const json::object& e) {
      return StringAt(ContextOf(e), "request_id") == run.request_id;
    });
  }
  json::object Execution(const std::string& id) {
    Response r = client().Get("/executions/" + id);
    EXPECT_EQ(r.status, 200) << r.Describe();
    return r.status == 200 ? ObjectOf(r) : json::object{};
  }
  // The workflow.step.v1 records of a run, by their key (step id, or "<step id>/<index>").
  std::map<std::string, json::object> Steps(const std::string& execution_id) {
    std::map<std::string, json::object> steps;
    for (const auto& record : ListAll("schema_name=workflow.step.v1&include_context=true&tag=" +
                                      UrlEncode("execution:" + execution_id))) {
      const json::object& c = ContextOf(record);
      std::string key = StringAt(c, "step");
      if (c.contains("index") && c.at("index").is_int64()) key += "/" + std::to_string(c.at("index").as_int64());
      steps[key] = c;
    }
    return steps;
  }
  // A process tool running `script` in the test's directory.
  void ProcessTool(const std::string& name, const std::string& script, json::object more = {}) {
    more["name"] = name;
    more["runtime"] = "process";
    more["command"] = json::array{json::value(WriteScript(name + ".sh", script))};
    more["env"] = json::array{"PATH"};
    more["cwd"] = server().root_dir();
    if (!more.contains("timeout_ms")) more["timeout_ms"] = 30000;
    tools().DefineTool(more);
  }
};

TEST_F(e2e_workflows, StepsRunInNeedsOrderInParallelAndPerItemWithTemplatedInputsAndOutput) {
  // left and right each wait for the other to have started: they only end if they run at once.
  std::string dir = server().root_dir();
  auto meet = [&](const std::string& me, const std::string& other) {
    return "#!/bin/sh\ncat > /dev/null\n: > " + dir + "/" + me + ".started\n"
           "i=0; while [ ! -e " + dir + "/" + other + ".started ]; do i=$((i+1)); [ $i -gt 400 ] && exit 1; sleep 0.05; done\n"
           "echo '{\"met\":\"" + other + "\"}' >&3\n";
  };
  ProcessTool("left", meet("left", "right"));
  ProcessTool("right", meet("right", "left"));
  Define(json::object{
      {"name", "fanout"},
      {"input_schema", json::parse(R"({"type":"object","required":["name","items"],
                                       "properties":{"items":{"type":"array"}}})")},
      {"steps", json::parse(R"([
         {"id": "greet", "tool": "echo", "input": {"text": "Hello ${{ input.name }}", "n": "${{ 1 + size(input.items) }}"}},
         {"id": "left", "tool": "left", "needs": ["greet"]},
         {"id": "right", "tool": "right", "needs": ["greet"]},
         {"id": "each", "tool": "echo", "needs": ["greet"], "for_each": "input.items", "concurrency": 2,
          "input": {"item": "${{ item }}", "at": "${{ index }}", "twice": "${{ item * 2 }}"}},
         {"id": "sum", "tool": "echo", "needs": ["left", "right", "each"],
          "input": {"total": "${{ steps.each.output.map(o, o.twice).exists(t, t == 6) }}",
                    "met": ["${{ steps.left.output.met }}", "${{ steps.right.output.met }}"]}}])")},
      {"output", json::parse(R"({"greeting": "${{ steps.greet.output.text }}", "n": "${{ steps.greet.output.n }}",
                                  "sum": "${{ steps.sum.output }}", "items": "${{ size(steps.each.output) }}"})")}});
  StartedRun run = StartOk("fanout", json::parse(R"({"name": "Ada", "items": [1, 2, 3]})"));
  json::object result = AwaitResult(run);
  ASSERT_EQ(StatusOf(result), "success") << JsonText(result);
  EXPECT_EQ(OutputOf(result), json::parse(R"({"greeting": "Hello Ada", "n": 4, "items": 3,
                                               "sum": {"total": true, "met": ["right", "left"]}})"));
  EXPECT_EQ(StringAt(ContextOf(result), "execution_id"), run.execution_id);

  json::object execution = Execution(run.execution_id);
  EXPECT_EQ(StringAt(execution, "kind"), "workflow");
  EXPECT_EQ(StringAt(execution, "status"), "completed");
  EXPECT_EQ(execution.at("input"), json::parse(R"({"name": "Ada", "items": [1, 2, 3]})"));
  EXPECT_EQ(IntAt(execution, "step_count"), 7);

  // Every unit is a child execution of the run, and recorded as a completed step.
  Response tree = client().Get("/executions/" + run.execution_id + "/tree");
  ASSERT_EQ(tree.status, 200) << tree.Describe();
  json::object root = ObjectOf(tree);
  const json::array& children = root.at("children").as_array();
  EXPECT_EQ(children.size(), 7u);
  for (const auto& child : children) {
    EXPECT_EQ(StringAt(child.as_object(), "parent_execution_id"), run.execution_id);
    EXPECT_EQ(StringAt(child.as_object(), "status"), "completed");
  }
  auto steps = Steps(run.execution_id);
  EXPECT_EQ(steps.size(), 7u);
  for (const char* key : {"greet", "left", "right", "each/0", "each/1", "each/2", "sum"}) {
    ASSERT_TRUE(steps.count(key)) << key;
    EXPECT_EQ(StringAt(steps[key], "status"), "completed") << key;
    EXPECT_EQ(IntAt(steps[key], "attempt"), 1) << key;
  }
}

TEST_F(e2e_workflows, AFailingStepIsRetriedAndOnErrorDecidesWhetherTheRunGoesOn) {
  // flaky fails twice, then answers; broken always fails.
  std::string counter = server().root_dir() + "/flaky.count";
  ProcessTool("flaky", "#!/bin/sh\ncat > /dev/null\necho x >> " + counter + "\n"
                       "[ $(wc -l < " + counter + ") -ge 3 ] || { echo 'not yet' >&2; exit 1; }\n"
                       "echo '{\"third\":true}' >&3\n");
  ProcessTool("broken", "#!/bin/sh\ncat > /dev/null\necho 'it broke' >&2\nexit 3\n");
  Define(json::object{{"name", "tolerant"},
                      {"steps", json::parse(R"([
         {"id": "flaky", "tool": "flaky", "retry": {"max_attempts": 3, "backoff_ms": 10, "max_backoff_ms": 20}},
         {"id": "broken", "tool": "broken", "on_error": "continue"},
         {"id": "after", "tool": "echo", "needs": ["broken", "flaky"],
          "when": "steps.broken.status == 'failed'", "input": {"saw": "${{ steps.broken.status }}"}},
         {"id": "never", "tool": "echo", "needs": ["broken"], "when": "steps.broken.status == 'completed'"}])")}});
  StartedRun run = StartOk("tolerant", json::object{});
  json::object result = AwaitResult(run);
  ASSERT_EQ(StatusOf(result), "success") << JsonText(result);
  auto steps = Steps(run.execution_id);
  EXPECT_EQ(StringAt(steps["flaky"], "status"), "completed");
  EXPECT_EQ(IntAt(steps["flaky"], "attempt"), 3);
  EXPECT_EQ(StringAt(steps["broken"], "status"), "failed");
  EXPECT_NE(JsonText(steps["broken"].at("error")).find("it broke"), std::string::npos) << JsonText(steps["broken"]);
  EXPECT_EQ(StringAt(steps["after"], "status"), "completed");
  EXPECT_EQ(steps["after"].at("output"), json::parse(R"({"saw": "failed"})"));
  EXPECT_EQ(StringAt(steps["never"], "status"), "skipped");
  EXPECT_EQ(ListIds("schema_name=tool.request.v1&tag=" + UrlEncode("tool:request") + "&tag=" +
                    UrlEncode("execution:" + run.execution_id)).size(),
            5u);  // flaky 3 times, broken once, after once

  // The same failure without on_error: continue fails the run, naming the step; what needs it never runs.
  Define(json::object{{"name", "strict"},
                      {"steps", json::parse(R"([{"id": "broken", "tool": "broken"},
                                               {"id": "next", "tool": "echo", "needs": ["broken"]}])")}});
  StartedRun strict = StartOk("strict", json::object{});
  json::object failed = AwaitResult(strict);
  EXPECT_EQ(StatusOf(failed), "error") << JsonText(failed);
  EXPECT_EQ(StringAt(ErrorOf(failed), "code"), "step_failed");
  EXPECT_NE(StringAt(ErrorOf(failed), "message").find("step broken failed"), std::string::npos) << JsonText(failed);
  EXPECT_EQ(StringAt(Execution(strict.execution_id), "status"), "failed");
  EXPECT_FALSE(Steps(strict.execution_id).count("next"));
}

TEST_F(e2e_workflows, AWorkflowStepAndAnAgentStepRunAsChildExecutions) {
  Script({Rule(Match({{"last_role", "user"}}), json::object{{"content", "Summary: {{last_content}}"}})});
  DefineAgent(json::object{{"agent_id", "summariser"}, {"system_prompt", "Summarise."}});
  Define(json::object{{"name", "inner"},
                      {"steps", json::parse(R"([{"id": "double", "tool": "echo", "input": {"v": "${{ input.x * 2 }}"}}])")},
                      {"output", "${{ steps.double.output.v }}"}});
  Define(json::object{{"name", "outer"},
                      {"steps", json::parse(R"([
         {"id": "nested", "workflow": "inner", "input": {"x": "${{ input.x }}"}},
         {"id": "tell", "agent": "summariser", "needs": ["nested"], "input": "the answer is ${{ steps.nested.output }}"}])")},
                      {"output", json::parse(R"({"value": "${{ steps.nested.output }}", "said": "${{ steps.tell.output }}"})")}});
  StartedRun run = StartOk("outer", json::object{{"x", 21}});
  json::object result = AwaitResult(run);
  ASSERT_EQ(StatusOf(result), "success") << JsonText(result);
  EXPECT_EQ(OutputOf(result), json::parse(R"({"value": 42, "said": "Summary: the answer is 42"})"));

  Response tree = client().Get("/executions/" + run.execution_id + "/tree");
  ASSERT_EQ(tree.status, 200) << tree.Describe();
  std::map<std::string, json::object> children;
  json::object root = ObjectOf(tree);
  for (const auto& child : root.at("children").as_array()) {
    children[StringAt(child.as_object(), "kind")] = child.as_object();
  }
  ASSERT_TRUE(children.count("workflow") && children.count("agent")) << tree.body;
  EXPECT_EQ(StringAt(children["workflow"], "executor"), "inner");
  EXPECT_EQ(StringAt(children["agent"], "executor"), "summariser");
  // The inner workflow's own step is its child: a grandchild of the outer run.
  const json::value* grandchildren = children["workflow"].if_contains("children");
  ASSERT_TRUE(grandchildren && grandchildren->is_array() && grandchildren->as_array().size() == 1) << tree.body;
  EXPECT_EQ(StringAt(grandchildren->as_array()[0].as_object(), "parent_execution_id"), StringAt(children["workflow"], "id"));
  EXPECT_EQ(StringAt(Execution(StringAt(grandchildren->as_array()[0].as_object(), "id")), "root_execution_id"),
            run.execution_id);
}

TEST_F(e2e_workflows, CancellingARunStopsItAndTheStepItWaitsFor) {
  Define(json::object{{"name", "slow"},
                      {"steps", json::parse(R"([{"id": "nap", "tool": "sleep", "input": {"ms": 60000}},
                                               {"id": "after", "tool": "echo", "needs": ["nap"]}])")}});
  StartedRun run = StartOk("slow", json::object{});
  // The nap's run is under way once its step is recorded running (with its request).
  tools().AwaitEvent("workflow.step.v1", [&](const json::object& e) {
    return StringAt(ContextOf(e), "execution_id") == run.execution_id && StringAt(ContextOf(e), "status") == "running";
  });
  Response cancel = client().Post("/executions/" + run.execution_id + "/cancel", "");
  ASSERT_EQ(cancel.status, 200) << cancel.Describe();
  json::object result = AwaitResult(run);
  EXPECT_EQ(StatusOf(result), "error");
  EXPECT_EQ(StringAt(ErrorOf(result), "code"), "cancelled") << JsonText(result);
  EXPECT_EQ(StringAt(Execution(run.execution_id), "status"), "cancelled");
  // The sleep's run was cancelled with it (its answer is an error), and nothing after it ran.
  std::string nap_request = run.execution_id + "-nap-1";
  json::object nap = tools().AwaitResponse(nap_request);
  EXPECT_EQ(StatusOf(nap), "error") << JsonText(nap);
  EXPECT_FALSE(Steps(run.execution_id).count("after"));
}

TEST_F(e2e_workflows, Kill9InTheMiddleResumesWithoutRepeatingACompletedStep) {
  std::string marker = server().root_dir() + "/hang.started";
  // The first run of hang_once hangs (the server is killed meanwhile); later runs answer at once.
  ProcessTool("hang_once", "#!/bin/sh\nif [ -e " + marker + " ]; then cat > /dev/null; echo '{\"late\":true}' >&3; exit 0; fi\n"
                           ": > " + marker + "\nexec sleep 30\n",
              json::object{{"timeout_ms", 60000}});
  Define(json::object{{"name", "durable"},
                      {"steps", json::parse(R"([
         {"id": "first", "tool": "echo", "input": {"n": 1}},
         {"id": "hang", "tool": "hang_once", "needs": ["first"]},
         {"id": "last", "tool": "echo", "needs": ["hang"], "input": {"after": "${{ steps.hang.output.late }}"}}])")}});
  StartedRun run = StartOk("durable", json::object{});
  ASSERT_TRUE(WaitForFile(marker, kToolWait)) << "the hang step never started";

  server().Kill9();
  ASSERT_TRUE(server().Start()) << server().error();
  ReconnectTools();
  json::object result = AwaitResult(run);
  ASSERT_EQ(StatusOf(result), "success") << JsonText(result);
  EXPECT_EQ(OutputOf(result), json::parse(R"({"last": {"after": true}})"));
  json::object execution = Execution(run.execution_id);
  EXPECT_EQ(IntAt(execution, "attempt"), 2) << JsonText(execution);
  // The completed step was not asked again; the interrupted one kept its request (attempt 1),
  // answered once by the tool's own second attempt.
  auto steps = Steps(run.execution_id);
  EXPECT_EQ(IntAt(steps["first"], "attempt"), 1);
  EXPECT_EQ(IntAt(steps["hang"], "attempt"), 1);
  EXPECT_EQ(ListIds("schema_name=tool.request.v1&tag=" + UrlEncode("execution:" + run.execution_id)).size(), 3u);
  EXPECT_EQ(ListIds("schema_name=tool.response.v1&tag=" + UrlEncode("request:" + run.execution_id + "-hang-1")).size(), 1u);
  EXPECT_EQ(ListIds("schema_name=workflow.result.v1&tag=" + UrlEncode("request:" + run.request_id)).size(), 1u);
}

TEST_F(e2e_workflows, BadDefinitionsAndInputsAreRefusedNamingTheFieldAndChangeNothing) {
  auto define = [&](const json::value& context) {
    return client().Post("/breadcrumbs", JsonText(json::object{{"schema_name", "workflow.def.v1"}, {"title", "w"},
                                                               {"context", context}}));
  };
  std::vector<std::string> before = StoreSnapshot();
  EXPECT_TRUE(IsError(define(json::parse(R"({"name": "w", "steps": [{"id": "a", "tool": "echo", "needs": ["b"]},
                                                                    {"id": "b", "tool": "echo", "needs": ["a"]}]})")),
                      422, "validation_failed", "context.steps"));
  Response bad_cel = define(json::parse(R"({"name": "w", "steps": [{"id": "a", "tool": "echo", "input": {"x": "${{ input.( }}"}}]})"));
  EXPECT_TRUE(IsError(bad_cel, 422, "validation_failed", "context.steps[0].input.x"));
  EXPECT_NE(bad_cel.body.find("column"), std::string::npos) << bad_cel.body;
  EXPECT_TRUE(IsError(define(json::parse(R"({"name": "w", "steps": [{"id": "a", "tool": "echo"},
                                                                    {"id": "b", "tool": "echo", "when": "nope.x"}]})")),
                      422, "validation_failed", "context.steps[1].when"));
  EXPECT_TRUE(IsError(define(json::parse(R"({"name": "w", "steps": [{"id": "a", "tool": "echo"}], "output": "${{ }}"})")),
                      422, "validation_failed", "context.output"));
  EXPECT_EQ(StoreSnapshot(), before);

  Define(json::object{{"name", "typed"},
                      {"input_schema", json::parse(R"({"type": "object", "required": ["city"],
                                                        "properties": {"city": {"type": "string"}}})")},
                      {"steps", json::parse(R"([{"id": "a", "tool": "echo"}])")}});
  before = StoreSnapshot();
  EXPECT_TRUE(IsError(Start("typed", json::object{{"city", 7}}), 422, "validation_failed", "input.city"));
  EXPECT_TRUE(IsError(Start("typed", json::object{}), 422, "validation_failed", "input.city"));
  EXPECT_TRUE(IsError(Start("nosuch", json::object{}), 404, "not_found"));
  EXPECT_TRUE(IsError(client().Post("/workflows/typed/runs", R"({"input": {"city": "Oslo"}, "extra": 1})"), 422,
                      "validation_failed", "extra"));
  EXPECT_TRUE(IsError(client().Post("/workflows/typed/runs", R"([1])"), 422, "validation_failed", "body"));
  EXPECT_EQ(StoreSnapshot(), before);
  // A client cannot forge a step record or a workflow's answer.
  EXPECT_TRUE(IsClientError(client().Post("/breadcrumbs", R"({"schema_name": "workflow.step.v1", "title": "x", "context": {}})")));
  EXPECT_TRUE(IsClientError(client().Post("/breadcrumbs", R"({"schema_name": "workflow.result.v1", "title": "x",
                                                              "context": {"request_id": "r", "status": "success"}})")));
  EXPECT_EQ(StoreSnapshot(), before);
}

}  // namespace
}  // namespace cairn::e2e
