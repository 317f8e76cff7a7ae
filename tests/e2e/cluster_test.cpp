// Several `cairn serve` processes on one PostgreSQL database (docs/deploy.md): the test process's
// own throwaway PostgreSQL server (support/postgres_server.h), a fresh database per test, and the
// real binary started with --store <that database>. Checked like a client would: records written
// through any process are read through every other, every stream sees every event in seq order
// and resumes on another process, tool requests written through every process are answered
// exactly once, and when the process doing the background work dies (kill -9) a standby takes it
// over without answering anything twice; the workers share the executors (shards) and the
// survivor of a kill -9 runs them all. With `--bus nats://…` (a throwaway nats-server,
// support/nats_server.h) events reach the processes through NATS JetStream, and survive its restart.
#include <sys/stat.h>

#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "agent_support.h"
#include "e2e_support.h"
#include "llm_servers.h"
#include "session_support.h"
#include "sse_client.h"
#include "support/loopback_http_server.h"
#include "support/nats_server.h"
#include "support/postgres_server.h"
#include "tool_support.h"

namespace cairn::e2e {
namespace {

using namespace std::chrono_literals;

// Every process of a cluster encrypts secrets with the same key.
constexpr const char* kMasterKey = "6b3c2a1f0e9d8c7b6a5f4e3d2c1b0a99887766554433221100ffeeddccbbaa00";

class e2e_cluster : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    test_support::PostgresServer* postgres = test_support::PostgresServer::Shared(&why);
    ASSERT_NE(postgres, nullptr) << why;
    auto uri = postgres->CreateDatabase();
    ASSERT_TRUE(uri.ok()) << uri.status().ToString();
    uri_ = *uri;
  }

  // A process of the cluster with `role` (all, api, worker), started.
  ServerProcess& Process(const std::string& role, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--store", uri_, "--role", role, "--master-key", kMasterKey};
    if (nats_) args.insert(args.end(), {"--bus", nats_->url()});
    args.insert(args.end(), extra.begin(), extra.end());
    processes_.push_back(std::make_unique<ServerProcess>(args));
    ServerProcess& process = *processes_.back();
    EXPECT_TRUE(process.Start()) << process.error() << process.LogTail();
    return process;
  }

  static json::object Created(ServerProcess& process, const json::value& body) {
    HttpClient http(process.port());
    Response r = http.Post("/breadcrumbs", json::serialize(body));
    EXPECT_EQ(r.status, 201) << r.Describe();
    return r.status == 201 ? r.Json().as_object() : json::object{};
  }

  // Starts the test's nats-server; Process() then passes --bus with it.
  void UseNats() {
    auto nats = test_support::NatsServer::Start();
    ASSERT_TRUE(nats.ok()) << nats.status().ToString();
    nats_ = std::move(nats).value();
  }

  // The processes of the tool tests: `all` (the worker), `api`, and a second `worker` (its log at
  // info: it says what it does), a tool client on each, and the tools echo1 .. echo<tools>
  // (built-in echo). The two workers share the executors: each runs those of its shards.
  struct ToolCluster {
    ServerProcess* worker = nullptr;
    ServerProcess* api = nullptr;
    ServerProcess* standby = nullptr;
    std::unique_ptr<ToolClient> through_worker, through_api, through_standby;
    ToolClient* clients[3] = {};
  };
  ToolCluster StartToolCluster(int tools = 1) {
    ToolCluster cluster;
    cluster.worker = &Process("all", {"--sync", "normal"});
    cluster.api = &Process("api");
    cluster.standby = &Process("worker", {"--log-level", "info"});
    cluster.through_worker = std::make_unique<ToolClient>(*cluster.worker);
    cluster.through_api = std::make_unique<ToolClient>(*cluster.api);
    cluster.through_standby = std::make_unique<ToolClient>(*cluster.standby);
    for (int i = 1; i <= tools; ++i) {
      cluster.through_api->DefineTool({{"name", "echo" + std::to_string(i)}, {"runtime", "builtin"}, {"builtin", "echo"}});
    }
    cluster.clients[0] = cluster.through_worker.get();
    cluster.clients[1] = cluster.through_api.get();
    cluster.clients[2] = cluster.through_standby.get();
    return cluster;
  }

  // A session of a new agent (`agent`: its agent.def.v1 context) made through `process`, its
  // stream open, and `content` posted to it. Empty ids (and a test failure) when a step failed.
  struct SessionRun {
    std::string session_id;
    std::string execution_id;
    std::unique_ptr<SessionStream> stream;
  };
  static SessionRun PostToNewSession(ServerProcess& process, const json::object& agent, const std::string& content) {
    SessionRun run;
    HttpClient http(process.port());
    Response defined = http.Post("/breadcrumbs", json::serialize(json::object{
                                                     {"schema_name", "agent.def.v1"}, {"title", "agent"}, {"context", agent}}));
    EXPECT_EQ(defined.status, 201) << defined.Describe();
    Response session = http.Post("/sessions", json::serialize(json::object{{"agent_id", agent.at("agent_id")}}));
    EXPECT_EQ(session.status, 201) << session.Describe();
    if (session.status != 201) return run;
    run.session_id = StringAt(session.Json().as_object(), "id");
    run.stream = std::make_unique<SessionStream>(process, run.session_id);
    EXPECT_TRUE(run.stream->Open()) << run.stream->Describe();
    Response posted = http.Post("/sessions/" + run.session_id + "/messages",
                                json::serialize(json::object{{"content", content}}));
    EXPECT_EQ(posted.status, 202) << posted.Describe();
    if (posted.status == 202) run.execution_id = StringAt(posted.Json().as_object(), "execution_id");
    return run;
  }

