// The subcommands end to end against a scripted HttpClient: requests built, output printed,
// exit codes, and the error contract, without a server.
#include "cli/client_commands.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <deque>
#include <map>
#include <sstream>

#include "base/time_format.h"
#include "cli/client_context.h"

namespace cairn::cli {
namespace {

namespace json = boost::json;

class FakeHttp final : public HttpClient {
 public:
  FakeHttp(std::vector<HttpRequest>* log, std::deque<Result<HttpReply>>* script) : log_(log), script_(script) {}
  Result<HttpReply> Send(const HttpRequest& request) override {
    log_->push_back(request);
    if (script_->empty()) return Status::Internal("unscripted request " + request.method + " " + request.url);
    auto reply = std::move(script_->front());
    script_->pop_front();
    return reply;
  }

 private:
  std::vector<HttpRequest>* log_;
  std::deque<Result<HttpReply>>* script_;
};

HttpReply Reply(int status, std::string body, std::vector<std::pair<std::string, std::string>> headers = {}) {
  HttpReply reply;
  reply.status = status;
  reply.body = std::move(body);
  reply.headers = std::move(headers);
  return reply;
}

std::string Header(const HttpRequest& request, const std::string& name) {
  for (const auto& [key, value] : request.headers) {
    if (key == name) return value;
  }
  return "<absent>";
}

class ClientCommandsTest : public ::testing::Test {
 protected:
  int Run(std::string_view command, std::vector<std::string> args, const std::string& stdin_text = "") {
    in_.str(stdin_text);
    out_.str("");
    err_.str("");
    ClientContext context{
        in_,
        out_,
        err_,
        [this](const char* name) -> const char* {
          auto it = env_.find(name);
          return it == env_.end() ? nullptr : it->second.c_str();
        },
        [this](const CurlOptions& options) -> std::unique_ptr<HttpClient> {
          curl_options_ = options;
          return std::make_unique<FakeHttp>(&requests_, &script_);
        },
        [] { return *ParseRfc3339Micros("2030-01-01T00:00:00Z"); },
    };
    return RunClientCommandIn(command, args, context);
  }

