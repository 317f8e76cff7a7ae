// Process tools as a sandbox, end to end: what a definition may name of the server's environment
// (refused on write, never seen by the tool), the run's own HOME, no process outliving its run
// (setsid, double fork, daemon; after an ordinary end and after a timeout), the limits and the
// errors naming them, the real duration after a timeout, and --tool-user.
//
// Every tool here runs commands from the system (no scripts in the test's directory), so they
// also run as `nobody`, who cannot enter that directory.
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include "tool_support.h"

namespace cairn::e2e {
namespace {

using namespace std::chrono_literals;

// Server variables the tests set before the server starts (it inherits the test's environment).
constexpr const char* kCairnSecret = "cairn-key-must-not-leak";
constexpr const char* kProviderSecret = "provider-key-must-not-leak";

// Whether `pid` runs a command line containing `marker` (a pid given back to another process
// would not match).
bool StillRuns(pid_t pid, const std::string& marker) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  const std::string cmdline((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  return cmdline.find(marker) != std::string::npos;
}

// Starts three processes that leave the tool's process group or parentage — `setsid`, a double
// fork, a daemon doing both — each returning once its escapee has printed its pid; the pids end
// up in $a $b $c. Then `tail` runs.
std::string EscapingTool(const std::string& tail) {
  return R"(
a=$(setsid sh -c 'echo $$; exec sleep 1011 >/dev/null' &)
b=$(sh -c 'sh -c "echo \$\$; exec sleep 1012 >/dev/null" &')
c=$(setsid sh -c 'sh -c "echo \$\$; exec sleep 1013 >/dev/null" & exit 0' &)
)" + tail;
}

std::vector<pid_t> PidsIn(const std::string& text) {
  std::vector<pid_t> pids;
  std::istringstream in(text);
  for (pid_t pid; in >> pid;) pids.push_back(pid);
  return pids;
}

class e2e_tool_sandbox : public ToolTest {
 protected:
  void SetUp() override {
    ::setenv("CAIRN_LLM_API_KEY", kCairnSecret, 1);
    ::setenv("CAIRN_SANDBOX_E2E", kCairnSecret, 1);
    ::setenv("OPENAI_API_KEY", kProviderSecret, 1);
    ::setenv("SANDBOX_VISIBLE", "visible", 1);
    ::setenv("HIDDEN_VARIABLE", "hidden", 1);
    ToolTest::SetUp();
  }
  void TearDown() override {
    ToolTest::TearDown();
    for (const char* name : {"CAIRN_LLM_API_KEY", "CAIRN_SANDBOX_E2E", "OPENAI_API_KEY", "SANDBOX_VISIBLE", "HIDDEN_VARIABLE"}) {
      ::unsetenv(name);
    }
  }
  // `*` would allow everything, but never CAIRN_* or a provider key.
  std::vector<std::string> ServerArgs() const override { return {"--tool-env-allow", "SANDBOX_*,*_API_KEY,CAIRN_*"}; }