  // Writes records w<from>..w<to - 1> tagged "fan", round robin through `writers`; their ids go
  // to `written`.
  static void WriteFan(const std::vector<ServerProcess*>& writers, int from, int to, std::set<std::string>* written) {
    for (int i = from; i < to; ++i) {
      json::object record =
          Created(*writers[i % writers.size()], json::object{{"title", "w" + std::to_string(i)}, {"tags", {"fan"}}});
      written->insert(StringAt(record, "id"));
    }
  }
  // The seqs of `stream`'s events, which are checked to name exactly `written`, gap-free and in order.
  static std::vector<int64_t> CheckFanStream(const SseClient& stream, const std::set<std::string>& written) {
    std::vector<int64_t> seqs = SeqsOf(stream.Frames());
    std::set<std::string> seen;
    for (const SseFrame& frame : stream.Events()) seen.insert(StringAt(frame.Json().as_object(), "breadcrumb_id"));
    EXPECT_EQ(seen, written);
    for (size_t i = 1; i < seqs.size(); ++i) EXPECT_EQ(seqs[i], seqs[i - 1] + 1) << "a gap or a repeat at " << i;
    return seqs;
  }
  // Moves a client of `stream` (its events had `seqs`) to `process` after its event `at`: the new
  // stream resumes with the next seq and gets the rest (`rest` events), nothing missed or repeated;
  // with `rest_count`, exactly `rest` of them.
  static void ExpectResumesOn(ServerProcess& process, SseClient& stream, const std::vector<int64_t>& seqs, size_t at,
                              size_t rest, bool rest_count) {
    std::string last_id = *stream.Events()[at].id;
    stream.Stop();
    SseClient moved(process.url() + "/events/stream?tag=fan", {{"Last-Event-ID", last_id}});
    moved.Start();
    ASSERT_TRUE(moved.WaitForEvents(rest, 20s)) << moved.Describe();
    std::vector<int64_t> resumed = SeqsOf(moved.Frames());
    if (rest_count) {
      ASSERT_EQ(resumed.size(), rest);
    }
    EXPECT_EQ(resumed.front(), seqs[at] + 1);
    EXPECT_EQ(resumed.back(), seqs.back());
  }

  std::string uri_;
  std::unique_ptr<test_support::NatsServer> nats_;
  std::vector<std::unique_ptr<ServerProcess>> processes_;
};

TEST_F(e2e_cluster, OneProcessKeepsRecordsHistoryAndSearchInPostgres) {
  ServerProcess& server = Process("all");
  json::object note = Created(server, json::object{{"title", "quarterly pelican census"}, {"tags", {"birds"}},
                                                   {"context", {{"count", 12}, {"site", "north shore"}}}});
  std::string id = StringAt(note, "id");
  HttpClient http(server.port());
  Response patched = http.Patch("/breadcrumbs/" + id, R"({"context":{"count":13,"site":"north shore"}})",
                                {{"If-Match", "1"}});
  ASSERT_EQ(patched.status, 200) << patched.Describe();

  ASSERT_TRUE(server.Restart()) << server.error();
  HttpClient again(server.port());
  Response got = again.Get("/breadcrumbs/" + id);
  ASSERT_EQ(got.status, 200) << got.Describe();
  EXPECT_EQ(IntAt(got.Json().as_object(), "version"), 2);
  Response history = again.Get("/breadcrumbs/" + id + "/history");
  ASSERT_EQ(history.status, 200) << history.Describe();
  EXPECT_NE(history.body.find("\"count\":12"), std::string::npos) << history.body;
  Response matched = again.Get("/breadcrumbs?context_match=" +
                               UrlEncode(R"([{"path":"$.count","op":"gte","value":13}])"));
  ASSERT_EQ(matched.status, 200) << matched.Describe();
  EXPECT_NE(matched.body.find(id), std::string::npos) << matched.body;
  Response found = again.Get("/breadcrumbs/search?q=pelican");
  ASSERT_EQ(found.status, 200) << found.Describe();
  EXPECT_NE(found.body.find(id), std::string::npos) << found.body;
  // The path is unique across the database, whichever process writes.
  Created(server, json::object{{"title", "a"}, {"path", "shared/one"}});
  ServerProcess& api = Process("api");
  HttpClient other(api.port());
  Response taken = other.Post("/breadcrumbs", R"({"title":"b","path":"shared/one"})");
  EXPECT_TRUE(IsError(taken, 409, "conflict")) << taken.Describe();
}