  std::istringstream in_;
  std::ostringstream out_;
  std::ostringstream err_;
  std::map<std::string, std::string> env_;
  std::vector<HttpRequest> requests_;
  std::deque<Result<HttpReply>> script_;
  CurlOptions curl_options_;
};

TEST_F(ClientCommandsTest, IsClientCommand) {
  for (const char* name : {"put", "get", "list", "update", "rm", "history", "tail", "tools", "call"}) EXPECT_TRUE(IsClientCommand(name));
  for (const char* name : {"serve", "", "PUT", "delete"}) EXPECT_FALSE(IsClientCommand(name));
}

TEST_F(ClientCommandsTest, PutPostsBodyWithHeadersAndPrintsRecord) {
  script_.push_back(Reply(201, R"({"id":"b1","version":1,"title":"Buy milk"})"));
  const int code = Run("put", {"--title", "Buy milk", "--tag", "todo", "--context", "-", "--idempotency-key", "k1",
                               "--actor", "me", "--server", "http://srv:9/"},
                       R"({"qty": 2})");
  EXPECT_EQ(code, 0) << err_.str();
  ASSERT_EQ(requests_.size(), 1u);
  const HttpRequest& request = requests_[0];
  EXPECT_EQ(request.method, "POST");
  EXPECT_EQ(request.url, "http://srv:9/breadcrumbs");
  EXPECT_EQ(Header(request, "Idempotency-Key"), "k1");
  EXPECT_EQ(Header(request, "X-Cairn-Actor"), "me");
  ASSERT_TRUE(request.body.has_value());
  EXPECT_EQ(json::parse(*request.body), json::parse(R"({"title":"Buy milk","tags":["todo"],"context":{"qty":2}})"));
  EXPECT_EQ(out_.str(), "{\n  \"id\": \"b1\",\n  \"version\": 1,\n  \"title\": \"Buy milk\"\n}\n");
  EXPECT_EQ(err_.str(), "");
}

TEST_F(ClientCommandsTest, PutNotesIdempotentReplay) {
  script_.push_back(Reply(200, R"({"id":"b1"})", {{"idempotent-replayed", "true"}}));
  EXPECT_EQ(Run("put", {"--title", "t", "--idempotency-key", "k", "--compact"}), 0);
  EXPECT_EQ(out_.str(), "{\"id\":\"b1\"}\n");
  EXPECT_NE(err_.str().find("Idempotency-Key was used before"), std::string::npos);
}

TEST_F(ClientCommandsTest, ServerComesFromEnvironmentThenDefault) {
  script_.push_back(Reply(200, "{}"));
  script_.push_back(Reply(200, "{}"));
  EXPECT_EQ(Run("get", {"x"}), 0);
  env_["CAIRN_SERVER"] = "other:7000";
  EXPECT_EQ(Run("get", {"x"}), 0);
  ASSERT_EQ(requests_.size(), 2u);
  EXPECT_EQ(requests_[0].url, "http://127.0.0.1:8081/breadcrumbs/x");
  EXPECT_EQ(requests_[1].url, "http://other:7000/breadcrumbs/x");
  EXPECT_EQ(Header(requests_[0], "X-Cairn-Actor"), "<absent>");
}

TEST_F(ClientCommandsTest, GetEncodesIdAndSelectsView) {
  script_.push_back(Reply(200, R"({"id":"a/b c"})"));
  script_.push_back(Reply(200, R"({"id":"x"})"));
  script_.push_back(Reply(200, R"({"id":"x","versions":[]})"));
  EXPECT_EQ(Run("get", {"a/b c"}), 0);
  EXPECT_EQ(Run("get", {"x", "--full"}), 0);
  EXPECT_EQ(Run("history", {"x"}), 0);
  ASSERT_EQ(requests_.size(), 3u);
  EXPECT_EQ(requests_[0].url, "http://127.0.0.1:8081/breadcrumbs/a%2Fb%20c");
  EXPECT_EQ(requests_[1].url, "http://127.0.0.1:8081/breadcrumbs/x/full");
  EXPECT_EQ(requests_[2].url, "http://127.0.0.1:8081/breadcrumbs/x/history");
  EXPECT_FALSE(requests_[0].body.has_value());
}

TEST_F(ClientCommandsTest, HttpErrorPrintsServerMessageAndCode) {
  script_.push_back(
      Reply(404, R"({"error":{"code":"not_found","message":"no breadcrumb with id 'nope'"}})"));
  EXPECT_EQ(Run("get", {"nope"}), 1);
  EXPECT_EQ(out_.str(), "");
  EXPECT_EQ(err_.str(), "cairn get: no breadcrumb with id 'nope' (HTTP 404 not_found)\n");
}

TEST_F(ClientCommandsTest, ValidationErrorNamesField) {
  script_.push_back(Reply(
      422, R"({"error":{"code":"validation_failed","message":"tags[0]: must not be empty","field":"tags[0]"}})"));
  EXPECT_EQ(Run("put", {"--title", "t", "--tag", ""}), 1);
  EXPECT_EQ(err_.str(), "cairn put: tags[0]: must not be empty (HTTP 422 validation_failed)\n");

  script_.push_back(Reply(422, R"({"error":{"code":"validation_failed","message":"too long","field":"title"}})"));
  EXPECT_EQ(Run("put", {"--title", "t"}), 1);
  EXPECT_EQ(err_.str(), "cairn put: too long (HTTP 422 validation_failed, field title)\n");
}

TEST_F(ClientCommandsTest, NonJsonErrorShowsStatusAndExcerpt) {
  script_.push_back(Reply(502, "<html>Bad Gateway</html>"));
  EXPECT_EQ(Run("get", {"x"}), 1);
  EXPECT_EQ(err_.str(),
            "cairn get: GET http://127.0.0.1:8081/breadcrumbs/x returned HTTP 502: <html>Bad Gateway</html>\n");
}

TEST_F(ClientCommandsTest, ConnectionFailureNamesServer) {
  script_.push_back(Status::Unavailable("GET http://127.0.0.1:1/breadcrumbs/x failed: Connection refused"));
  EXPECT_EQ(Run("get", {"x", "--server", "http://127.0.0.1:1"}), 1);
  EXPECT_NE(err_.str().find("cannot reach the cairn server at http://127.0.0.1:1"), std::string::npos) << err_.str();
  EXPECT_NE(err_.str().find("Connection refused"), std::string::npos) << err_.str();
}

TEST_F(ClientCommandsTest, UpdateSendsPatchWithIfMatch) {
  script_.push_back(Reply(200, R"({"id":"x","version":3})"));
  EXPECT_EQ(Run("update", {"x", "--title", "new", "--if-match", "\"2\"", "--clear", "path"}), 0) << err_.str();
  ASSERT_EQ(requests_.size(), 1u);
  EXPECT_EQ(requests_[0].method, "PATCH");
  EXPECT_EQ(requests_[0].url, "http://127.0.0.1:8081/breadcrumbs/x");
  EXPECT_EQ(Header(requests_[0], "If-Match"), "2");
  EXPECT_EQ(json::parse(*requests_[0].body), json::parse(R"({"title":"new","path":null})"));
}

TEST_F(ClientCommandsTest, PreconditionFailedIsExitOne) {
  script_.push_back(Reply(412, R"({"error":{"code":"precondition_failed","message":"version is 3, not 2"}})"));
  EXPECT_EQ(Run("update", {"x", "--title", "t", "--if-match", "2"}), 1);
  EXPECT_EQ(err_.str(), "cairn update: version is 3, not 2 (HTTP 412 precondition_failed)\n");
}

TEST_F(ClientCommandsTest, RmDeletesEachIdAndReportsFailures) {
  script_.push_back(Reply(204, ""));
  script_.push_back(Reply(404, R"({"error":{"code":"not_found","message":"no breadcrumb b"}})"));
  script_.push_back(Reply(204, ""));
  EXPECT_EQ(Run("rm", {"a", "b", "c"}), 1);
  ASSERT_EQ(requests_.size(), 3u);
  EXPECT_EQ(requests_[1].method, "DELETE");
  EXPECT_EQ(requests_[1].url, "http://127.0.0.1:8081/breadcrumbs/b");
  EXPECT_EQ(out_.str(), "deleted a\ndeleted c\n");
  EXPECT_EQ(err_.str(), "cairn rm: no breadcrumb b (HTTP 404 not_found)\n");
}

TEST_F(ClientCommandsTest, RmIfMatch) {
  script_.push_back(Reply(204, ""));
  EXPECT_EQ(Run("rm", {"a", "--if-match", "4"}), 0);
  EXPECT_EQ(Header(requests_[0], "If-Match"), "4");
  EXPECT_EQ(Run("rm", {"a", "b", "--if-match", "4"}), 2);
  EXPECT_NE(err_.str().find("--if-match applies to a single ID"), std::string::npos);
}

TEST_F(ClientCommandsTest, ListBuildsQueryAndPrintsTable) {
  script_.push_back(Reply(200, R"({"items":[{"id":"i1","version":2,"schema_name":"note.v1","title":"Hello",
      "tags":["a","b"],"updated_at":"2030-01-01T00:00:00.000000Z"}],"next_cursor":"c2"})"));
  EXPECT_EQ(Run("list", {"--schema", "note.v1", "--tag", "a b", "--tag", "c", "--any-tag", "x", "--any-tag", "y",
                         "--path-prefix", "p/q", "--match", R"({"path":"$.n","op":"gt","value":1})", "--limit", "10",
                         "--order", "asc"}),
            0)
      << err_.str();
  ASSERT_EQ(requests_.size(), 1u);
  EXPECT_EQ(requests_[0].url,
            "http://127.0.0.1:8081/breadcrumbs?schema_name=note.v1&tag=a%20b&tag=c&any_tags=x%2Cy&path_prefix=p%2Fq"
            "&context_match=%7B%22path%22%3A%22%24.n%22%2C%22op%22%3A%22gt%22%2C%22value%22%3A1%7D&limit=10&order=asc");
  EXPECT_EQ(out_.str(),
            "ID  VERSION  SCHEMA   TITLE  TAGS  UPDATED_AT\n"
            "i1        2  note.v1  Hello  a,b   2030-01-01T00:00:00.000000Z\n");
  EXPECT_EQ(err_.str(), "more breadcrumbs: add --cursor c2 for the next page, or --all\n");
}

