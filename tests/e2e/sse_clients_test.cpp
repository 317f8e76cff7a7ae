// GET /events/stream read by independent SSE clients run as subprocesses: the npm `eventsource`
// package under node (tests/e2e/sse-node, installed with `npm ci`) and the curl command line.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "e2e_support.h"
#include "sse_client.h"
#include "support/subprocess.h"

#ifndef CAIRN_E2E_SSE_NODE_DIR
#error "CAIRN_E2E_SSE_NODE_DIR must name tests/e2e/sse-node"
#endif

namespace cairn::e2e {
namespace {

using namespace std::chrono_literals;
using test_support::FindOnPath;
using test_support::Subprocess;

constexpr auto kWait = std::chrono::milliseconds(30000);

bool Exists(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0;
}

class e2e_sse_clients : public ServerTest {
 protected:
  std::vector<std::string> ServerArgs() const override { return {"--sync", "normal"}; }

  json::object Titled(const std::string& title, const std::string& tag) {
    return CreateOk(json::object{{"title", title}, {"tags", json::array{json::value(tag)}}});
  }
};

TEST_F(e2e_sse_clients, NpmEventSourceReceivesTheEventsWithTheirIds) {
  const std::string dir = CAIRN_E2E_SSE_NODE_DIR;
  const std::string node = FindOnPath("node");
  ASSERT_FALSE(node.empty()) << "`node` is not on PATH: install Node.js (Debian 12: apt-get install nodejs npm), "
                                "then run `npm ci` in "
                             << dir;
  ASSERT_TRUE(Exists(dir + "/node_modules/eventsource/package.json"))
      << "the npm eventsource package is not installed: run `npm ci --prefix " << dir << "` (or `cd " << dir
      << " && npm ci`)";

  Titled("before", "node");  // written before the client connects: not delivered (no resume point)
  const std::string url = server().url() + "/events/stream?tag=node";
  Subprocess p({node, dir + "/collect.mjs", url, "4", "30000"});
  ASSERT_TRUE(p.Start()) << p.error();
  ASSERT_TRUE(p.ReadUntil([](const Subprocess& s) { return s.err().find("open\n") != std::string::npos; }, kWait))
      << "node never opened the stream; stderr: " << p.err() << " stdout: " << p.out();

  std::vector<std::string> ids;
  for (int i = 0; i < 4; ++i) {
    ids.push_back(StringAt(Titled("n" + std::to_string(i), "node"), "id"));
    Titled("skip" + std::to_string(i), "other");
  }
  int code = p.Wait(kWait);
  ASSERT_EQ(code, 0) << "node " << dir << "/collect.mjs " << url << " 4\nstderr: " << p.err() << "\nstdout: " << p.out();
  std::vector<std::string> lines = p.OutLines();
  ASSERT_EQ(lines.size(), 4u) << p.out();
  int64_t last = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    boost::system::error_code ec;
    json::value v = json::parse(lines[i], ec);
    ASSERT_FALSE(ec) << lines[i];
    const json::object& msg = v.as_object();
    ASSERT_TRUE(msg.at("data").is_object()) << lines[i];
    const json::object& data = msg.at("data").as_object();
    EXPECT_EQ(StringAt(data, "type"), "breadcrumb.created") << lines[i];
    EXPECT_EQ(StringAt(data, "breadcrumb_id"), ids[i]) << lines[i];
    EXPECT_EQ(StringAt(data, "title"), "n" + std::to_string(i)) << lines[i];
    EXPECT_EQ(StringAt(msg, "lastEventId"), std::to_string(IntAt(data, "seq"))) << lines[i];
    EXPECT_GT(IntAt(data, "seq"), last) << lines[i];
    last = IntAt(data, "seq");
  }

  // The same client resuming from the second event's id (?since=) gets the last two.
  const std::string since = std::to_string(IntAt(json::parse(lines[1]).as_object().at("data").as_object(), "seq"));
  Subprocess resumed({node, dir + "/collect.mjs", url + "&since=" + since, "2", "30000"});
  ASSERT_TRUE(resumed.Start()) << resumed.error();
  ASSERT_EQ(resumed.Wait(kWait), 0) << "stderr: " << resumed.err() << "\nstdout: " << resumed.out();
  std::vector<std::string> again = resumed.OutLines();
  ASSERT_EQ(again.size(), 2u) << resumed.out();
  EXPECT_EQ(again[0], lines[2]);
  EXPECT_EQ(again[1], lines[3]);
}

TEST_F(e2e_sse_clients, CurlCommandLineReadsTheFrames) {
  const std::string curl = FindOnPath("curl");
  ASSERT_FALSE(curl.empty()) << "`curl` is not on PATH (Debian: apt-get install curl)";
  Titled("c0", "curl");
  Titled("c1", "curl");
  // Resume from before the first event with a Last-Event-ID header: the backlog, then the live tail.
  test_support::ProcessOptions no_proxy;
  no_proxy.set_env = {"no_proxy=*"};
  Subprocess p({curl, "-sN", "--no-progress-meter", "-H", "Last-Event-ID: 0", server().url() + "/events/stream?tag=curl"},
               no_proxy);
  ASSERT_TRUE(p.Start()) << p.error();
  auto id_lines = [](const Subprocess& s) {
    size_t n = 0;
    for (size_t at = 0; (at = s.out().find("id: ", at)) != std::string::npos; ++at) n += (at == 0 || s.out()[at - 1] == '\n');
    return n;
  };
  ASSERT_TRUE(p.ReadUntil([&](const Subprocess& s) { return id_lines(s) >= 2; }, kWait))
      << "stdout: " << p.out() << "\nstderr: " << p.err();
  Titled("c2", "curl");
  Titled("x", "other");
  Titled("c3", "curl");
  ASSERT_TRUE(p.ReadUntil([&](const Subprocess& s) {
    return id_lines(s) >= 4 && s.out().size() >= 2 && s.out().substr(s.out().size() - 2) == "\n\n";
  }, kWait)) << "stdout: " << p.out() << "\nstderr: " << p.err();
  p.Kill(SIGTERM);
  p.Wait(kWait);

  EXPECT_EQ(p.out().rfind(": stream open\n\n", 0), 0u) << p.out().substr(0, 100);
  SseParser parser;
  std::vector<SseFrame> frames = parser.Feed(p.out());
  std::vector<SseFrame> events = EventsOf(frames);
  ASSERT_EQ(events.size(), 4u) << p.out();
  for (size_t i = 0; i < events.size(); ++i) {
    json::object o = events[i].Json().as_object();
    EXPECT_EQ(StringAt(o, "title"), "c" + std::to_string(i));
    EXPECT_EQ(*events[i].id, std::to_string(IntAt(o, "seq")));
    EXPECT_EQ(events[i].data->find('\n'), std::string::npos) << "data is one line";
  }
}

}  // namespace
}  // namespace cairn::e2e