TEST_F(e2e_cluster, WritesThroughEveryProcessReachAStreamOnAnyInSeqOrder) {
  ServerProcess& a = Process("all");
  ServerProcess& b = Process("api");
  ServerProcess& c = Process("api");
  SseClient stream(c.url() + "/events/stream?tag=fan&since=0");
  stream.Start();
  ASSERT_TRUE(stream.WaitForOpen(10s)) << stream.Describe();
  std::set<std::string> written;
  WriteFan({&a, &b, &c}, 0, 45, &written);
  ASSERT_TRUE(stream.WaitForEvents(45, 20s)) << stream.Describe();
  std::vector<int64_t> seqs = CheckFanStream(stream, written);

  // A client moved to another process resumes where it was, with nothing missed or repeated.
  ExpectResumesOn(a, stream, seqs, 19, 25, /*rest_count=*/true);
}

TEST_F(e2e_cluster, ToolRequestsThroughEveryProcessAreAnsweredExactlyOnceAcrossAKillNine) {
  ToolCluster cluster = StartToolCluster();
  ServerProcess& worker = *cluster.worker;
  ServerProcess& standby = *cluster.standby;
  ToolClient& through_api = *cluster.through_api;
  ToolClient& through_standby = *cluster.through_standby;
  ToolClient** clients = cluster.clients;
  std::vector<std::string> before;
  for (int i = 0; i < 60; ++i) before.push_back(clients[i % 3]->Request("echo1", json::object{{"i", i}}));
  // Answers come from whichever worker holds echo1's shard.
  for (const std::string& id : before) {
    json::object answer = through_api.AwaitResponse(id);
    EXPECT_EQ(StatusOf(answer), "success") << JsonText(answer);
  }

  std::vector<std::string> after;
  for (int i = 0; i < 30; ++i) after.push_back(through_api.Request("echo1", json::object{{"j", i}}));
  worker.Kill9();  // whatever it was running is taken over by the other worker
  for (int i = 30; i < 60; ++i) after.push_back(clients[1 + i % 2]->Request("echo1", json::object{{"j", i}}));
  for (const std::string& id : after) {
    json::object answer = through_api.AwaitResponse(id);
    EXPECT_EQ(StatusOf(answer), "success") << JsonText(answer);
  }
  // A fence: anything a run would still write for the requests above is written before this is
  // answered (one executor, triggers in seq order).
  through_api.AwaitResponse(through_standby.Request("echo1", json::object{{"fence", true}}));
  for (const auto* ids : {&before, &after}) {
    for (const std::string& id : *ids) EXPECT_EQ(through_api.ResponsesTo(id).size(), 1u) << id;
  }
  EXPECT_NE(standby.LogTail(1 << 20).find("does the background work"), std::string::npos) << standby.LogTail();
}

// The workers share the executors, each running those of its shards (half each for two); when one
// dies the other takes its shards and runs every executor, answering each request once.
TEST_F(e2e_cluster, TwoWorkersShareTheExecutorsAndTheSurvivorOfAKillNineRunsThemAll) {
  constexpr int kTools = 16;
  ToolCluster cluster = StartToolCluster(kTools);
  ServerProcess& first = *cluster.worker;
  ServerProcess& second = *cluster.standby;
  ToolClient& through_api = *cluster.through_api;
  ASSERT_TRUE(AwaitMetric(first.port(), "cairn_executor_shards_held", 32)) << first.LogTail();
  ASSERT_TRUE(AwaitMetric(second.port(), "cairn_executor_shards_held", 32)) << second.LogTail();
  auto runs = [](ServerProcess& process) {
    return MetricSum(HttpClient(process.port()).Get("/metrics").body, "cairn_executor_runs_total");
  };
  // Four requests to each tool, through the processes from `first_client` on.
  auto ask_every_tool = [&](int round, int first_client) {
    std::vector<std::string> ids;
    for (int i = 0; i < 4 * kTools; ++i) {
      ToolClient* client = cluster.clients[first_client + i % (3 - first_client)];
      ids.push_back(client->Request("echo" + std::to_string(1 + i % kTools), json::object{{"round", round}, {"i", i}}));
    }
    for (const std::string& id : ids) EXPECT_EQ(StatusOf(through_api.AwaitResponse(id)), "success") << id;
    return ids;
  };
  std::vector<std::string> asked = ask_every_tool(1, 0);
  // Each run is counted by the process that ran it, once its record is written (after its answer).
  for (auto deadline = std::chrono::steady_clock::now() + 30s;
       runs(first) + runs(second) < static_cast<double>(asked.size()) && std::chrono::steady_clock::now() < deadline;) {
    std::this_thread::sleep_for(20ms);  // a poll, with a deadline
  }
  const double first_ran = runs(first);
  const double second_ran = runs(second);
  EXPECT_EQ(first_ran + second_ran, static_cast<double>(asked.size())) << "a request run twice, or not at all";
  EXPECT_GT(first_ran, 0) << "the first worker ran none of 16 executors";
  EXPECT_GT(second_ran, 0) << "the second worker ran none of 16 executors";

  first.Kill9();
  ASSERT_TRUE(AwaitMetric(second.port(), "cairn_executor_shards_held", 64)) << second.LogTail();
  std::vector<std::string> after = ask_every_tool(2, 1);  // not through the dead process
  ASSERT_TRUE(AwaitMetric(second.port(), "cairn_executor_runs_total", second_ran + after.size())) << second.LogTail();
  asked.insert(asked.end(), after.begin(), after.end());
  for (const std::string& id : asked) EXPECT_EQ(through_api.ResponsesTo(id).size(), 1u) << id;
  EXPECT_NE(second.LogTail(1 << 20).find("executors: this process holds 64 of 64 shards"), std::string::npos)
      << second.LogTail();
}

