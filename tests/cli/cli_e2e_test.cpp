// End-to-end tests of the client subcommands: a real `cairn serve`, and `cairn put/get/list/
// update/history/rm` run as separate processes against it, checking their output, their exit
// codes and that errors carry the server's own message.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <csignal>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

#include "cli/curl_http_client.h"
#include "server_process.h"
#include "support/subprocess.h"

namespace cairn::cli_e2e {
namespace {

namespace json = boost::json;
using e2e::CairnBinary;  // the build's cairn, or $CAIRN_E2E_BINARY: the client under test
using e2e::ServerProcess;
using test_support::ProcessOptions;
using test_support::ProcessResult;
using test_support::RunProcess;
using test_support::Subprocess;

// Output as test failure context.
std::string Show(const ProcessResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\n--- stdout ---\n" + r.out + "\n--- stderr ---\n" + r.err;
}

json::value ParseOut(const ProcessResult& r) {
  boost::system::error_code ec;
  json::value value = json::parse(r.out, ec);
  EXPECT_FALSE(ec) << "stdout is not JSON: " << Show(r);
  return value;
}

class CliE2eTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new ServerProcess({"--builtin-tools=true"});
    if (!server_->Start()) {
      start_error_ = server_->error();
    }
  }
  static void TearDownTestSuite() {
    if (server_ != nullptr) {
      EXPECT_EQ(server_->Stop(), 0) << server_->LogTail();
    }
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override { ASSERT_TRUE(start_error_.empty()) << start_error_; }

  // Runs `cairn <args...> --server <url>`; CAIRN_SERVER is removed so only --server counts.
  static ProcessResult Cairn(std::vector<std::string> args, const std::string& stdin_text = "") {
    args.insert(args.begin(), CairnBinary());
    args.push_back("--server");
    args.push_back(server_->url());
    ProcessOptions options;
    options.stdin_text = stdin_text;
    options.unset_env = {"CAIRN_SERVER"};
    return RunProcess(args, options);
  }

  // The server's own error message for a request, fetched directly (not through the CLI).
  static std::string ServerErrorMessage(const std::string& method, const std::string& path,
                                        std::vector<std::pair<std::string, std::string>> headers = {},
                                        std::optional<std::string> body = std::nullopt) {
    cli::CurlHttpClient http;
    cli::HttpRequest request{method, server_->url() + path, std::move(headers), std::move(body)};
    auto reply = http.Send(request);
    EXPECT_TRUE(reply.ok()) << reply.status().ToString();
    if (!reply.ok()) return "<no reply>";
    const json::value error = json::parse(reply->body);
    return std::string(error.at("error").at("message").as_string());
  }

  // Creates a breadcrumb through the CLI and returns its id.
  static std::string Put(std::vector<std::string> args) {
    args.insert(args.begin(), "put");
    args.push_back("--compact");
    const ProcessResult r = Cairn(args);
    EXPECT_EQ(r.exit_code, 0) << Show(r);
    if (r.exit_code != 0) return "";
    return std::string(ParseOut(r).at("id").as_string());
  }

  // Starts `cairn tail <args...> --server <url>` running on.
  static std::unique_ptr<Subprocess> StartTail(std::vector<std::string> args) {
    args.insert(args.begin(), {CairnBinary(), "tail"});
    args.push_back("--server");
    args.push_back(server_->url());
    ProcessOptions options;
    options.unset_env = {"CAIRN_SERVER"};
    auto tail = std::make_unique<Subprocess>(args, options);
    tail->Start();  // a failure shows as !running(), the reason in err()
    return tail;
  }

  static inline ServerProcess* server_ = nullptr;
  static inline std::string start_error_;
};

TEST_F(CliE2eTest, FullLifecycle) {
  // put: context from stdin, every common field.
  ProcessResult put = Cairn({"put", "--title", "Buy milk", "--schema", "note.v1", "--tag", "life", "--tag", "todo",
                             "--context", "-", "--path", "e2e/lifecycle/1", "--actor", "tester"},
                            R"({"qty": 2, "kind": "oat"})");
  ASSERT_EQ(put.exit_code, 0) << Show(put);
  EXPECT_EQ(put.err, "");
  EXPECT_NE(put.out.find("\n  \"id\": "), std::string::npos) << "pretty-printed by default: " << put.out;
  const json::value created = ParseOut(put);
  const std::string id(created.at("id").as_string());
  EXPECT_EQ(created.at("version"), json::value(1));
  EXPECT_EQ(created.at("title"), json::value("Buy milk"));
  EXPECT_EQ(created.at("schema_name"), json::value("note.v1"));
  EXPECT_EQ(created.at("context"), json::parse(R"({"qty":2,"kind":"oat"})"));
  EXPECT_EQ(created.at("created_by"), json::value("tester"));
  EXPECT_EQ(created.at("path"), json::value("e2e/lifecycle/1"));

  // get: the context view; --full: the whole record; --compact: one line.
  ProcessResult get = Cairn({"get", id, "--compact"});
  ASSERT_EQ(get.exit_code, 0) << Show(get);
  EXPECT_EQ(std::count(get.out.begin(), get.out.end(), '\n'), 1) << get.out;
  EXPECT_EQ(ParseOut(get).at("context"), created.at("context"));
  ProcessResult full = Cairn({"get", id, "--full"});
  ASSERT_EQ(full.exit_code, 0) << Show(full);
  EXPECT_EQ(ParseOut(full).at("checksum"), created.at("checksum"));

  // list: the table shows the row; --json the API's items.
  ProcessResult table = Cairn({"list", "--tag", "life"});
  ASSERT_EQ(table.exit_code, 0) << Show(table);
  EXPECT_TRUE(table.out.starts_with("ID ")) << table.out;
  EXPECT_NE(table.out.find("VERSION  SCHEMA   TITLE     TAGS       UPDATED_AT"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find(id + "        1  note.v1  Buy milk  life,todo  "), std::string::npos) << table.out;
  ProcessResult listed = Cairn({"list", "--tag", "life", "--schema", "note.v1", "--path-prefix", "e2e/lifecycle",
                                "--match", R"({"path":"$.qty","op":"gte","value":2})", "--json"});
  ASSERT_EQ(listed.exit_code, 0) << Show(listed);
  const json::value listed_json = ParseOut(listed);
  const json::array& items = listed_json.at("items").as_array();
  ASSERT_EQ(items.size(), 1u) << listed.out;
  EXPECT_EQ(items[0].at("id"), created.at("id"));

  // update with the right If-Match: version 2.
  ProcessResult update = Cairn({"update", id, "--title", "Buy oat milk", "--if-match", "1", "--actor", "editor",
                                "--context", R"({"qty": 3})"});
  ASSERT_EQ(update.exit_code, 0) << Show(update);
  const json::value updated = ParseOut(update);
  EXPECT_EQ(updated.at("version"), json::value(2));
  EXPECT_EQ(updated.at("title"), json::value("Buy oat milk"));
  EXPECT_EQ(updated.at("updated_by"), json::value("editor"));

  // history: both versions, oldest first.
  ProcessResult history = Cairn({"history", id});
  ASSERT_EQ(history.exit_code, 0) << Show(history);
  const json::value history_json = ParseOut(history);
  const json::array& versions = history_json.at("versions").as_array();
  ASSERT_EQ(versions.size(), 2u) << history.out;
  EXPECT_EQ(versions[0].at("context"), json::parse(R"({"qty":2,"kind":"oat"})"));
  EXPECT_EQ(versions[1].at("context"), json::parse(R"({"qty":3})"));

  // rm with the right If-Match, then it is gone.
  ProcessResult rm = Cairn({"rm", id, "--if-match", "2"});
  ASSERT_EQ(rm.exit_code, 0) << Show(rm);
  EXPECT_EQ(rm.out, "deleted " + id + "\n");
  ProcessResult gone = Cairn({"get", id});
  EXPECT_EQ(gone.exit_code, 1) << Show(gone);
  EXPECT_EQ(gone.out, "");
  EXPECT_NE(gone.err.find("HTTP 404 not_found"), std::string::npos) << gone.err;
}

TEST_F(CliE2eTest, UnknownIdGivesTheServersMessage) {
  const std::string id = "no-such-id/with?odd#chars";
  const std::string expected = ServerErrorMessage("GET", "/breadcrumbs/no-such-id%2Fwith%3Fodd%23chars");
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"get", id}, {"get", id, "--full"}, {"history", id}, {"update", id, "--title", "x"}, {"rm", id}}) {
    ProcessResult r = Cairn(args);
    EXPECT_EQ(r.exit_code, 1) << Show(r);
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find("HTTP 404 not_found"), std::string::npos) << args[0] << ": " << r.err;
    if (args[0] == "get" && args.size() == 2) {
      EXPECT_EQ(r.err, "cairn get: " + expected + " (HTTP 404 not_found)\n");
    }
  }
}

