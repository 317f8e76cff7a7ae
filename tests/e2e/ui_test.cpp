// The dashboard (/ui) in a real browser: tests/e2e/ui-node/dashboard-test.mjs drives Debian's
// chromium with the npm playwright-core (headless) against the real server, pointed at the
// scripted fixture LLM, and checks every page with the npm @axe-core/playwright. This test starts
// both servers, scripts the model, defines the agent the browser talks to, runs the script under
// node (tests/support's Subprocess) and fails with its report unless every step passed.
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

class e2e_ui : public SessionTest {};

TEST_F(e2e_ui, DashboardPagesInARealBrowser) {
  const std::string dir = CAIRN_E2E_UI_NODE_DIR;
  const std::string node = NodeBinary();
  ASSERT_FALSE(node.empty()) << "`node` is not on PATH: run scripts/install-deps";
  ASSERT_TRUE(Exists(dir + "/node_modules/playwright-core/package.json") &&
              Exists(dir + "/node_modules/@axe-core/playwright/package.json"))
      << "playwright-core and @axe-core/playwright are not installed in " << dir << ": run scripts/install-deps";
  const std::string chromium = Chromium();
  ASSERT_FALSE(chromium.empty()) << "Debian's chromium is not installed: run scripts/install-deps";

  // "slow ..." asks for a 20 s sleep (the browser cancels it); "ask me ..." asks the user a question
  // (user_input); any other message gets an echo tool call; a tool result gets an answer streamed in
  // small pieces, so the browser sees the tokens arrive.
  Script(json::array{
      Rule(Match({{"last_role", "user"}, {"last_content_contains", "slow"}}), session_tests::SleepCall(20000)),
      Rule(Match({{"last_role", "user"}, {"last_content_contains", "ask me"}}), session_tests::AskUser("Which colour?")),
      Rule(Match({{"last_role", "user"}}), ToolCallsReply({{"echo", json::object{{"text", "{{last_content}}"}}}})),
      Rule(Match({{"last_role", "tool"}}), json::object{{"content", "Hello from the fixture: {{last_tool_content}}"},
                                                        {"chunk_size", 4},
                                                        {"chunk_delay_ms", 40}}),
  });
  SessionAgent("ui-agent");

  TempDir shots_dir("cairn-ui-shots");
  const char* shots_env = std::getenv("CAIRN_UI_SHOTS");
  const std::string shots = shots_env != nullptr && *shots_env != '\0' ? shots_env : shots_dir.path();
  ProcessOptions options;
  options.set_env = {"CAIRN_URL=" + server().url(), "CAIRN_UI_AGENT=ui-agent", "CAIRN_UI_SHOTS=" + shots,
                     "CHROMIUM=" + chromium};
  Subprocess browser({node, dir + "/dashboard-test.mjs"}, options);
  ASSERT_TRUE(browser.Start()) << browser.error();
  test_support::ProcessResult result = browser.Finish(std::chrono::minutes(4));
  std::cout << result.out;
  EXPECT_EQ(result.exit_code, 0) << "node " << dir << "/dashboard-test.mjs failed (screenshots of the failing steps in "
                                 << shots << ")\nstdout:\n"
                                 << result.out << "\nstderr:\n"
                                 << result.err;
  EXPECT_NE(result.out.find("all passed"), std::string::npos);
}

}  // namespace
}  // namespace cairn::e2e