TEST_F(e2e_cluster, ASessionTalkedToThroughAnApiProcessRunsOnTheWorker) {
  FixtureLlm llm(json::object{{"rules", json::array{Rule(Match({{"last_role", "user"}}),
                                                          Text("the worker heard: {{last_content}}"))}}});
  ASSERT_TRUE(llm.Start()) << llm.error();
  std::vector<std::string> llm_args = {"--llm-base-url", llm.base_url(), "--llm-model", "fixture-model"};
  ServerProcess& worker = Process("all", llm_args);
  ServerProcess& api = Process("api", llm_args);
  SessionRun run = PostToNewSession(api, json::object{{"agent_id", "helper"}, {"system_prompt", "Be brief."}}, "ping");
  ASSERT_FALSE(run.execution_id.empty());
  SessionStream& stream = *run.stream;
  const std::string& execution = run.execution_id;
  auto done = stream.AwaitType("execution.completed", execution);
  ASSERT_TRUE(done.has_value()) << stream.Describe() << worker.LogTail();
  auto answer = stream.Await([&](const SessionEvent& e) { return e.execution_id == execution && e.role == "assistant"; });
  ASSERT_TRUE(answer.has_value()) << stream.Describe();
  EXPECT_EQ(answer->content, "the worker heard: ping");
}

// The workers share the sessions too (their shards): each session's executions run on the worker
// holding its shard, which each worker's own model server shows in the answer; when one worker dies
// the other runs every session, each execution answered once.
TEST_F(e2e_cluster, TwoWorkersShareTheSessionsAndTheSurvivorOfAKillNineRunsThemAll) {
  auto heard_by = [](const std::string& worker) {
    return json::object{{"rules", json::array{Rule(Match({{"last_role", "user"}}), Text(worker + " heard: {{last_content}}"))}}};
  };
  FixtureLlm llm_a(heard_by("a"));
  FixtureLlm llm_b(heard_by("b"));
  ASSERT_TRUE(llm_a.Start()) << llm_a.error();
  ASSERT_TRUE(llm_b.Start()) << llm_b.error();
  auto model = [](FixtureLlm& llm) { return std::vector<std::string>{"--llm-base-url", llm.base_url(), "--llm-model", "m"}; };
  ServerProcess& a = Process("all", model(llm_a));
  ServerProcess& b = Process("worker", model(llm_b));
  ServerProcess& api = Process("api", model(llm_a));
  ASSERT_TRUE(AwaitMetric(a.port(), "cairn_session_shards_held", 32)) << a.LogTail();
  ASSERT_TRUE(AwaitMetric(b.port(), "cairn_session_shards_held", 32)) << b.LogTail();
  HttpClient http(api.port());
  Response defined = http.Post("/breadcrumbs", json::serialize(json::object{
      {"schema_name", "agent.def.v1"}, {"title", "agent"}, {"context", json::object{{"agent_id", "helper"}}}}));
  ASSERT_EQ(defined.status, 201) << defined.Describe();
  constexpr int kSessions = 12;
  std::vector<std::string> ids;
  std::vector<std::unique_ptr<SessionStream>> streams;
  for (int i = 0; i < kSessions; ++i) {
    Response session = http.Post("/sessions", R"({"agent_id":"helper"})");
    ASSERT_EQ(session.status, 201) << session.Describe();
    ids.push_back(StringAt(session.Json().as_object(), "id"));
    streams.push_back(std::make_unique<SessionStream>(api, ids.back()));
    ASSERT_TRUE(streams.back()->Open()) << streams.back()->Describe();
  }
  // Posts `content` to every session; returns which worker answered each.
  auto talk = [&](const std::string& content) {
    std::vector<std::string> executions;
    for (const std::string& id : ids) {
      Response posted = http.Post("/sessions/" + id + "/messages", json::serialize(json::object{{"content", content}}));
      EXPECT_EQ(posted.status, 202) << posted.Describe();
      executions.push_back(posted.status == 202 ? StringAt(posted.Json().as_object(), "execution_id") : "");
    }
    std::map<std::string, int> answered_by;
    for (int i = 0; i < kSessions; ++i) {
      auto answer = streams[i]->Await(
          [&](const SessionEvent& e) { return e.execution_id == executions[i] && e.role == "assistant"; });
      EXPECT_TRUE(answer.has_value()) << streams[i]->Describe();
      if (answer) ++answered_by[answer->content.substr(0, answer->content.find(' '))];
      EXPECT_TRUE(answer && answer->content.ends_with(" heard: " + content)) << (answer ? answer->content : "");
    }
    return answered_by;
  };
  std::map<std::string, int> first = talk("one");
  EXPECT_GT(first["a"], 0) << "worker a ran none of 12 sessions";
  EXPECT_GT(first["b"], 0) << "worker b ran none of 12 sessions";

  a.Kill9();
  ASSERT_TRUE(AwaitMetric(b.port(), "cairn_session_shards_held", 64)) << b.LogTail();
  std::map<std::string, int> second = talk("two");
  EXPECT_EQ(second["b"], kSessions);
  for (int i = 0; i < kSessions; ++i) {
    size_t answers = 0;
    for (const SessionEvent& e : streams[i]->Events()) answers += e.role == "assistant" ? 1 : 0;
    EXPECT_EQ(answers, 2u) << streams[i]->Describe();
  }
}

