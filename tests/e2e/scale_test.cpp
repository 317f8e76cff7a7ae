// Many definitions (issue 19): executors and webhooks run on fixed sets of threads. Hundreds of
// tool definitions and webhooks add no threads to the server (counted in /proc/<pid>/task), and
// every tool still answers.
#include <dirent.h>

#include "tool_support.h"

namespace cairn::e2e {
namespace {

constexpr int kTools = 300;
constexpr int kWebhooks = 200;

// The threads of process `pid` now.
int ThreadsOf(pid_t pid) {
  int threads = 0;
  if (DIR* dir = opendir(("/proc/" + std::to_string(pid) + "/task").c_str())) {
    while (dirent* entry = readdir(dir)) threads += entry->d_name[0] != '.';
    closedir(dir);
  }
  return threads;
}

class e2e_scale : public ToolTest {
 protected:
  std::vector<std::string> ServerArgs() const override {
    return {"--webhook-max-per-tenant", std::to_string(kWebhooks)};
  }
  json::object EchoTool(const std::string& name) {
    return tools().DefineTool({{"name", name}, {"runtime", "builtin"}, {"builtin", "echo"}});
  }
  std::string Metrics() {
    Response r = client().Get("/metrics");
    EXPECT_EQ(r.status, 200) << r.Describe();
    return r.body;
  }
};

TEST_F(e2e_scale, HundredsOfToolsAndWebhooksAddNoThreadsAndEveryToolAnswers) {
  // One tool called first, so the pools a call needs have started before the count.
  EchoTool("first");
  json::object first = tools().AwaitResponse(tools().Request("first", json::object{{"n", 0}}));
  ASSERT_EQ(StatusOf(first), "success") << JsonText(first);
  const int before = ThreadsOf(server().pid());
  ASSERT_GT(before, 0);

  for (int i = 0; i < kTools; ++i) EchoTool("tool" + std::to_string(i));
  for (int i = 0; i < kWebhooks; ++i) {
    Response r = client().Post("/webhooks", JsonText(json::object{
                                                {"url", "http://hook" + std::to_string(i) + ".example.invalid/in"},
                                                {"selector", {{"schema_name", "never.written.v1"}}}}));
    ASSERT_EQ(r.status, 201) << r.Describe();
  }
  // Definitions are applied in the order they were written: once the last answers, all run.
  for (const std::string& name : {std::string("tool0"), "tool" + std::to_string(kTools - 1)}) {
    json::object answer = tools().AwaitResponse(tools().Request(name, json::object{{"tool", name}}));
    EXPECT_EQ(StatusOf(answer), "success") << JsonText(answer);
    EXPECT_EQ(OutputOf(answer), (json::object{{"tool", name}})) << JsonText(answer);
  }
  const std::string metrics = Metrics();
  EXPECT_GE(MetricValue(metrics, "cairn_executor_consumers"), kTools + 1) << metrics;
  EXPECT_EQ(MetricValue(metrics, "cairn_executor_consumer_threads"), 2) << metrics;
  // A thread per executor or per webhook would be 500 more. A little slack: a pool may have
  // started a thread for a request that found its threads busy.
  const int after = ThreadsOf(server().pid());
  EXPECT_LE(after, before + 4) << "threads before " << before << ", after " << after;
}

}  // namespace
}  // namespace cairn::e2e