TEST_F(CliE2eTest, StaleIfMatchIs412WithTheServersMessage) {
  const std::string id = Put({"--title", "versioned", "--tag", "e2e-412"});
  ASSERT_FALSE(id.empty());
  const std::string expected =
      ServerErrorMessage("PATCH", "/breadcrumbs/" + id, {{"If-Match", "7"}},
                         R"({"title":"nope"})");

  ProcessResult update = Cairn({"update", id, "--title", "nope", "--if-match", "7"});
  EXPECT_EQ(update.exit_code, 1) << Show(update);
  EXPECT_EQ(update.err, "cairn update: " + expected + " (HTTP 412 precondition_failed)\n");
  ProcessResult rm = Cairn({"rm", id, "--if-match", "7"});
  EXPECT_EQ(rm.exit_code, 1) << Show(rm);
  EXPECT_NE(rm.err.find("(HTTP 412 precondition_failed)"), std::string::npos) << rm.err;

  // Nothing changed.
  ProcessResult get = Cairn({"get", id, "--full"});
  ASSERT_EQ(get.exit_code, 0) << Show(get);
  EXPECT_EQ(ParseOut(get).at("version"), json::value(1));
  EXPECT_EQ(ParseOut(get).at("title"), json::value("versioned"));
}

TEST_F(CliE2eTest, ValidationErrorNamesTheField) {
  ProcessResult r = Cairn({"put", "--title", "t", "--visibility", "everyone"});
  EXPECT_EQ(r.exit_code, 1) << Show(r);
  EXPECT_TRUE(r.err.starts_with("cairn put: visibility")) << r.err;
  EXPECT_NE(r.err.find("(HTTP 422 validation_failed"), std::string::npos) << r.err;
}