// The session runs on one worker, its tool on one of two others (the executors' shards): the cancel
// made through the API process reaches both.
TEST_F(e2e_cluster, ASessionRunCancelledThroughAnApiProcessStopsOnTheWorkersRunningItAndItsTool) {
  FixtureLlm llm(json::object{{"rules", json::array{Rule(Match({{"last_role", "user"}}), ToolCallsReply({{"hang", json::object{}}})),
                                                    Rule(Match({{"last_role", "tool"}}), Text("woke up"))}}});
  ASSERT_TRUE(llm.Start()) << llm.error();
  std::vector<std::string> llm_args = {"--llm-base-url", llm.base_url(), "--llm-model", "fixture-model"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.end(), llm_args.begin(), llm_args.end());
    return more;
  };
  ServerProcess& worker = Process("worker", with({"--work", "sessions,webhooks"}));
  Process("worker", with({"--work", "executors"}));
  Process("worker", with({"--work", "executors"}));
  ServerProcess& api = Process("api", llm_args);
  // A process tool (run by the worker) that notes it started, then hangs far longer than the test.
  std::string marker = worker.root_dir() + "/hang.started";
  std::string script = worker.root_dir() + "/hang.sh";
  {
    std::ofstream out(script);
    out << "#!/bin/sh\n: > " << marker << "\nexec sleep 30\n";
  }
  ASSERT_EQ(chmod(script.c_str(), 0755), 0);
  ToolClient tools(api);
  tools.DefineTool({{"name", "hang"}, {"runtime", "process"}, {"command", json::array{json::value(script)}},
                    {"env", json::array{"PATH"}}, {"cwd", worker.root_dir()}, {"timeout_ms", 60000}});
  SessionRun run = PostToNewSession(api, json::object{{"agent_id", "napper"}, {"tools", json::array{"hang"}}}, "hang around");
  ASSERT_FALSE(run.execution_id.empty());
  SessionStream& stream = *run.stream;
  const std::string& execution = run.execution_id;
  HttpClient http(api.port());
  ASSERT_TRUE(WaitForFile(marker, 30s)) << "the tool never started" << worker.LogTail();

  auto started = std::chrono::steady_clock::now();
  Response cancelled = http.Post("/executions/" + execution + "/cancel", "");
  ASSERT_EQ(cancelled.status, 200) << cancelled.Describe();
  auto end = stream.AwaitEnd(execution);
  ASSERT_TRUE(end) << stream.Describe();
  EXPECT_EQ(end->event_type, "execution.cancelled");
  // The run on the worker stopped too: its tool's run ends cancelled (its process killed), long
  // before its 30 s sleep, and the model is not asked again.
  json::object record = tools.AwaitEvent("agent.execution.v1", [&](const json::object& e) {
    return StringAt(ContextOf(e), "parent_execution_id") == execution;
  });
  EXPECT_EQ(StringAt(ContextOf(record), "status"), "cancelled") << JsonText(record);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(15));
}

TEST_F(e2e_cluster, WorkersSplitTheBackgroundWorkByPartAndEachPartFailsOverOnItsOwn) {
  FixtureLlm llm(json::object{{"rules", json::array{Rule(Match({{"last_role", "user"}}),
                                                          Text("sessions heard: {{last_content}}"))}}});
  ASSERT_TRUE(llm.Start()) << llm.error();
  std::vector<std::string> llm_args = {"--llm-base-url", llm.base_url(), "--llm-model", "fixture-model",
                                       "--log-level", "info"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.end(), llm_args.begin(), llm_args.end());
    return more;
  };
  ServerProcess& executors = Process("worker", with({"--work", "executors"}));
  ServerProcess& sessions = Process("worker", with({"--work", "sessions,webhooks"}));
  ServerProcess& api = Process("api", llm_args);
  ToolClient tools(api);
  tools.DefineTool({{"name", "echo1"}, {"runtime", "builtin"}, {"builtin", "echo"}});
  // Only `executors` may run tools, only `sessions` sessions: both answered means both parts run.
  EXPECT_EQ(StatusOf(tools.AwaitResponse(tools.Request("echo1", json::object{{"n", 1}}))), "success");
  SessionRun run = PostToNewSession(api, json::object{{"agent_id", "helper"}}, "split");
  ASSERT_FALSE(run.execution_id.empty());
  auto answer = run.stream->Await([&](const SessionEvent& e) { return e.execution_id == run.execution_id && e.role == "assistant"; });
  ASSERT_TRUE(answer.has_value()) << run.stream->Describe() << sessions.LogTail();
  EXPECT_EQ(answer->content, "sessions heard: split");
  std::string executors_log = executors.LogTail(1 << 20);
  std::string sessions_log = sessions.LogTail(1 << 20);
  EXPECT_NE(executors_log.find("background work: executors"), std::string::npos) << executors_log;
  EXPECT_EQ(executors_log.find("background work: sessions"), std::string::npos) << executors_log;
  EXPECT_NE(sessions_log.find("background work: sessions"), std::string::npos) << sessions_log;
  EXPECT_NE(sessions_log.find("background work: webhooks"), std::string::npos) << sessions_log;
  EXPECT_EQ(sessions_log.find("background work: executors"), std::string::npos) << sessions_log;
  // Only the executors' process holds MCP connections.
  auto connected_here = [](ServerProcess& process) {
    Response servers = HttpClient(process.port()).Get("/mcp/servers");
    EXPECT_EQ(servers.status, 200) << servers.Describe();
    return servers.status == 200 && servers.Json().as_object().at("connected_here").as_bool();
  };
  EXPECT_TRUE(connected_here(executors));
  EXPECT_FALSE(connected_here(sessions));
  EXPECT_FALSE(connected_here(api));

  // A second worker for the executors shares them, and runs them all once their first process
  // died; the sessions go on where they were.
  ServerProcess& standby = Process("worker", with({"--work", "executors"}));
  executors.Kill9();
  EXPECT_EQ(StatusOf(tools.AwaitResponse(tools.Request("echo1", json::object{{"n", 2}}))), "success");
  EXPECT_NE(standby.LogTail(1 << 20).find("background work: executors"), std::string::npos) << standby.LogTail();
  Response again = HttpClient(api.port()).Post("/sessions/" + run.session_id + "/messages", R"({"content":"still"})");
  ASSERT_EQ(again.status, 202) << again.Describe();
  std::string second = StringAt(again.Json().as_object(), "execution_id");
  auto still = run.stream->Await([&](const SessionEvent& e) { return e.execution_id == second && e.role == "assistant"; });
  ASSERT_TRUE(still.has_value()) << run.stream->Describe();
  EXPECT_EQ(still->content, "sessions heard: still");
}

