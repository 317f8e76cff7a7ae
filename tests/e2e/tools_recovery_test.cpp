// Tools across restarts: every request is answered exactly once, whether the server is killed
// (kill -9) or stopped (SIGTERM) in the middle of a run, after the answer, or while executors are
// switched off (--run-executors=false).
//
// "Exactly once" is checked after a fence: a later request to the same tool (concurrency 1, so its
// triggers run one at a time in seq order) is answered only after anything the tool would still
// write for the earlier one. Answers are read from event streams starting at seq 0
// (tool_support.h), so answers from before a restart are counted too.
#include "tool_support.h"

namespace cairn::e2e {
namespace {

using namespace std::chrono_literals;

class e2e_tools_recovery : public ToolTest {
 protected:
  // Survives kill -9 (a process crash), which is all these tests need, and is fast.
  std::vector<std::string> ServerArgs() const override { return {"--sync", "normal"}; }

  // An echo tool that runs one trigger at a time (for fences).
  void DefineEcho1() {
    tools().DefineTool({{"name", "echo1"}, {"runtime", "builtin"}, {"builtin", "echo"}, {"concurrency", 1}});
  }

  // A process tool whose first run notes that it started (the file `marker`) and then hangs far
  // longer than the test; every later run answers at once. So the run interrupted by the test is
  // the first, and the answer can only come from a run after the restart.
  void DefineSlowOnce(const std::string& marker) {
    std::string script = WriteScript("slow_once.sh",
                                     "#!/bin/sh\n"
                                     "if [ -e " + marker + " ]; then\n"
                                     "  cat > /dev/null\n"
                                     "  echo '{\"answered_by\":\"a later attempt\"}' >&3\n"
                                     "  exit 0\n"
                                     "fi\n"
                                     ": > " + marker + "\n"
                                     "exec sleep 30\n");
    tools().DefineTool({{"name", "slow_once"}, {"runtime", "process"}, {"command", json::array{json::value(script)}},
                        {"env", json::array{"PATH"}}, {"cwd", server().root_dir()}, {"timeout_ms", 60000},
                        {"concurrency", 1}});
  }

  // Requests slow_once and waits until its first run is under way: the script has started, so
  // the trigger was claimed (claims are committed before a run starts and write no event).
  std::string StartSlowRun(const std::string& marker) {
    std::string id = tools().Request("slow_once", json::object{{"job", 1}});
    EXPECT_TRUE(WaitForFile(marker, kToolWait)) << "the script never started";
    return id;
  }