TEST_F(CliE2eTest, ListAllFollowsEveryPage) {
  std::set<std::string> ids;
  for (int i = 0; i < 5; ++i) ids.insert(Put({"--title", "page item " + std::to_string(i), "--tag", "e2e-pages"}));
  ASSERT_EQ(ids.size(), 5u);

  ProcessResult one_page = Cairn({"list", "--tag", "e2e-pages", "--limit", "2"});
  ASSERT_EQ(one_page.exit_code, 0) << Show(one_page);
  EXPECT_EQ(std::count(one_page.out.begin(), one_page.out.end(), '\n'), 3) << one_page.out;  // header + 2
  EXPECT_NE(one_page.err.find("--cursor"), std::string::npos) << one_page.err;

  ProcessResult all = Cairn({"list", "--tag", "e2e-pages", "--limit", "2", "--all", "--json", "--order", "asc"});
  ASSERT_EQ(all.exit_code, 0) << Show(all);
  const json::value listed = ParseOut(all);
  EXPECT_TRUE(listed.at("next_cursor").is_null());
  std::set<std::string> seen;
  std::string previous;
  for (const auto& item : listed.at("items").as_array()) {
    const std::string id(item.at("id").as_string());
    EXPECT_LT(previous, id) << "ascending, time-ordered ids";
    previous = id;
    seen.insert(id);
  }
  EXPECT_EQ(seen, ids);

  ProcessResult table = Cairn({"list", "--tag", "e2e-pages", "--limit", "2", "--all"});
  ASSERT_EQ(table.exit_code, 0) << Show(table);
  EXPECT_EQ(std::count(table.out.begin(), table.out.end(), '\n'), 6) << table.out;  // header + 5
  EXPECT_EQ(table.err, "");
}