TEST_F(e2e_cluster, AWebhookMadeThroughAnApiProcessIsDeliveredByTheWorker) {
  test_support::LoopbackHttpServer receiver(test_support::Answering(
      [](const test_support::ReceivedRequest&) { return test_support::HttpResponse(204, "No Content", {}, ""); }));
  std::vector<std::string> private_network = {"--allow-private-network", "127.0.0.0/8"};
  ServerProcess& worker = Process("all", private_network);
  ServerProcess& api = Process("api", private_network);
  HttpClient through_api(api.port());
  Response hook = through_api.Post("/webhooks", json::serialize(json::object{
                                                    {"url", receiver.Url("/hook")}, {"selector", {{"any_tags", {"hooked"}}}}}));
  ASSERT_EQ(hook.status, 201) << hook.Describe();
  // The API process does not deliver: after it is gone, the worker still does, so it knew the
  // webhook (it reads the webhooks again every 2 s; they have no events).
  api.Kill9();
  Created(worker, json::object{{"title", "first"}, {"tags", {"hooked"}}});
  ASSERT_TRUE(receiver.WaitForRequests(1, 30s)) << worker.LogTail();
  Created(worker, json::object{{"title", "second"}, {"tags", {"hooked"}}});
  ASSERT_TRUE(receiver.WaitForRequests(2, 30s)) << worker.LogTail();
  std::vector<test_support::ReceivedRequest> got = receiver.requests();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_NE(got[0].body.find("first"), std::string::npos) << got[0].body;
  EXPECT_NE(got[1].body.find("second"), std::string::npos) << got[1].body;
}

TEST_F(e2e_cluster, AKeyMadeOrRevokedThroughOneProcessIsKnownToTheOthers) {
  const std::string bootstrap = "bootstrap-admin-key-0123456789abcdef";
  std::vector<std::string> auth_args = {"--auth=on", "--bootstrap-admin-key", bootstrap, "--jwt-secret",
                                        "jwt-secret-for-tests-0123456789abcdef"};
  ServerProcess& first = Process("all", auth_args);
  ServerProcess& second = Process("api", auth_args);
  HttpClient one(first.port());
  HttpClient two(second.port());
  const Headers admin{{"Authorization", "Bearer " + bootstrap}};
  Response made = one.Post("/tenants/default/keys", R"({"principal":"carol","roles":["user"]})", admin);
  ASSERT_EQ(made.status, 201) << made.Describe();
  std::string key = StringAt(made.Json().as_object(), "key");
  std::string key_id = StringAt(made.Json().as_object(), "key_id");
  const Headers carol{{"Authorization", "Bearer " + key}};
  // The key's event reaches the other process: a stream through it, opened after the key was made,
  // starts once the key authenticates there, and a write through the key tells when it has.
  SseClient probe(second.url() + "/events/stream?tag=probe", {{"Authorization", "Bearer " + bootstrap}});
  probe.Start();
  ASSERT_TRUE(probe.WaitForOpen(10s)) << probe.Describe();
  ASSERT_EQ(one.Post("/breadcrumbs", R"({"title":"probe","tags":["probe"]})", carol).status, 201);
  ASSERT_TRUE(probe.WaitForEvents(1, 10s)) << probe.Describe();
  Response read = two.Get("/breadcrumbs?tag=probe", carol);
  EXPECT_EQ(read.status, 200) << read.Describe();

  Response revoked = one.Delete("/tenants/default/keys/" + key_id, admin);
  ASSERT_TRUE(revoked.status == 200 || revoked.status == 204) << revoked.Describe();
  ASSERT_EQ(one.Post("/breadcrumbs", R"({"title":"after","tags":["probe"]})", admin).status, 201);
  ASSERT_TRUE(probe.WaitForEvents(2, 10s)) << probe.Describe();  // the revocation came before it
  Response refused = two.Get("/breadcrumbs?tag=probe", carol);
  EXPECT_EQ(refused.status, 401) << refused.Describe();
}

