// Conditions end to end (docs/cel.md "Conditions"): a `when` over event, record and before on
// every kind of selector — an SSE stream, a webhook, an executor's trigger with a path glob and an
// `input` mapping — fires once per transition ("a task became done"), not on other updates.
#include "tool_support.h"

namespace cairn::e2e {
namespace {

constexpr const char* kBecameDone =
    "record.context.status == 'done' && (before == null || before.context.status != 'done')";

class e2e_conditions : public ToolTest {
 protected:
  std::vector<std::string> ServerArgs() const override {
    return {"--allow-private-network", "127.0.0.0/8", "--webhook-timeout-ms", "10000"};
  }
  json::object Task(const std::string& path, const std::string& status) {
    return tools().Create(json::object{{"title", "task"}, {"schema_name", "task.v1"}, {"path", path},
                                       {"context", json::object{{"status", status}}}});
  }
  void SetStatus(const std::string& id, const std::string& status, json::object more = {}) {
    more["status"] = status;
    PatchOk(id, json::object{{"context", more}});
  }
};

TEST_F(e2e_conditions, ATransitionFiresEveryConsumerOnceAndOtherUpdatesDoNot) {
  // A webhook receiver that records what it gets.
  test_support::LoopbackHttpServer receiver([](const test_support::ReceivedRequest&) -> std::optional<std::string> {
    return "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
  });
  Response hook = client().Post("/webhooks", JsonText(json::object{
      {"url", receiver.Url("/hook")}, {"selector", json::object{{"path", "projects/*/tasks/*"}, {"when", kBecameDone}}}}));
  ASSERT_EQ(hook.status, 201) << hook.Describe();
  // An executor: echo, triggered by the same transition, its input mapped from the record.
  // One run at a time, so they end in trigger order and the fence's ends last.
  tools().DefineTool({{"name", "on_done"}, {"runtime", "builtin"}, {"builtin", "echo"}, {"concurrency", 1},
                      {"subscriptions", json::object{{"selectors", json::array{json::object{
                          {"role", "trigger"}, {"key", "task"}, {"path", "projects/*/tasks/*"}, {"when", kBecameDone},
                          {"input", "{'task': record.id, 'project': record.path.split('/')[1], "
                                    "'was': before == null ? 'new' : before.context.status}"}}}}}}});
  SseClient stream(server().url() + "/events/stream?since=0&path=" + UrlEncode("projects/*/tasks/*") +
                   "&when=" + UrlEncode(kBecameDone));
  stream.Start();
  ASSERT_TRUE(stream.WaitForOpen(kToolWait)) << stream.Describe();

  std::string id = StringAt(Task("projects/p1/tasks/t1", "todo"), "id");
  SetStatus(id, "done");                                     // fires
  SetStatus(id, "done", json::object{{"note", "still"}});    // done -> done: not a transition
  PatchOk(id, json::object{{"title", "renamed"}});           // not a transition
  SetStatus(id, "todo");                                     // done -> todo: no
  SetStatus(id, "done");                                     // fires again
  Task("projects/p1/notes/n1", "done");                      // another path: no
  std::string fence = StringAt(Task("projects/p2/tasks/last", "done"), "id");  // created done: fires

  // The stream is in seq order: once the fence is there, everything before it was judged.
  ASSERT_TRUE(stream.WaitFor([&](const std::vector<SseFrame>& frames) {
    for (const auto& f : EventsOf(frames)) {
      if (f.IsEvent() && StringAt(f.Json().as_object(), "breadcrumb_id") == fence) return true;
    }
    return false;
  }, kToolWait)) << stream.Describe();
  std::vector<int64_t> versions;
  for (const auto& f : stream.Events()) {
    json::value e = f.Json();
    if (StringAt(e.as_object(), "breadcrumb_id") == id) versions.push_back(IntAt(e.as_object(), "version"));
  }
  EXPECT_EQ(versions, (std::vector<int64_t>{2, 6})) << stream.Describe();

  // The executor: one run per transition, with the mapped input.
  tools().AwaitExecution(fence);
  std::vector<json::object> runs;
  for (const auto& record : ListAll("schema_name=agent.execution.v1&include_context=true&tag=" +
                                    UrlEncode("executor:on_done"))) {
    runs.push_back(ContextOf(record));
  }
  ASSERT_EQ(runs.size(), 3u);
  std::multiset<std::string> inputs;
  for (const auto& run : runs) inputs.insert(JsonText(run.at("input")));
  EXPECT_EQ(inputs.count(JsonText(json::object{{"task", id}, {"project", "p1"}, {"was", "todo"}})), 2u) << JsonText(json::value(runs.size()));
  EXPECT_EQ(inputs.count(JsonText(json::object{{"task", fence}, {"project", "p2"}, {"was", "new"}})), 1u);

  // The webhook: the same three deliveries.
  ASSERT_TRUE(receiver.WaitForRequests(3, kToolWait));
  std::vector<std::string> delivered;
  for (const auto& request : receiver.requests()) {
    auto body = json::parse(request.body).as_object();
    delivered.push_back(StringAt(body, "breadcrumb_id") + "@" + std::to_string(IntAt(body, "version")));
  }
  EXPECT_EQ(delivered, (std::vector<std::string>{id + "@2", id + "@6", fence + "@1"}));
}

TEST_F(e2e_conditions, ABadConditionIsRefusedNamingTheFieldWhereverItIsGiven) {
  std::vector<std::string> before = StoreSnapshot();
  Response sse = client().Get("/events/stream?when=" + UrlEncode("record.context.("));
  EXPECT_TRUE(IsError(sse, 400, "bad_request", "when")) << sse.Describe();
  EXPECT_NE(sse.body.find("column"), std::string::npos) << sse.body;
  EXPECT_TRUE(IsError(client().Get("/events/stream?when=" + UrlEncode("nosuch.x == 1")), 400, "bad_request", "when"));
  EXPECT_TRUE(IsError(client().Post("/webhooks", R"({"url": "http://127.0.0.1:9/h", "selector": {"when": "1 +"}})"), 422,
                      "validation_failed", "selector.when"));
  EXPECT_TRUE(IsError(client().Post("/subscriptions/selectors", R"({"name": "n", "selector": {"when": "record.("}})"), 422,
                      "validation_failed", "selector.when"));
  Response tool = client().Post("/breadcrumbs", JsonText(json::object{
      {"schema_name", "tool.v1"}, {"title", "t"},
      {"context", json::object{{"name", "t"}, {"runtime", "builtin"}, {"builtin", "echo"},
                               {"subscriptions", json::object{{"selectors", json::array{json::object{
                                   {"role", "trigger"}, {"schema_name", "x.v1"}, {"input", "{'a': }"}}}}}}}}}));
  EXPECT_TRUE(IsError(tool, 422, "validation_failed", "context.subscriptions.selectors[0].input")) << tool.body;
  EXPECT_EQ(StoreSnapshot(), before);
}

}  // namespace
}  // namespace cairn::e2e