TEST_F(ClientCommandsTest, ListSeveralMatchRulesBecomeOneArray) {
  script_.push_back(Reply(200, R"({"items":[],"next_cursor":null})"));
  EXPECT_EQ(Run("list", {"--match", R"({"path":"$.a","op":"exists"})", "--match",
                         R"([{"path":"$.b","op":"eq","value":"x"}])", "--json", "--compact"}),
            0);
  const std::string url = requests_[0].url;
  const std::string encoded = url.substr(url.find("context_match=") + 14);
  EXPECT_EQ(encoded,
            "%5B%7B%22path%22%3A%22%24.a%22%2C%22op%22%3A%22exists%22%7D%2C%7B%22path%22%3A%22%24.b%22%2C%22op%22%3A%22eq"
            "%22%2C%22value%22%3A%22x%22%7D%5D");
  EXPECT_EQ(out_.str(), "{\"items\":[],\"next_cursor\":null}\n");
}

TEST_F(ClientCommandsTest, ListAllFollowsCursors) {
  script_.push_back(Reply(200, R"({"items":[{"id":"1"},{"id":"2"}],"next_cursor":"c/2"})"));
  script_.push_back(Reply(200, R"({"items":[{"id":"3"}],"next_cursor":null})"));
  EXPECT_EQ(Run("list", {"--all", "--limit", "2", "--json", "--compact"}), 0) << err_.str();
  ASSERT_EQ(requests_.size(), 2u);
  EXPECT_EQ(requests_[0].url, "http://127.0.0.1:8081/breadcrumbs?limit=2");
  EXPECT_EQ(requests_[1].url, "http://127.0.0.1:8081/breadcrumbs?limit=2&cursor=c%2F2");
  EXPECT_EQ(out_.str(), R"({"items":[{"id":"1"},{"id":"2"},{"id":"3"}],"next_cursor":null})"
                        "\n");
}