TEST_F(e2e_cluster, ATenantCreatedThroughAnApiProcessGetsItsBuiltinsFromTheWorker) {
  const std::string bootstrap = "bootstrap-admin-key-0123456789abcdef";
  std::vector<std::string> args = {"--auth=on", "--bootstrap-admin-key", bootstrap, "--jwt-secret",
                                   "jwt-secret-for-tests-0123456789abcdef", "--builtin-tools=true"};
  Process("all", args);
  ServerProcess& api = Process("api", args);
  HttpClient http(api.port());
  const Headers admin{{"Authorization", "Bearer " + bootstrap}};
  ASSERT_EQ(http.Post("/tenants", R"({"id":"initech","name":"Initech"})", admin).status, 201);
  Response made = http.Post("/tenants/initech/keys", R"({"principal":"peter","roles":["admin"]})", admin);
  ASSERT_EQ(made.status, 201) << made.Describe();
  const Headers peter{{"Authorization", "Bearer " + StringAt(made.Json().as_object(), "key")}};
  SseClient answers(api.url() + "/events/stream?schema_name=tool.response.v1&since=0", peter);
  answers.Start();
  ASSERT_TRUE(answers.WaitForOpen(10s)) << answers.Describe();
  // The built-in echo of the new tenant is installed and run by the worker, not at its next start.
  Response request = http.Post("/breadcrumbs", R"({"title":"call echo","schema_name":"tool.request.v1",)"
                                               R"("context":{"tool":"echo","input":{"said":"hello"}}})",
                               peter);
  ASSERT_EQ(request.status, 201) << request.Describe();
  ASSERT_TRUE(answers.WaitForEvents(1, 30s)) << answers.Describe();
  json::object answer = answers.Events().front().Json().as_object();
  EXPECT_EQ(StatusOf(answer), "success") << JsonText(answer);
  EXPECT_EQ(StringAt(ContextOf(answer), "request_id"), StringAt(request.Json().as_object(), "id"));
}

// The number of tool.response.v1 events among `frames` answering each request_id.
std::map<std::string, int> AnswersByRequest(const std::vector<SseFrame>& frames) {
  std::map<std::string, int> answers;
  for (const SseFrame& frame : EventsOf(frames)) ++answers[StringAt(ContextOf(frame.Json().as_object()), "request_id")];
  return answers;
}

TEST_F(e2e_cluster, AThousandToolRequestsThroughThreeProcessesOnNatsAreAnsweredExactlyOnceAcrossAKillNine) {
  UseNats();
  ASSERT_FALSE(HasFatalFailure());
  constexpr int kTools = 8;  // spread over both workers' shards
  ToolCluster cluster = StartToolCluster(kTools);
  ServerProcess& worker = *cluster.worker;
  ServerProcess& api = *cluster.api;
  ServerProcess& standby = *cluster.standby;
  ToolClient& through_standby = *cluster.through_standby;
  ToolClient** clients = cluster.clients;
  auto tool = [](int i) { return "echo" + std::to_string(1 + i % kTools); };
  // Every answer, as the API process's bus (fed by NATS) sees it.
  SseClient answers(api.url() + "/events/stream?schema_name=tool.response.v1&since=0");
  answers.Start();
  ASSERT_TRUE(answers.WaitForOpen(10s)) << answers.Describe();

  constexpr int kRequests = 1000;
  std::set<std::string> requests;
  for (int i = 0; i < kRequests / 2; ++i) requests.insert(clients[i % 3]->Request(tool(i), json::object{{"i", i}}));
  ASSERT_TRUE(answers.WaitForEvents(kRequests / 4, 60s)) << answers.Describe();
  worker.Kill9();  // in the middle of the runs: the other worker takes over what it left
  for (int i = kRequests / 2; i < kRequests; ++i) {
    requests.insert(clients[1 + i % 2]->Request(tool(i), json::object{{"i", i}}));
  }
  ASSERT_EQ(requests.size(), static_cast<size_t>(kRequests));
  ASSERT_TRUE(answers.WaitForEvents(kRequests, 120s)) << answers.Describe() << standby.LogTail();
  // Fences: anything a run would still write for the requests above is written before these are
  // answered (each tool's executor takes its triggers in seq order).
  std::vector<std::string> fences;
  for (int i = 0; i < kTools; ++i) fences.push_back(through_standby.Request(tool(i), json::object{{"fence", true}}));
  ASSERT_TRUE(answers.WaitFor(
      [&](const std::vector<SseFrame>& frames) {
        std::map<std::string, int> seen = AnswersByRequest(frames);
        return std::all_of(fences.begin(), fences.end(), [&](const std::string& f) { return seen.count(f) > 0; });
      },
      60s))
      << answers.Describe();
  std::map<std::string, int> answered = AnswersByRequest(answers.Frames());
  for (const std::string& id : requests) EXPECT_EQ(answered[id], 1) << id;
  EXPECT_EQ(answered.size(), requests.size() + fences.size()) << "answers to requests nobody made";
  EXPECT_NE(standby.LogTail(1 << 20).find("does the background work"), std::string::npos) << standby.LogTail();
  // The events came through the stream: the API process received them from NATS.
  HttpClient http(api.port());
  EXPECT_GE(MetricValue(http.Get("/metrics").body, "cairn_nats_feed_received_total"), kRequests);
}