TEST_F(CliE2eTest, SearchFindsByTextAndReportsBadOptions) {
  const std::string id = Put({"--title", "cli search capybara", "--tag", "e2e-search"});
  Put({"--title", "unrelated", "--tag", "e2e-search"});
  ProcessResult json_out = Cairn({"search", "capybara", "--mode", "text", "--json"});
  ASSERT_EQ(json_out.exit_code, 0) << Show(json_out);
  const json::value found = ParseOut(json_out);
  EXPECT_EQ(found.at("mode"), "text");
  ASSERT_EQ(found.at("items").as_array().size(), 1u) << json_out.out;
  EXPECT_EQ(found.at("items").at(0).at("id").as_string(), id);

  ProcessResult table = Cairn({"search", "cli", "capybara", "--mode", "text", "--tag", "e2e-search", "--limit", "5"});
  ASSERT_EQ(table.exit_code, 0) << Show(table);
  EXPECT_EQ(std::count(table.out.begin(), table.out.end(), '\n'), 2) << table.out;  // header + 1
  EXPECT_NE(table.out.find(id), std::string::npos) << table.out;

  ProcessResult none = Cairn({"search", "nothingmatchesthis", "--mode", "text"});
  EXPECT_EQ(none.exit_code, 0) << Show(none);
  EXPECT_EQ(none.out, "");

  ProcessResult bad_mode = Cairn({"search", "x", "--mode", "semantic"});
  EXPECT_EQ(bad_mode.exit_code, 2) << Show(bad_mode);
  ProcessResult bad_limit = Cairn({"search", "x", "--mode", "text", "--limit", "0"});
  EXPECT_EQ(bad_limit.exit_code, 1) << Show(bad_limit);
  EXPECT_NE(bad_limit.err.find("limit"), std::string::npos) << bad_limit.err;
}

TEST_F(CliE2eTest, IdempotencyKeyReturnsTheSameRecord) {
  ProcessResult first = Cairn({"put", "--title", "once", "--idempotency-key", "e2e-key-1", "--compact"});
  ProcessResult second = Cairn({"put", "--title", "once", "--idempotency-key", "e2e-key-1", "--compact"});
  ASSERT_EQ(first.exit_code, 0) << Show(first);
  ASSERT_EQ(second.exit_code, 0) << Show(second);
  EXPECT_EQ(ParseOut(first).at("id"), ParseOut(second).at("id"));
  EXPECT_NE(second.err.find("Idempotency-Key was used before"), std::string::npos) << second.err;
}

TEST_F(CliE2eTest, ContextFileAndServerFromEnvironment) {
  const std::string file = server_->root_dir() + "/context.json";
  std::ofstream(file) << R"({"from": "file", "n": [1, 2.5]})";
  ProcessOptions options;
  options.set_env = {"CAIRN_SERVER=" + server_->url()};
  ProcessResult put = RunProcess({CairnBinary(), "put", "--title", "from a file", "--context-file", file}, options);
  ASSERT_EQ(put.exit_code, 0) << Show(put);
  EXPECT_EQ(ParseOut(put).at("context"), json::parse(R"({"from":"file","n":[1,2.5]})"));
  EXPECT_NE(put.out.find("2.5"), std::string::npos) << put.out;
}

TEST_F(CliE2eTest, UsageErrorsExitTwoAndSendNothing) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"get"}, {"put", "--tag", "x"}, {"list", "--bogus"}, {"put", "--title", "t", "--context", "{oops"},
           {"update", "some-id"}, {"list", "--order", "sideways"}}) {
    ProcessResult r = Cairn(args);
    EXPECT_EQ(r.exit_code, 2) << Show(r);
    EXPECT_NE(r.err.find("usage: cairn " + args[0]), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
  ProcessResult help = Cairn({"list", "--help"});
  EXPECT_EQ(help.exit_code, 0) << Show(help);
  EXPECT_TRUE(help.out.starts_with("usage: cairn list")) << help.out;
}

// Its own server, stopped before the client runs: the error names the URL.
TEST(CliE2eServerDownTest, ConnectionFailureNamesTheServer) {
  ServerProcess server;
  ASSERT_TRUE(server.Start()) << server.error();
  const std::string url = server.url();
  EXPECT_EQ(server.Stop(), 0) << server.LogTail();

  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"get", "x"}, {"list"}, {"put", "--title", "t"}, {"rm", "x"}}) {
    std::vector<std::string> argv = {CairnBinary()};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--server", url});
    ProcessResult r = RunProcess(argv);
    EXPECT_EQ(r.exit_code, 1) << Show(r);
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find("cannot reach the cairn server at " + url), std::string::npos) << r.err;
  }
}