  // A process tool running `script` with /bin/sh.
  json::object ShTool(const std::string& name, const std::string& script, json::object more = {}) {
    more["name"] = name;
    more["runtime"] = "process";
    more["command"] = json::array{"/bin/sh", "-c", json::value(script)};
    return tools().DefineTool(more);
  }
  json::object Call(const std::string& tool, const json::value& input = json::object{}) {
    return tools().AwaitResponse(tools().Request(tool, input));
  }
  json::value ToolDefinition(const json::array& env) {
    return json::object{{"title", "t"},
                        {"schema_name", "tool.v1"},
                        {"context", {{"name", "leaky"}, {"runtime", "process"}, {"command", json::array{"env"}}, {"env", env}}}};
  }
};

TEST_F(e2e_tool_sandbox, DefinitionsNamingCairnSettingsOrProviderKeysAreRefusedAndWriteNothing) {
  json::object valid = ShTool("tidy", "echo '{}' >&3", {{"env", json::array{"SANDBOX_VISIBLE"}}});
  ASSERT_FALSE(valid.empty());
  const auto before = StoreSnapshot();
  struct Case {
    json::array env;
    const char* field;
    const char* named;
  } cases[] = {
      {{"CAIRN_LLM_API_KEY"}, "context.env[0]", "CAIRN_LLM_API_KEY"},
      {{"SANDBOX_VISIBLE", "CAIRN_SANDBOX_E2E"}, "context.env[1]", "CAIRN_SANDBOX_E2E"},
      {{"OPENAI_API_KEY"}, "context.env[0]", "OPENAI_API_KEY"},
      {{"PATH", "OPENROUTER_API_KEY"}, "context.env[1]", "OPENROUTER_API_KEY"},
  };
  for (const Case& c : cases) {
    Response r = client().Post("/breadcrumbs", JsonText(ToolDefinition(c.env)));
    EXPECT_TRUE(IsError(r, 400, "bad_request", std::string(c.field))) << JsonText(c.env) << " -> " << r.body;
    EXPECT_NE(r.body.find(c.named), std::string::npos) << r.body;
    // Changing a stored definition to name one is refused the same way.
    Response patched = client().Patch("/breadcrumbs/" + StringAt(valid, "id"),
                                      JsonText(json::object{{"context", {{"name", "tidy"},
                                                                         {"runtime", "process"},
                                                                         {"command", json::array{"env"}},
                                                                         {"env", c.env}}}}));
    EXPECT_TRUE(IsError(patched, 400, "bad_request", std::string(c.field))) << patched.body;
  }
  // A name the allow-list does not match is a rule broken, not a secret: 422.
  Response hidden = client().Post("/breadcrumbs", JsonText(ToolDefinition({"HIDDEN_VARIABLE"})));
  EXPECT_TRUE(IsError(hidden, 422, "validation_failed", std::string("context.env[0]"))) << hidden.body;
  EXPECT_EQ(StoreSnapshot(), before);
}

TEST_F(e2e_tool_sandbox, AToolSeesOnlyItsSandboxEnvironmentAndItsOwnHome) {
  std::string python = FindPython3();
  if (python.empty()) GTEST_SKIP() << "no python3 binary";
  // /proc/self/environ is what the program was started with (Python may add to os.environ).
  ASSERT_FALSE(tools()
                   .DefineTool({{"name", "show_env"},
                                {"runtime", "process"},
                                {"command", json::array{json::value(python), "-c",
                                                        "import json, os\n"
                                                        "env = open('/proc/self/environ', 'rb').read().split(b'\\0')\n"
                                                        "os.write(3, json.dumps({'env': sorted(e.decode() for e in env if e),"
                                                        " 'cwd': os.getcwd()}).encode())\n"}},
                                {"env", json::array{"SANDBOX_VISIBLE", "SANDBOX_UNSET", "PATH"}}})
                   .empty());
  json::object r = Call("show_env");
  ASSERT_EQ(StatusOf(r), "success") << JsonText(r);
  json::object out = OutputOf(r).as_object();
  std::set<std::string> names;
  std::string home;
  for (const auto& entry : out["env"].as_array()) {
    const std::string text(entry.as_string());
    const std::string name = text.substr(0, text.find('='));
    names.insert(name);
    if (name == "HOME") home = text.substr(5);
    EXPECT_EQ(text.find("must-not-leak"), std::string::npos) << text;
    EXPECT_NE(name.rfind("CAIRN_", 0), 0u) << text;
  }
  std::set<std::string> expected{"PATH", "HOME", "SANDBOX_VISIBLE"};
  for (const char* name : {"LANG", "TZ"}) {
    if (std::getenv(name) != nullptr) expected.insert(name);
  }
  EXPECT_EQ(names, expected) << JsonText(out);
  // HOME is the run's own directory, also its working directory, and gone once it answered.
  EXPECT_NE(home.find("/cairn-run-"), std::string::npos) << home;
  EXPECT_EQ(StringAt(out, "cwd"), home);
  EXPECT_NE(home, std::getenv("HOME") ? std::getenv("HOME") : "");
  EXPECT_FALSE(std::filesystem::exists(home)) << home;
}

TEST_F(e2e_tool_sandbox, NoProcessOutlivesARun) {
  ShTool("escapes", EscapingTool("printf '{\"pids\": [%s, %s, %s]}' $a $b $c >&3\n"));
  json::object r = Call("escapes");
  ASSERT_EQ(StatusOf(r), "success") << JsonText(r);
  const json::value out = OutputOf(r);
  const json::array& pids = out.as_object().at("pids").as_array();
  ASSERT_EQ(pids.size(), 3u);
  // The answer is written after the run's keeper has reaped everything: no wait needed.
  for (const auto& pid : pids) EXPECT_FALSE(StillRuns(static_cast<pid_t>(pid.to_number<int64_t>()), "sleep")) << pid;
  EXPECT_LT(IntAt(ContextOf(r), "duration_ms"), 10000);  // nothing waited for the escapees' 1000 s
}

TEST_F(e2e_tool_sandbox, NoProcessOutlivesATimeoutAndItsDurationIsReal) {
  // The pids go to a file the test can read: a timed-out run answers with no output.
  const std::string pid_file = server().root_dir() + "/escapees";
  ShTool("escapes_slowly", EscapingTool("echo $a $b $c > " + pid_file + ".tmp && mv " + pid_file + ".tmp " + pid_file +
                                        "\nexec sleep 1014\n"),
         {{"limits", {{"timeout_ms", 1500}}}});
  json::object r = Call("escapes_slowly");
  EXPECT_EQ(ErrorCodeOf(r), "timeout") << JsonText(r);
  EXPECT_GE(IntAt(ContextOf(r), "duration_ms"), 1500) << JsonText(r);
  EXPECT_LT(IntAt(ContextOf(r), "duration_ms"), 15000) << JsonText(r);
  std::ifstream file(pid_file);
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const std::vector<pid_t> pids = PidsIn(text);
  ASSERT_EQ(pids.size(), 3u) << "escapees not reported before the timeout: '" << text << "'";
  for (pid_t pid : pids) EXPECT_FALSE(StillRuns(pid, "sleep")) << pid;
}

TEST_F(e2e_tool_sandbox, LimitsEndARunWithAnErrorNamingThem) {
  std::string python = FindPython3();
  if (python.empty()) GTEST_SKIP() << "no python3 binary";
  const std::string allocate =
      "import json, os, sys\n"
      "mb = json.load(sys.stdin)['input']['mb']\n"
      "block = bytearray(mb * 1024 * 1024)\n"
      "os.write(3, json.dumps({'allocated_mb': len(block) >> 20}).encode())\n";
  tools().DefineTool({{"name", "hog"},
                      {"runtime", "process"},
                      {"command", json::array{json::value(python), "-c", json::value(allocate)}},
                      {"limits", {{"memory_mb", 64}}}});
  tools().DefineTool({{"name", "default_hog"},
                      {"runtime", "process"},
                      {"command", json::array{json::value(python), "-c", json::value(allocate)}}});
  ShTool("chatty", "head -c 5000 /dev/zero | tr '\\0' x >&3", {{"limits", {{"output_bytes", 1000}}}});

  json::object small = Call("hog", json::object{{"mb", 8}});
  EXPECT_EQ(OutputOf(small), json::value(json::object{{"allocated_mb", 8}})) << JsonText(small);
  json::object big = Call("hog", json::object{{"mb", 300}});
  EXPECT_EQ(StatusOf(big), "error") << JsonText(big);
  EXPECT_NE(ErrorMessageOf(big).find("memory limit of 64 MiB"), std::string::npos) << ErrorMessageOf(big);
  EXPECT_TRUE(ContextOf(big).contains("duration_ms"));
  // Without limits a run still has the default 1 GiB.
  json::object huge = Call("default_hog", json::object{{"mb", 3072}});
  EXPECT_EQ(StatusOf(huge), "error") << JsonText(huge);
  EXPECT_NE(ErrorMessageOf(huge).find("memory limit of 1024 MiB"), std::string::npos) << ErrorMessageOf(huge);

  json::object chatty = Call("chatty");
  EXPECT_EQ(StatusOf(chatty), "error") << JsonText(chatty);
  EXPECT_NE(ErrorMessageOf(chatty).find("output limit of 1000 bytes"), std::string::npos) << ErrorMessageOf(chatty);
}

// --- the tool user ----------------------------------------------------------------------------

class e2e_tool_user : public ToolTest {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "--tool-user needs the server to run as root";
    nobody_ = ::getpwnam("nobody");
    if (nobody_ == nullptr) GTEST_SKIP() << "no user nobody";
    ToolTest::SetUp();
  }
  std::vector<std::string> ServerArgs() const override { return {"--tool-user", "nobody"}; }
  const passwd* nobody_ = nullptr;
};

TEST_F(e2e_tool_user, ProcessToolsRunAsTheToolUserInAHomeOfTheirOwn) {
  ASSERT_FALSE(tools()
                   .DefineTool({{"name", "whoami"},
                                {"runtime", "process"},
                                {"command", json::array{"/bin/sh", "-c",
                                                        "touch \"$HOME/mine\" && printf '{\"uid\": %s, \"gid\": %s, "
                                                        "\"home_owner\": %s}' $(id -u) $(id -g) "
                                                        "$(stat -c %u \"$HOME\") >&3"}}})
                   .empty());
  json::object r = tools().AwaitResponse(tools().Request("whoami", json::object{}));
  ASSERT_EQ(StatusOf(r), "success") << JsonText(r);
  json::object out = OutputOf(r).as_object();
  EXPECT_EQ(IntAt(out, "uid"), nobody_->pw_uid);
  EXPECT_EQ(IntAt(out, "gid"), nobody_->pw_gid);
  EXPECT_EQ(IntAt(out, "home_owner"), nobody_->pw_uid);
}

TEST_F(e2e_tool_user, TheDataDirIsPrivateToCairnsUser) {
  // The database holds every record and the webhooks' secrets: the tool user may not enter.
  struct stat st {};
  ASSERT_EQ(::stat(server().data_dir().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(server().Stop(), 0);
  ASSERT_EQ(::chmod(server().data_dir().c_str(), 0755), 0);  // opened up by hand: closed again at start
  ASSERT_TRUE(server().Start()) << server().error();
  ASSERT_EQ(::stat(server().data_dir().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST_F(e2e_tool_user, TheProcessLimitBindsTheToolUser) {
  // The kernel counts every process of the user; none of nobody's are expected here, so three
  // sleeps and the shell fit and the rest cannot start.
  ASSERT_FALSE(tools()
                   .DefineTool({{"name", "forker"},
                                {"runtime", "process"},
                                {"command", json::array{"/bin/sh", "-c",
                                                        "for i in 1 2 3 4 5 6 7 8 9 10; do sleep 1015 & done; "
                                                        "echo '{}' >&3"}},
                                {"limits", {{"processes", 4}}}})
                   .empty());
  json::object r = tools().AwaitResponse(tools().Request("forker", json::object{}));
  EXPECT_EQ(StatusOf(r), "error") << JsonText(r);
  EXPECT_NE(ErrorMessageOf(r).find("process limit of 4"), std::string::npos) << ErrorMessageOf(r);
}

TEST(e2e_tool_user_setting, AnUnknownToolUserStopsTheStart) {
  ServerProcess server({"--tool-user", "cairn-no-such-user"});
  EXPECT_FALSE(server.Start());
  EXPECT_NE(server.error().find("cairn exited with 2"), std::string::npos) << server.error();
  EXPECT_NE(server.LogTail().find("no such user"), std::string::npos) << server.LogTail();
}

TEST(e2e_tool_user_setting, RootWithoutAToolUserIsWarnedAtStart) {
  if (::geteuid() != 0) GTEST_SKIP() << "the warning is for servers running as root";
  ServerProcess server;
  ASSERT_TRUE(server.Start()) << server.error();
  EXPECT_NE(server.LogTail().find("without --tool-user"), std::string::npos) << server.LogTail();
  ServerProcess with_user({"--tool-user", "nobody"});
  ASSERT_TRUE(with_user.Start()) << with_user.error();
  EXPECT_EQ(with_user.LogTail().find("without --tool-user"), std::string::npos) << with_user.LogTail();
}

}  // namespace
}  // namespace cairn::e2e