TEST_F(e2e_cluster, EventsReachEveryProcessThroughNatsAcrossARestartOfNats) {
  UseNats();
  ASSERT_FALSE(HasFatalFailure());
  ServerProcess& a = Process("all");
  ServerProcess& b = Process("api");
  ServerProcess& c = Process("api");
  SseClient stream(c.url() + "/events/stream?tag=fan&since=0");
  stream.Start();
  ASSERT_TRUE(stream.WaitForOpen(10s)) << stream.Describe();
  std::vector<ServerProcess*> writers = {&a, &b, &c};
  std::set<std::string> written;
  WriteFan(writers, 0, 30, &written);
  ASSERT_TRUE(stream.WaitForEvents(30, 20s)) << stream.Describe();
  ASSERT_TRUE(nats_->Restart().ok()) << nats_->Log();
  WriteFan(writers, 30, 60, &written);  // while the processes reconnect
  ASSERT_TRUE(stream.WaitForEvents(60, 30s)) << stream.Describe() << nats_->Log();
  WriteFan(writers, 60, 90, &written);  // after: through the stream again
  ASSERT_TRUE(stream.WaitForEvents(90, 30s)) << stream.Describe();
  std::vector<int64_t> seqs = CheckFanStream(stream, written);
  // One process relayed; every process's bus received events from the stream.
  double relayed = 0;
  for (ServerProcess* process : writers) {
    std::string metrics = HttpClient(process->port()).Get("/metrics").body;
    relayed += MetricValue(metrics, "cairn_nats_relay_published_total");
    EXPECT_GT(MetricValue(metrics, "cairn_nats_feed_received_total"), 0) << metrics;
  }
  EXPECT_GE(relayed, 90);

  // A client moved to another process resumes where it was.
  ExpectResumesOn(b, stream, seqs, 44, 45, /*rest_count=*/false);
}

TEST_F(e2e_cluster, BadStoreAndRoleSettingsAreRefusedAtStart) {
  auto exit_of = [](std::vector<std::string> args) {
    ServerProcess process(std::move(args));
    EXPECT_FALSE(process.Start(20s));
    return std::make_pair(process.last_exit_code(), process.LogTail());
  };
  auto [mysql, mysql_log] = exit_of({"--store", "mysql://localhost/db"});
  EXPECT_EQ(mysql, 2);
  EXPECT_NE(mysql_log.find("store"), std::string::npos) << mysql_log;
  auto [keyless, keyless_log] = exit_of({"--store", uri_});
  EXPECT_EQ(keyless, 2);
  EXPECT_NE(keyless_log.find("master_key"), std::string::npos) << keyless_log;
  auto [role, role_log] = exit_of({"--role", "leader"});
  EXPECT_EQ(role, 2);
  EXPECT_NE(role_log.find("--role"), std::string::npos) << role_log;
  auto [work, work_log] = exit_of({"--work", "executors,gardening"});
  EXPECT_EQ(work, 2);
  EXPECT_NE(work_log.find("work"), std::string::npos) << work_log;
  auto [unreachable, unreachable_log] =
      exit_of({"--store", "postgresql:///nowhere?host=/nonexistent&port=1", "--master-key", kMasterKey});
  EXPECT_NE(unreachable, 0);
  EXPECT_NE(unreachable_log.find("PostgreSQL"), std::string::npos) << unreachable_log;
  // A NATS bus joins processes sharing a PostgreSQL store; other buses are unknown.
  auto [lonely, lonely_log] = exit_of({"--bus", "nats://127.0.0.1:4222"});
  EXPECT_EQ(lonely, 2);
  EXPECT_NE(lonely_log.find("bus"), std::string::npos) << lonely_log;
  auto [kafka, kafka_log] = exit_of({"--store", uri_, "--master-key", kMasterKey, "--bus", "kafka://broker:9092"});
  EXPECT_EQ(kafka, 2);
  EXPECT_NE(kafka_log.find("bus"), std::string::npos) << kafka_log;
  auto [stream, stream_log] =
      exit_of({"--store", uri_, "--master-key", kMasterKey, "--bus", "nats://127.0.0.1:4222", "--nats-stream", "a.b"});
  EXPECT_EQ(stream, 2);
  EXPECT_NE(stream_log.find("nats_stream"), std::string::npos) << stream_log;
  auto [no_nats, no_nats_log] = exit_of({"--store", uri_, "--master-key", kMasterKey, "--bus", "nats://127.0.0.1:1"});
  EXPECT_NE(no_nats, 0);
  EXPECT_NE(no_nats_log.find("NATS"), std::string::npos) << no_nats_log;
}

}  // namespace
}  // namespace cairn::e2e