// `cairn tail` output: one compact JSON event per line.
std::vector<json::value> Events(const std::string& out) {
  std::vector<json::value> events;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    boost::system::error_code ec;
    events.push_back(json::parse(line, ec));
    EXPECT_FALSE(ec) << "not a JSON line: " << line;
  }
  return events;
}

constexpr std::chrono::seconds kTailWait{30};
constexpr const char* kTailConnected = "cairn tail: connected to ";

TEST_F(CliE2eTest, TailPrintsMatchingEventsAsTheyHappen) {
  auto tail = StartTail({"--max-events", "2", "--schema", "x.v1"});
  ASSERT_TRUE(tail->running()) << tail->err();
  // Once connected, every later write reaches the stream: no sleeping, no race.
  ASSERT_TRUE(tail->WaitForErr(kTailConnected, kTailWait)) << tail->Finish(std::chrono::seconds(5)).err;
  EXPECT_EQ(tail->out(), "");

  const std::string first = Put({"--title", "tail one", "--schema", "x.v1", "--tag", "tail-e2e"});
  const std::string other = Put({"--title", "tail other", "--schema", "y.v1", "--tag", "tail-e2e"});
  const std::string second = Put({"--title", "tail two", "--schema", "x.v1", "--tag", "tail-e2e"});

  const ProcessResult r = tail->Finish(kTailWait);
  ASSERT_EQ(r.exit_code, 0) << Show(r);
  const auto events = Events(r.out);
  ASSERT_EQ(events.size(), 2u) << Show(r);
  EXPECT_EQ(events[0].at("type"), json::value("breadcrumb.created"));
  EXPECT_EQ(events[0].at("breadcrumb_id"), json::value(first));
  EXPECT_EQ(events[0].at("title"), json::value("tail one"));
  EXPECT_EQ(events[0].at("schema_name"), json::value("x.v1"));
  EXPECT_EQ(events[1].at("breadcrumb_id"), json::value(second));
  EXPECT_LT(events[0].at("seq").as_int64(), events[1].at("seq").as_int64());
  EXPECT_NE(other, "");
}