  // After a restart: the interrupted request is answered once, by attempt 2.
  void ExpectAnsweredOnceByASecondAttempt(const std::string& id) {
    json::object r = tools().AwaitResponse(id);
    EXPECT_EQ(StatusOf(r), "success") << JsonText(r);
    EXPECT_EQ(OutputOf(r), json::value(json::object{{"answered_by", "a later attempt"}}));
    json::object record = tools().AwaitExecution(id);
    EXPECT_EQ(StringAt(ContextOf(record), "status"), "completed") << JsonText(record);
    EXPECT_EQ(IntAt(ContextOf(record), "attempt"), 2) << JsonText(record);

    std::string fence = tools().Request("slow_once", json::object{{"job", 2}});
    EXPECT_EQ(StatusOf(tools().AwaitResponse(fence)), "success");
    EXPECT_EQ(tools().ResponsesTo(id).size(), 1u) << tools().Describe("tool.response.v1");
    EXPECT_EQ(ListIds("schema_name=tool.response.v1&tag=" + UrlEncode("request:" + id)).size(), 1u);
    EXPECT_EQ(ListIds("schema_name=agent.execution.v1&tag=" + UrlEncode("trigger:" + id)).size(), 1u);
  }
};

TEST_F(e2e_tools_recovery, Kill9DuringARunRunsItAgainAndAnswersOnce) {
  std::string marker = server().root_dir() + "/slow_once.started";
  DefineSlowOnce(marker);
  std::string id = StartSlowRun(marker);
  ASSERT_FALSE(HasFailure());

  server().Kill9();
  ASSERT_TRUE(server().Start()) << server().error();
  ReconnectTools();
  ExpectAnsweredOnceByASecondAttempt(id);
}

TEST_F(e2e_tools_recovery, SigtermDuringARunRunsItAgainAndAnswersOnce) {
  std::string marker = server().root_dir() + "/slow_once.started";
  DefineSlowOnce(marker);
  std::string id = StartSlowRun(marker);
  ASSERT_FALSE(HasFailure());

  // Shutdown cancels the run and writes nothing for it.
  ASSERT_TRUE(server().Restart()) << server().error();
  EXPECT_EQ(server().last_exit_code(), 0);
  ReconnectTools();
  ExpectAnsweredOnceByASecondAttempt(id);
}

TEST_F(e2e_tools_recovery, AnAnswerGivenBeforeARestartIsNotGivenAgain) {
  DefineEcho1();
  std::string before_stop = tools().Request("echo1", json::object{{"n", 1}});
  ASSERT_FALSE(tools().AwaitResponse(before_stop).empty());
  std::string before_kill = tools().Request("echo1", json::object{{"n", 2}});
  ASSERT_FALSE(tools().AwaitResponse(before_kill).empty());

  // A graceful restart, then a crash right after the next answer (its cursor may not be saved).
  ASSERT_TRUE(server().Restart()) << server().error();
  EXPECT_EQ(server().last_exit_code(), 0);
  ReconnectTools();
  std::string after_restart = tools().Request("echo1", json::object{{"n", 3}});
  ASSERT_FALSE(tools().AwaitResponse(after_restart).empty());
  server().Kill9();
  ASSERT_TRUE(server().Start()) << server().error();
  ReconnectTools();
  std::string fence = tools().Request("echo1", json::object{{"n", 4}});
  ASSERT_FALSE(tools().AwaitResponse(fence).empty());

  for (const std::string& id : {before_stop, before_kill, after_restart}) {
    EXPECT_EQ(tools().ResponsesTo(id).size(), 1u) << id << ": " << tools().Describe("tool.response.v1");
  }
  for (const std::string& id : {before_stop, before_kill, after_restart}) {
    std::vector<json::object> records =
        ListAll("schema_name=agent.execution.v1&include_context=true&tag=" + UrlEncode("trigger:" + id));
    ASSERT_EQ(records.size(), 1u) << id;
    EXPECT_EQ(IntAt(ContextOf(records[0]), "attempt"), 1) << "run again: " << JsonText(records[0]);
    EXPECT_EQ(IntAt(records[0], "version"), 1) << "written once, when the run ended: " << JsonText(records[0]);
  }
}

// The operator's case: a server that has run executors is restarted with them off for a while.
TEST_F(e2e_tools_recovery, RequestsWrittenWhileExecutorsAreOffAreAnsweredOnceWhenTheyRun) {
  DefineEcho1();
  ASSERT_FALSE(tools().AwaitResponse(tools().Request("echo1", json::object{{"warm", true}})).empty());
  ASSERT_EQ(server().Stop(), 0);  // executors save their cursors
  // The same data dir (the last --data-dir wins), without executors.
  ServerProcess api_only({"--data-dir", server().data_dir(), "--sync", "normal", "--run-executors=false", "--builtin-tools=true"});
  ASSERT_TRUE(api_only.Start()) << api_only.error();
  std::vector<std::string> echoed;
  std::string unknown;
  {
    ToolClient offline(api_only);
    for (int i = 0; i < 3; ++i) echoed.push_back(offline.Request("echo1", json::object{{"i", i}}));
    unknown = offline.Request("no_such_tool", json::object{});
  }
  EXPECT_EQ(api_only.Stop(), 0);

  ASSERT_TRUE(server().Start()) << server().error();
  ReconnectTools();
  for (size_t i = 0; i < echoed.size(); ++i) {
    json::object r = tools().AwaitResponse(echoed[i]);
    EXPECT_EQ(OutputOf(r), json::value(json::object{{"i", static_cast<int>(i)}})) << JsonText(r);
  }
  EXPECT_EQ(ErrorCodeOf(tools().AwaitResponse(unknown)), "unknown_tool");
  std::string fence = tools().Request("echo1", json::object{{"fence", true}});
  ASSERT_FALSE(tools().AwaitResponse(fence).empty());
  for (const auto& id : echoed) EXPECT_EQ(tools().ResponsesTo(id).size(), 1u) << id;
  EXPECT_EQ(tools().ResponsesTo(unknown).size(), 1u);
}

// The same on a data dir whose first start had executors off: the requests are older than the
// built-in definitions (registered at the first start that runs executors). docs/executors.md:
// "events that arrive while the server is down (or running with --run-executors=false) are
// processed when it starts" and "every request gets exactly one response".
TEST(e2e_tools_recovery_fresh, RequestsWrittenBeforeExecutorsEverRanAreAnsweredWhenTheyRun) {
  ServerProcess api_only({"--sync", "normal", "--run-executors=false", "--builtin-tools=true"});
  ASSERT_TRUE(api_only.Start()) << api_only.error();
  std::vector<std::string> ids;
  {
    ToolClient offline(api_only);
    ids.push_back(offline.Request("echo", json::object{{"i", 0}}));
    ids.push_back(offline.Request("echo", json::object{{"i", 1}}));
  }
  ASSERT_EQ(api_only.Stop(), 0);

  ServerProcess server({"--data-dir", api_only.data_dir(), "--sync", "normal", "--builtin-tools=true"});
  ASSERT_TRUE(server.Start()) << server.error();
  ToolClient tools(server);
  for (size_t i = 0; i < ids.size(); ++i) {
    json::object r = tools.AwaitResponse(ids[i], 10s);
    ASSERT_FALSE(r.empty()) << "request " << ids[i] << " was never answered\n" << server.LogTail();
    EXPECT_EQ(OutputOf(r), json::value(json::object{{"i", static_cast<int>(i)}})) << JsonText(r);
  }
  std::string fence = tools.Request("echo", json::object{{"fence", true}});
  ASSERT_FALSE(tools.AwaitResponse(fence).empty());
  for (const auto& id : ids) EXPECT_EQ(tools.ResponsesTo(id).size(), 1u) << id;
}

// A request for a tool that did not exist yet when it was written (executors off) is answered
// unknown_tool, and one written after the tool was defined is answered by the tool: each by the
// definitions in force when it was written, once.
TEST(e2e_tools_recovery_fresh, RequestsAreJudgedByTheDefinitionsWrittenBeforeThem) {
  ServerProcess api_only({"--sync", "normal", "--run-executors=false", "--builtin-tools=true"});
  ASSERT_TRUE(api_only.Start()) << api_only.error();
  std::string early, late;
  {
    ToolClient offline(api_only);
    early = offline.Request("later", json::object{{"ms", 1}});
    ASSERT_FALSE(offline.DefineTool({{"name", "later"}, {"runtime", "builtin"}, {"builtin", "sleep"}}).empty());
    late = offline.Request("later", json::object{{"ms", 1}});
  }
  ASSERT_EQ(api_only.Stop(), 0);

  ServerProcess server({"--data-dir", api_only.data_dir(), "--sync", "normal", "--builtin-tools=true"});
  ASSERT_TRUE(server.Start()) << server.error();
  ToolClient tools(server);
  json::object unknown = tools.AwaitResponse(early, 10s);
  ASSERT_FALSE(unknown.empty()) << "the early request was never answered\n" << server.LogTail();
  EXPECT_EQ(ErrorCodeOf(unknown), "unknown_tool") << JsonText(unknown);
  json::object answered = tools.AwaitResponse(late, 10s);
  ASSERT_FALSE(answered.empty()) << "the late request was never answered\n" << server.LogTail();
  EXPECT_EQ(StatusOf(answered), "success") << JsonText(answered);
  std::string fence = tools.Request("echo", json::object{{"fence", true}});
  ASSERT_FALSE(tools.AwaitResponse(fence).empty());
  EXPECT_EQ(tools.ResponsesTo(early).size(), 1u);
  EXPECT_EQ(tools.ResponsesTo(late).size(), 1u);
}

}  // namespace
}  // namespace cairn::e2e