TEST_F(ClientCommandsTest, ListAllStopsOnRepeatedCursor) {
  script_.push_back(Reply(200, R"({"items":[],"next_cursor":"same"})"));
  script_.push_back(Reply(200, R"({"items":[],"next_cursor":"same"})"));
  EXPECT_EQ(Run("list", {"--all"}), 1);
  EXPECT_NE(err_.str().find("same next_cursor twice"), std::string::npos);
}

TEST_F(ClientCommandsTest, ListEmptyTableGoesToStderr) {
  script_.push_back(Reply(200, R"({"items":[],"next_cursor":null})"));
  EXPECT_EQ(Run("list", {}), 0);
  EXPECT_EQ(out_.str(), "");
  EXPECT_EQ(err_.str(), "no breadcrumbs found\n");
}

TEST_F(ClientCommandsTest, UsageErrorsExitTwoWithoutRequests) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"get", {}},
      {"get", {"a", "b"}},
      {"get", {""}},
      {"get", {"x", "--bogus"}},
      {"put", {}},
      {"put", {"--title", "t", "--context", "{bad"}},
      {"update", {"x"}},
      {"update", {"x", "--title", "t", "--if-match", "v1"}},
      {"list", {"--limit", "0"}},
      {"list", {"--limit", "ten"}},
      {"list", {"--order", "up"}},
      {"list", {"--any-tag", "a,b"}},
      {"list", {"--match", "{"}},
      {"history", {"x", "--server", "ftp://h"}},
      {"get", {"x", "--timeout", "0"}},
  };
  for (const auto& [command, args] : cases) {
    EXPECT_EQ(Run(command, args), 2) << command << " " << (args.empty() ? "" : args.back());
    EXPECT_NE(err_.str().find("usage: cairn " + command), std::string::npos) << err_.str();
    EXPECT_TRUE(err_.str().starts_with("cairn " + command + ": ")) << err_.str();
  }
  EXPECT_TRUE(requests_.empty());
}

TEST_F(ClientCommandsTest, HelpGoesToStdoutAndExitsZero) {
  EXPECT_EQ(Run("put", {"--help"}), 0);
  EXPECT_TRUE(out_.str().starts_with("usage: cairn put --title TEXT [fields] [options]\n")) << out_.str();
  EXPECT_NE(out_.str().find("--idempotency-key KEY"), std::string::npos);
  EXPECT_NE(out_.str().find("--server URL"), std::string::npos);
  EXPECT_EQ(Run("list", {"-h", "--bogus"}), 0);
  EXPECT_TRUE(requests_.empty());
}

TEST_F(ClientCommandsTest, TimeoutOption) {
  script_.push_back(Reply(200, "{}"));
  EXPECT_EQ(Run("get", {"x", "--timeout", "1.5"}), 0);
  EXPECT_EQ(curl_options_.total_timeout_ms, 1500);
  EXPECT_EQ(curl_options_.connect_timeout_ms, 1500);
}

TEST_F(ClientCommandsTest, ClientUsageListsEveryCommand) {
  const std::string usage = ClientUsage();
  for (const char* name : {"put", "get", "list", "update", "rm", "history", "tail", "tools", "call"}) {
    EXPECT_NE(usage.find(std::string("cairn ") + name + " "), std::string::npos) << name;
  }
  EXPECT_NE(usage.find("CAIRN_SERVER"), std::string::npos);
}

}  // namespace
}  // namespace cairn::cli