TEST_F(CliE2eTest, TailSinceReplaysExactlyTheFollowingEvents) {
  // A schema of its own, so that the replay from seq 0 finds our marker first.
  const std::string marker = Put({"--title", "marker", "--schema", "tail-resume.v1"});
  ProcessResult found = Cairn({"tail", "--since", "0", "--schema", "tail-resume.v1", "--max-events", "1"});
  ASSERT_EQ(found.exit_code, 0) << Show(found);
  const auto marker_events = Events(found.out);
  ASSERT_EQ(marker_events.size(), 1u) << Show(found);
  ASSERT_EQ(marker_events[0].at("breadcrumb_id"), json::value(marker));
  const int64_t marker_seq = marker_events[0].at("seq").as_int64();

  const std::string a = Put({"--title", "after a", "--schema", "tail-resume.v1"});
  Put({"--title", "elsewhere", "--schema", "tail-elsewhere.v1"});
  ProcessResult update = Cairn({"update", a, "--title", "after a, renamed"});
  ASSERT_EQ(update.exit_code, 0) << Show(update);
  const std::string b = Put({"--title", "after b", "--schema", "tail-resume.v1"});

  ProcessResult r = Cairn({"tail", "--since", std::to_string(marker_seq), "--schema", "tail-resume.v1",
                           "--max-events", "3"});
  ASSERT_EQ(r.exit_code, 0) << Show(r);
  const auto events = Events(r.out);
  ASSERT_EQ(events.size(), 3u) << Show(r);
  EXPECT_EQ(events[0].at("breadcrumb_id"), json::value(a));
  EXPECT_EQ(events[0].at("type"), json::value("breadcrumb.created"));
  EXPECT_EQ(events[1].at("breadcrumb_id"), json::value(a));
  EXPECT_EQ(events[1].at("type"), json::value("breadcrumb.updated"));
  EXPECT_EQ(events[1].at("title"), json::value("after a, renamed"));
  EXPECT_EQ(events[2].at("breadcrumb_id"), json::value(b));
  EXPECT_GT(events[0].at("seq").as_int64(), marker_seq);
  EXPECT_LT(events[0].at("seq").as_int64(), events[1].at("seq").as_int64());
  EXPECT_LT(events[1].at("seq").as_int64(), events[2].at("seq").as_int64());

  // --pretty: the same events, one readable line each.
  ProcessResult pretty = Cairn({"tail", "--since", std::to_string(marker_seq), "--schema", "tail-resume.v1",
                                "--max-events", "1", "--pretty"});
  ASSERT_EQ(pretty.exit_code, 0) << Show(pretty);
  EXPECT_EQ(pretty.out.rfind(std::to_string(events[0].at("seq").as_int64()) + "  ", 0), 0u) << pretty.out;
  EXPECT_NE(pretty.out.find("  created  tail-resume.v1  \"after a\"  " + a + " v1  []\n"), std::string::npos)
      << pretty.out;
}

TEST_F(CliE2eTest, TailEndsWithExitZeroOnSigint) {
  for (int signal : {SIGINT, SIGTERM}) {
    auto tail = StartTail({"--types", "deleted"});
    ASSERT_TRUE(tail->WaitForErr(kTailConnected, kTailWait)) << tail->Finish(std::chrono::seconds(5)).err;
    tail->Kill(signal);
    const ProcessResult r = tail->Finish(kTailWait);
    EXPECT_EQ(r.exit_code, 0) << "signal " << signal << ": " << Show(r);
    EXPECT_EQ(r.out, "");
  }
}

TEST_F(CliE2eTest, TailHttpErrorIsFatalWithTheServersMessage) {
  const std::string message = ServerErrorMessage("GET", "/events/stream?types=bogus");
  ProcessResult r = Cairn({"tail", "--types", "bogus"});
  EXPECT_EQ(r.exit_code, 1) << Show(r);
  EXPECT_NE(r.err.find("cairn tail: " + message), std::string::npos) << Show(r);
  EXPECT_EQ(r.out, "");

  ProcessResult ahead = Cairn({"tail", "--since", "999999999"});
  EXPECT_EQ(ahead.exit_code, 1) << Show(ahead);
  EXPECT_NE(ahead.err.find("is ahead of the newest event"), std::string::npos) << Show(ahead);
}

TEST_F(CliE2eTest, ToolsListsTheBuiltinsWithTheirInputSchemas) {
  ProcessResult r = Cairn({"tools"});
  ASSERT_EQ(r.exit_code, 0) << Show(r);
  for (const char* name : {"echo (builtin)", "sleep (builtin)", "http_request (builtin)", "breadcrumb_create (builtin)",
                           "breadcrumb_get (builtin)", "breadcrumb_query (builtin)", "breadcrumb_update (builtin)",
                           "wait_for (builtin)", "search (builtin)"}) {
    EXPECT_NE(r.out.find(name), std::string::npos) << name << "\n" << Show(r);
  }
  EXPECT_NE(r.out.find(R"("required":["ms"])"), std::string::npos) << Show(r);
  ProcessResult as_json = Cairn({"tools", "--json", "--compact"});
  ASSERT_EQ(as_json.exit_code, 0) << Show(as_json);
  EXPECT_EQ(ParseOut(as_json).as_array().size(), 9u);
}

