// The dashboard (/ui) in a real browser: tests/e2e/ui-node/dashboard-test.mjs (authentication off)
// and roles-test.mjs (authentication on, keys of different roles) drive Debian's chromium with the
// npm playwright-core (headless) against the real server, pointed at the scripted fixture LLM, and
// check every page with the npm @axe-core/playwright. Each test starts both servers, scripts the
// model, runs its script under node (tests/support's Subprocess) and fails with its report unless
// every step passed.
//
// The screenshots go to the test's temporary directory, or to $CAIRN_UI_SHOTS (the README's are
// refreshed with CAIRN_UI_SHOTS=$PWD/docs/ui). The measured figures (first-load size, live-tail
// rates) are printed as "figure <name> <value>" lines (docs/performance.md).
#include <sys/stat.h>

#include <cstdlib>
#include <iostream>

#include "session_support.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

#ifndef CAIRN_E2E_UI_NODE_DIR
#error "CAIRN_E2E_UI_NODE_DIR must name tests/e2e/ui-node"
#endif

namespace cairn::e2e {
namespace {

using test_support::FindOnPath;
using test_support::ProcessOptions;
using test_support::Subprocess;
using test_support::TempDir;

bool Exists(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0;
}

// $CHROMIUM, else Debian's chromium on PATH.
std::string Chromium() {
  if (const char* c = std::getenv("CHROMIUM"); c != nullptr && *c != '\0') return c;
  return FindOnPath("chromium");
}

// Runs `script` (a file of tests/e2e/ui-node) under node against server().url() with `env` added;
// fails the test with its report unless every step passed. The screenshots go to $CAIRN_UI_SHOTS,
// else a temporary directory.
class BrowserTest : public SessionTest {
 protected:
  void RunBrowserScript(const std::string& script, std::vector<std::string> env) {
    const std::string dir = CAIRN_E2E_UI_NODE_DIR;
    const std::string node = NodeBinary();
    ASSERT_FALSE(node.empty()) << "`node` is not on PATH: run scripts/install-deps";
    ASSERT_TRUE(Exists(dir + "/node_modules/playwright-core/package.json") &&
                Exists(dir + "/node_modules/@axe-core/playwright/package.json"))
        << "playwright-core and @axe-core/playwright are not installed in " << dir << ": run scripts/install-deps";
    const std::string chromium = Chromium();
    ASSERT_FALSE(chromium.empty()) << "Debian's chromium is not installed: run scripts/install-deps";
    TempDir shots_dir("cairn-ui-shots");
    const char* shots_env = std::getenv("CAIRN_UI_SHOTS");
    const std::string shots = shots_env != nullptr && *shots_env != '\0' ? shots_env : shots_dir.path();
    ProcessOptions options;
    options.set_env = {"CAIRN_URL=" + server().url(), "CAIRN_UI_SHOTS=" + shots, "CHROMIUM=" + chromium};
    options.set_env.insert(options.set_env.end(), env.begin(), env.end());
    Subprocess browser({node, dir + "/" + script}, options);
    ASSERT_TRUE(browser.Start()) << browser.error();
    test_support::ProcessResult result = browser.Finish(std::chrono::minutes(4));
    std::cout << result.out;
    EXPECT_EQ(result.exit_code, 0) << "node " << dir << "/" << script << " failed (screenshots of the failing steps in "
                                   << shots << ")\nstdout:\n"
                                   << result.out << "\nstderr:\n"
                                   << result.err;
    EXPECT_NE(result.out.find("all passed"), std::string::npos);
  }
};

// Authentication off (the local admin may do everything). Webhooks may reach loopback and give up
// after two quick attempts, so the browser's failing receiver fills the dead-letter queue.
class e2e_ui : public BrowserTest {
 protected:
  std::vector<std::string> ServerArgs() const override {
    std::vector<std::string> args = SessionTest::ServerArgs();
    args.insert(args.end(), {"--allow-private-network", "127.0.0.0/8", "--webhook-max-attempts", "2",
                             "--webhook-backoff-base-ms", "20", "--webhook-backoff-max-ms", "50"});
    return args;
  }
};

TEST_F(e2e_ui, DashboardPagesInARealBrowser) {
  // "slow ..." asks for a 20 s sleep (the browser cancels it); "ask me ..." asks the user a question
  // (user_input); any other message gets an echo tool call; a tool result gets an answer streamed in
  // small pieces, so the browser sees the tokens arrive. The orchestrator (its prompt says
  // ORCHESTRATOR) hands every message to the helper with `delegate` and then passes its answer on.
  Script(json::array{
      Rule(Match({{"any_content_contains", "ORCHESTRATOR"}, {"last_role", "user"}}),
           ToolCallsReply({{"delegate", json::object{{"agent", "ui-helper"}, {"task", "look up {{last_content}}"}}}})),
      Rule(Match({{"any_content_contains", "ORCHESTRATOR"}, {"last_role", "tool"}}),
           Text("the helper says: {{last_tool_content}}")),
      Rule(Match({{"any_content_contains", "HELPER"}}), Text("facts about {{last_content}}")),
      Rule(Match({{"last_role", "user"}, {"last_content_contains", "slow"}}), session_tests::SleepCall(20000)),
      Rule(Match({{"last_role", "user"}, {"last_content_contains", "ask me"}}), session_tests::AskUser("Which colour?")),
      Rule(Match({{"last_role", "user"}}), ToolCallsReply({{"echo", json::object{{"text", "{{last_content}}"}}}})),
      Rule(Match({{"last_role", "tool"}}), json::object{{"content", "Hello from the fixture: {{last_tool_content}}"},
                                                        {"chunk_size", 4},
                                                        {"chunk_delay_ms", 40}}),
  });
  SessionAgent("ui-agent");
  DefineAgent(json::object{{"agent_id", "ui-helper"}, {"system_prompt", "You are the HELPER."},
                           {"description", "Looks things up."}, {"stream", false}});
  DefineAgent(json::object{{"agent_id", "ui-boss"}, {"system_prompt", "You are the ORCHESTRATOR."},
                           {"agents", json::array{"ui-helper"}}, {"stream", false}});
  RunBrowserScript("dashboard-test.mjs", {"CAIRN_UI_AGENT=ui-agent", "CAIRN_UI_BOSS=ui-boss"});
}

// Authentication on: the browser signs in with keys of different roles (roles-test.mjs).
class e2e_ui_roles : public BrowserTest {
 protected:
  static constexpr const char* kBootstrapKey = "bootstrap-admin-key-for-the-ui-0123456789";
  std::vector<std::string> ServerArgs() const override {
    std::vector<std::string> args = SessionTest::ServerArgs();
    args.insert(args.end(), {"--auth=on", "--bootstrap-admin-key", kBootstrapKey});
    return args;
  }
};

TEST_F(e2e_ui_roles, OnlyWhatTheRoleAllowsAndTheServerStillRefuses) {
  Script(json::array{
      Rule(Match({{"last_role", "user"}, {"last_content_contains", "ask me"}}), session_tests::AskUser("Which colour?")),
      Rule(Match({{"last_role", "user"}}), Text("an answer")),
  });
  RunBrowserScript("roles-test.mjs", {"CAIRN_ADMIN_KEY=" + std::string(kBootstrapKey), "CAIRN_UI_AGENT=roles-agent"});
}

}  // namespace
}  // namespace cairn::e2e