TEST_F(CliE2eTest, CallPrintsTheOutputAndFailsOnAnErrorResponse) {
  ProcessResult echoed = Cairn({"call", "echo", "--input", R"({"n":[1,2]})", "--compact"});
  ASSERT_EQ(echoed.exit_code, 0) << Show(echoed);
  EXPECT_EQ(ParseOut(echoed), json::parse(R"({"n":[1,2]})"));

  ProcessResult invalid = Cairn({"call", "sleep", "--input", R"({"ms":"soon"})"});
  EXPECT_EQ(invalid.exit_code, 1) << Show(invalid);
  EXPECT_NE(invalid.err.find("invalid_input: input.ms: must be an integer"), std::string::npos) << Show(invalid);

  ProcessResult unknown = Cairn({"call", "no_such_tool"});
  EXPECT_EQ(unknown.exit_code, 1) << Show(unknown);
  EXPECT_NE(unknown.err.find("unknown_tool"), std::string::npos) << Show(unknown);

  ProcessResult slow = Cairn({"call", "sleep", "--input", R"({"ms":5000})", "--wait", "1"});
  EXPECT_EQ(slow.exit_code, 1) << Show(slow);
  EXPECT_NE(slow.err.find("no response from sleep within 1 s"), std::string::npos) << Show(slow);

  // A response larger than the stream's context limit (64 KiB) is read from the store.
  const std::string big(70 * 1024, 'x');
  ProcessResult large = Cairn({"call", "echo", "--input", json::serialize(json::object{{"text", big}}), "--compact"});
  ASSERT_EQ(large.exit_code, 0) << Show(large).substr(0, 2000);
  EXPECT_EQ(ParseOut(large).at("text").as_string(), big);

  EXPECT_EQ(Cairn({"call", "echo", "--input", "{nope"}).exit_code, 2);
  EXPECT_EQ(Cairn({"call", "echo", "--wait", "0"}).exit_code, 2);
  EXPECT_EQ(Cairn({"call"}).exit_code, 2);
}

TEST_F(CliE2eTest, RunStartsAWorkflowAndWithWaitPrintsItsOutputOrFails) {
  json::object definition{{"name", "cli_chain"},
                          {"input_schema", json::parse(R"({"type": "object", "required": ["n"]})")},
                          {"steps", json::parse(R"([{"id": "a", "tool": "echo", "input": {"v": "${{ input.n + 1 }}"}},
                                                   {"id": "b", "tool": "echo", "needs": ["a"],
                                                    "input": {"w": "${{ steps.a.output.v * 10 }}"}}])")},
                          {"output", "${{ steps.b.output.w }}"}};
  ProcessResult defined = Cairn({"put", "--title", "cli_chain", "--schema", "workflow.def.v1", "--context", "-"},
                                json::serialize(definition));
  ASSERT_EQ(defined.exit_code, 0) << Show(defined);

  ProcessResult waited = Cairn({"run", "cli_chain", "--input", R"({"n": 4})", "--wait", "--compact"});
  ASSERT_EQ(waited.exit_code, 0) << Show(waited);
  EXPECT_EQ(ParseOut(waited), json::value(50));

  ProcessResult started = Cairn({"run", "cli_chain", "--input", R"({"n": 1})", "--compact"});
  ASSERT_EQ(started.exit_code, 0) << Show(started);
  EXPECT_EQ(ParseOut(started).at("execution_id").as_string().size(), 32u) << Show(started);

  ProcessResult bad_input = Cairn({"run", "cli_chain", "--input", R"({"m": 1})", "--wait"});
  EXPECT_EQ(bad_input.exit_code, 1) << Show(bad_input);
  EXPECT_NE(bad_input.err.find("input.n"), std::string::npos) << Show(bad_input);
  EXPECT_EQ(Cairn({"run", "no_such_workflow"}).exit_code, 1);
  EXPECT_EQ(Cairn({"run", "cli_chain", "--input", "{nope"}).exit_code, 2);
  EXPECT_EQ(Cairn({"run", "cli_chain", "--wait", "--wait-seconds", "0"}).exit_code, 2);
  EXPECT_EQ(Cairn({"run"}).exit_code, 2);
}

}  // namespace
}  // namespace cairn::cli_e2e
