// Tools end to end: the real server answers tool.request.v1 breadcrumbs with tool.response.v1
// breadcrumbs, for every built-in tool, for process tools (stdin/fd 3, failures, limits), for tools
// with their own subscriptions, and for definitions that are changed, deleted or invalid; loops of
// tools end at the depth guard.
//
// Answers are read from event streams that start at seq 0 (tool_support.h), so they are never
// missed, and arrive in seq order. To prove that something did NOT happen (a second answer), a
// later "fence" answer from the same executor is awaited: an executor with concurrency 1 runs its
// triggers one at a time in seq order, so an answer it would have written to an earlier trigger
// comes before the fence's.
#include <set>

#include "tool_support.h"

namespace cairn::e2e {
namespace {

using namespace std::chrono_literals;

class e2e_tools : public ToolTest {
 protected:
  // A process tool running `script` (PATH passed through, run in the test's directory so that
  // nothing lands elsewhere).
  json::object ProcessTool(const std::string& name, const std::string& script, json::object more = {}) {
    return ProcessTool(name, json::array{json::value(script)}, std::move(more));
  }
  json::object ProcessTool(const std::string& name, json::array command, json::object more = {}) {
    more["name"] = name;
    more["runtime"] = "process";
    more["command"] = std::move(command);
    more["env"] = json::array{"PATH"};
    more["cwd"] = server().root_dir();
    if (!more.contains("timeout_ms")) more["timeout_ms"] = 15000;
    return tools().DefineTool(more);
  }
  // Requests `tool` and returns the answer (a failure and an empty object if none comes).
  json::object Call(const std::string& tool, const json::value& input, const json::object& extra = {},
                    const Headers& headers = {}) {
    return tools().AwaitResponse(tools().Request(tool, input, extra, headers));
  }
  static json::object Out(const json::object& response) {
    json::value out = OutputOf(response);
    EXPECT_TRUE(out.is_object()) << "no object output: " << JsonText(response);
    return out.is_object() ? out.as_object() : json::object{};
  }
};

// A selector entry that triggers on requests for `name` (what a definition without
// subscriptions gets by default).
json::object RequestTrigger(const std::string& name) {
  return {{"schema_name", "tool.request.v1"},
          {"context_match", json::array{json::object{{"path", "$.tool"}, {"op", "eq"}, {"value", name}}}},
          {"types", json::array{"breadcrumb.created"}}};
}

// A selector entry that triggers on the answers of `tool`.
json::object AnswersOf(const std::string& tool) {
  return {{"schema_name", "tool.response.v1"},
          {"context_match", json::array{json::object{{"path", "$.tool"}, {"op", "eq"}, {"value", tool}}}}};
}

const json::object& TraceOf(const json::object& record) {
  static const json::object empty;
  const json::value* t = record.if_contains("trace");
  return t != nullptr && t->is_object() ? t->as_object() : empty;
}

TEST_F(e2e_tools, TheNineBuiltinsAreListedAsToolDefinitions) {
  const std::set<std::string> expected = {"echo", "sleep", "http_request", "breadcrumb_create", "breadcrumb_get",
                                          "breadcrumb_query", "breadcrumb_update", "wait_for", "search"};
  std::vector<json::object> items = ListAll("schema_name=tool.v1&include_context=true");
  std::set<std::string> names;
  for (const auto& item : items) {
    std::string name = StringAt(ContextOf(item), "name");
    names.insert(name);
    EXPECT_EQ(StringAt(item, "path"), "tools/" + name);
    EXPECT_EQ(StringAt(ContextOf(item), "runtime"), "builtin") << name;
    EXPECT_TRUE(HasTag(item, "builtin")) << name;
    EXPECT_EQ(StringAt(item, "created_by"), "system") << name;
  }
  EXPECT_EQ(items.size(), 9u);
  EXPECT_EQ(names, expected);
}

TEST_F(e2e_tools, EchoAnswersWithATaggedTracedResponseAndACompletedExecution) {
  json::object input{{"text", "hello"}, {"list", json::array{1, 2}}};
  std::string id = tools().Request("echo", input, {}, {{"X-Cairn-Actor", "alice"}});
  json::object r = tools().AwaitResponse(id);
  ASSERT_FALSE(r.empty());
  EXPECT_EQ(StringAt(r, "schema_name"), "tool.response.v1");
  EXPECT_EQ(StatusOf(r), "success");
  EXPECT_EQ(OutputOf(r), json::value(input));
  EXPECT_EQ(StringAt(ContextOf(r), "tool"), "echo");
  EXPECT_EQ(StringAt(ContextOf(r), "request_id"), id);
  EXPECT_GE(IntAt(ContextOf(r), "duration_ms"), 0);
  EXPECT_TRUE(HasTag(r, "tool:response") && HasTag(r, "request:" + id) && HasTag(r, "tool:echo")) << JsonText(r);
  EXPECT_EQ(StringAt(TraceOf(r), "caused_by"), id);
  EXPECT_EQ(IntAt(TraceOf(r), "depth"), 1);
  EXPECT_EQ(StringAt(r, "created_by"), "tool:echo");

  // The run's record is written in the answer's transaction: listed (not cached) at once.
  std::vector<json::object> records =
      ListAll("schema_name=agent.execution.v1&include_context=true&tag=" + UrlEncode("trigger:" + id));
  ASSERT_EQ(records.size(), 1u);
  const json::object& record = records[0];
  EXPECT_EQ(StringAt(ContextOf(record), "status"), "completed");
  EXPECT_EQ(IntAt(ContextOf(record), "attempt"), 1);
  EXPECT_EQ(StringAt(ContextOf(record).at("trigger").as_object(), "breadcrumb_id"), id);
  EXPECT_EQ(StringAt(ContextOf(record), "kind"), "tool");
  EXPECT_EQ(StringAt(ContextOf(record), "executor"), "echo");
  EXPECT_EQ(StringAt(record, "path"), "executions/" + StringAt(ContextOf(record), "id"));
  // The same record through the executions API.
  Response got = client().Get("/executions/" + StringAt(ContextOf(record), "id"));
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(StringAt(got.Json().as_object(), "status"), "completed");

  // A request_id chosen by the caller is what the answer carries.
  json::object mine = Call("echo", json::object{{"k", 2}}, {{"request_id", "my-call-1"}});
  EXPECT_EQ(StringAt(ContextOf(mine), "request_id"), "my-call-1");
  EXPECT_TRUE(HasTag(mine, "request:my-call-1"));
  EXPECT_EQ(StringAt(TraceOf(mine), "caused_by"), tools().RecordIdOf("my-call-1"));
  EXPECT_EQ(tools().ResponsesTo(id).size(), 1u);
}

// A client (an agent) that sees the update event of a record changed by breadcrumb_update and then
// reads the record gets the new version: events are published once the write is committed.
// Repeated, as a stale read is a race: it needs the writing thread to be slow after its commit,
// which CPU contention (tests run in parallel) brings about.
TEST_F(e2e_tools, ARecordReadsUpdatedOnceItsUpdateEventIsVisible) {
  std::string id = StringAt(CreateOk(json::object{{"title", "v1"}, {"schema_name", "cache.probe.v1"}}), "id");
  ASSERT_FALSE(id.empty());
  std::vector<std::string> stale;
  for (int64_t version = 1; version <= 60; ++version) {
    FullOk(id);  // read at `version` (and kept by the server's read cache)
    tools().Request("breadcrumb_update",
                    json::object{{"id", id}, {"patch", {{"title", "v" + std::to_string(version + 1)}}}});
    json::object event = tools().AwaitEvent("cache.probe.v1", [&](const json::object& e) {
      return StringAt(e, "breadcrumb_id") == id && IntAt(e, "version") == version + 1;
    });
    ASSERT_FALSE(event.empty());
    int64_t read = IntAt(FullOk(id), "version");
    if (read != version + 1) {
      stale.push_back("after the event of v" + std::to_string(version + 1) + ", GET gave v" + std::to_string(read));
    }
  }
  EXPECT_TRUE(stale.empty()) << ::testing::PrintToString(stale);
}

TEST_F(e2e_tools, SleepWaitsTheGivenTime) {
  auto start = std::chrono::steady_clock::now();
  json::object r = Call("sleep", json::object{{"ms", 300}});
  EXPECT_GE(std::chrono::steady_clock::now() - start, 300ms);
  EXPECT_EQ(StatusOf(r), "success") << JsonText(r);
  EXPECT_EQ(OutputOf(r), json::value(json::object{{"slept_ms", 300}}));
  EXPECT_GE(IntAt(ContextOf(r), "duration_ms"), 300);
}

class e2e_tools_http : public e2e_tools {
 protected:
  // Only this prefix of the loopback server is allowed; the rest of it is not. Loopback itself is
  // a refused address unless --allow-private-network lists it (outbound_policy_test.cpp).
  std::vector<std::string> ServerArgs() const override {
    return {"--http-allow", http_.base_url() + "/allowed", "--allow-private-network", "127.0.0.0/8"};
  }
  PathEchoServer http_;
};

TEST_F(e2e_tools_http, HttpRequestCallsAnAllowedUrlAndRefusesOthersWithoutContactingThem) {
  json::object r = Call("http_request", json::object{{"method", "POST"},
                                                     {"url", http_.base_url() + "/allowed/thing?q=1"},
                                                     {"headers", {{"X-Probe", "yes"}}},
                                                     {"body", {{"a", 1}}}});
  ASSERT_EQ(StatusOf(r), "success") << JsonText(r);
  json::object out = Out(r);
  EXPECT_EQ(IntAt(out, "status"), 200);
  EXPECT_EQ(out["json"], json::value(json::object{{"seen_path", "/allowed/thing?q=1"}, {"seen_method", "POST"}}));
  std::vector<PathEchoServer::Seen> seen = http_.requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].headers["x-probe"], "yes");
  EXPECT_EQ(seen[0].headers["content-type"], "application/json");
  EXPECT_EQ(json::parse(seen[0].body), json::value(json::object{{"a", 1}}));

  // The same server outside the allowed prefix, and the same port under another host name.
  for (const std::string& url : {http_.base_url() + "/secret", http_.base_url() + "/allowedx",
                                 "http://localhost:" + std::to_string(http_.port()) + "/allowed/x"}) {
    json::object refused = Call("http_request", json::object{{"url", url}});
    EXPECT_EQ(StatusOf(refused), "error") << url << ": " << JsonText(refused);
    EXPECT_EQ(ErrorCodeOf(refused), "invalid_input") << url;
    EXPECT_NE(ErrorMessageOf(refused).find("allow-list"), std::string::npos) << ErrorMessageOf(refused);
  }
  // The answers are written after the tool ran, so a contact would be recorded by now.
  EXPECT_EQ(http_.requests().size(), 1u);

  json::object invalid = Call("http_request", json::object{{"method", "PATCH"}, {"url", http_.base_url() + "/allowed"}});
  EXPECT_EQ(ErrorCodeOf(invalid), "invalid_input") << JsonText(invalid);
  EXPECT_NE(ErrorMessageOf(invalid).find("input.method"), std::string::npos) << ErrorMessageOf(invalid);
}

// An http tool POSTs its input as JSON to its url (not subject to --http-allow, which is the
// http_request built-in's) and answers with the JSON reply.
TEST_F(e2e_tools_http, HttpToolsPostTheirInputAndAnswerWithTheReply) {
  tools().DefineTool({{"name", "remote"}, {"runtime", "http"}, {"url", http_.base_url() + "/tool"},
                      {"headers", {{"X-Key", "k1"}}}, {"timeout_ms", 10000}});
  json::object r = Call("remote", json::object{{"a", 1}});
  ASSERT_EQ(StatusOf(r), "success") << JsonText(r);
  EXPECT_EQ(OutputOf(r), json::value(json::object{{"seen_path", "/tool"}, {"seen_method", "POST"}}));
  std::vector<PathEchoServer::Seen> seen = http_.requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].headers["x-key"], "k1");
  EXPECT_EQ(seen[0].headers["content-type"], "application/json");
  // {"input", "context"}, as a process tool gets on stdin.
  json::value body = json::parse(seen[0].body);
  EXPECT_EQ(body.at("input"), json::value(json::object{{"a", 1}}));
  EXPECT_EQ(body.at("context").at("trigger").at("context").at("tool"), "remote");
}

TEST_F(e2e_tools, BreadcrumbCreateWritesAsTheCaller) {
  json::object r = Call("breadcrumb_create",
                        json::object{{"title", "made by a tool"}, {"schema_name", "note.v1"},
                                     {"tags", json::array{"made"}}, {"context", {{"k", 1}}}},
                        {}, {{"X-Cairn-Actor", "alice"}});
  ASSERT_EQ(StatusOf(r), "success") << JsonText(r);
  std::string made = StringAt(Out(r), "id");
  json::object record = FullOk(made);
  EXPECT_EQ(StringAt(record, "created_by"), "alice");
  EXPECT_EQ(StringAt(record, "title"), "made by a tool");
  EXPECT_EQ(record["context"], json::value(json::object{{"k", 1}}));
  EXPECT_EQ(StringAt(TraceOf(record), "caused_by"), StringAt(ContextOf(r), "request_id"));
  EXPECT_EQ(IntAt(TraceOf(record), "depth"), 1);

  // requested_by names the caller; without either, the request's writer is "anonymous".
  json::object for_bob = Call("breadcrumb_create", json::object{{"title", "for bob"}}, {{"requested_by", "bob"}},
                              {{"X-Cairn-Actor", "alice"}});
  EXPECT_EQ(StringAt(FullOk(StringAt(Out(for_bob), "id")), "created_by"), "bob");
  json::object anon = Call("breadcrumb_create", json::object{{"title", "anonymous"}});
  EXPECT_EQ(StringAt(FullOk(StringAt(Out(anon), "id")), "created_by"), "anonymous");

  // Validated like POST /breadcrumbs: nothing is written.
  json::object bad = Call("breadcrumb_create", json::object{{"title", "bad tags"}, {"tags", "not-a-list"}});
  EXPECT_EQ(ErrorCodeOf(bad), "invalid_input") << JsonText(bad);
  EXPECT_NE(ErrorMessageOf(bad).find("input.tags"), std::string::npos) << ErrorMessageOf(bad);
  for (const auto& item : ListAll()) EXPECT_NE(StringAt(item, "title"), "bad tags");
}

TEST_F(e2e_tools, BreadcrumbGetAndQueryReadTheStore) {
  auto note = [&](const std::string& title, const std::string& tag, int n) {
    return CreateOk(json::object{{"title", title}, {"schema_name", "qnote.v1"}, {"tags", json::array{json::value(tag)}},
                                 {"context", {{"n", n}}}});
  };
  note("first", "q", 1);
  json::object second = note("second", "q", 2), third = note("third", "q", 3);
  note("other", "z", 4);

  json::object got = Out(Call("breadcrumb_get", json::object{{"id", StringAt(second, "id")}}));
  EXPECT_EQ(StringAt(got, "id"), StringAt(second, "id"));
  EXPECT_EQ(StringAt(got, "title"), "second");
  EXPECT_EQ(got["context"], json::value(json::object{{"n", 2}}));
  EXPECT_FALSE(got.contains("created_by")) << "the context view, not the full record: " << JsonText(got);
  json::object full = Out(Call("breadcrumb_get", json::object{{"id", StringAt(second, "id")}, {"view", "full"}}));
  EXPECT_EQ(StringAt(full, "created_by"), "anonymous");
  EXPECT_EQ(StringAt(full, "checksum"), StringAt(second, "checksum"));
  EXPECT_EQ(ErrorCodeOf(Call("breadcrumb_get", json::object{{"id", "no-such-id"}})), "not_found");

  json::object found = Out(Call("breadcrumb_query", json::object{{"selector", {{"schema_name", "qnote.v1"},
                                                                             {"any_tags", json::array{"q"}}}},
                                                                {"limit", 2}}));
  EXPECT_EQ(IntAt(found, "count"), 2);
  std::vector<std::string> ids;
  for (const auto& item : found["items"].as_array()) ids.push_back(StringAt(item.as_object(), "id"));
  EXPECT_EQ(ids, (std::vector<std::string>{StringAt(third, "id"), StringAt(second, "id")})) << "newest first";
  json::object bad = Call("breadcrumb_query", json::object{{"selector", {{"types", json::array{"nope"}}}}});
  EXPECT_EQ(ErrorCodeOf(bad), "invalid_input") << JsonText(bad);
  EXPECT_NE(ErrorMessageOf(bad).find("input.selector"), std::string::npos) << ErrorMessageOf(bad);
}

TEST_F(e2e_tools, SearchFindsByWordsAndSimilarityInTheCallersTenant) {
  CreateOk(json::parse(R"({"title":"harbour lights","schema_name":"snote.v1","tags":["travel"],"context":{"text":"boats in the Lisbon harbour"}})"));
  CreateOk(json::parse(R"({"title":"tax forms","schema_name":"snote.v1","context":{"text":"quarterly filing deadlines"}})"));
  CreateOk(json::parse(R"({"title":"harbour tour","schema_name":"other.v1","context":{"text":"a harbour tour"}})"));
  json::object text = Out(Call("search", json::object{{"q", "harbour"}, {"mode", "text"}, {"schema_name", "snote.v1"}}));
  EXPECT_EQ(StringAt(text, "mode"), "text");
  ASSERT_EQ(text["items"].as_array().size(), 1u) << JsonText(text);
  const json::object& hit = text["items"].as_array()[0].as_object();
  EXPECT_EQ(StringAt(hit, "title"), "harbour lights");
  EXPECT_NE(StringAt(hit, "snippet").find("**harbour**"), std::string::npos) << JsonText(hit);
  EXPECT_EQ(StringAt(hit.at("context").as_object(), "text"), "boats in the Lisbon harbour");

  ASSERT_TRUE(SearchCaughtUp(client()));
  json::object similar = Out(Call("search", json::object{{"q", "quarterly filing"}, {"mode", "vector"}, {"limit", 1}}));
  ASSERT_EQ(similar["items"].as_array().size(), 1u) << JsonText(similar);
  EXPECT_EQ(StringAt(similar["items"].as_array()[0].as_object(), "title"), "tax forms");
  json::object tagged = Out(Call("search", json::object{{"q", "harbour"}, {"tags", json::array{"travel"}}}));
  EXPECT_EQ(StringAt(tagged, "mode"), "hybrid");
  ASSERT_EQ(tagged["items"].as_array().size(), 1u) << JsonText(tagged);

  for (const json::object& input : {json::object{{"q", ""}}, json::object{{"q", "x"}, {"limit", 500}},
                                    json::object{{"q", "x"}, {"mode", "fuzzy"}}, json::object{{"query", "x"}}}) {
    json::object bad = Call("search", input);
    EXPECT_EQ(ErrorCodeOf(bad), "invalid_input") << JsonText(input) << " → " << JsonText(bad);
  }
  // Only punctuation: no word to search for, refused naming the input's q.
  json::object empty = Call("search", json::object{{"q", "?!"}, {"mode", "text"}});
  EXPECT_EQ(StatusOf(empty), "error") << JsonText(empty);
  EXPECT_NE(ErrorMessageOf(empty).find("q"), std::string::npos) << ErrorMessageOf(empty);
}

TEST_F(e2e_tools, BreadcrumbUpdateHonoursIfMatch) {
  std::string id = StringAt(CreateOk(json::object{{"title", "v1"}}), "id");
  Headers carol = {{"X-Cairn-Actor", "carol"}};
  json::object stale =
      Call("breadcrumb_update", json::object{{"id", id}, {"patch", {{"title", "v2"}}}, {"if_match", 7}}, {}, carol);
  EXPECT_EQ(StatusOf(stale), "error");
  EXPECT_EQ(ErrorCodeOf(stale), "precondition_failed") << JsonText(stale);  // the HTTP API's code for a 412 (docs/executors.md)
  json::object unchanged = FullOk(id);
  EXPECT_EQ(IntAt(unchanged, "version"), 1);
  EXPECT_EQ(StringAt(unchanged, "title"), "v1");

  json::object fresh =
      Call("breadcrumb_update", json::object{{"id", id}, {"patch", {{"title", "v2"}}}, {"if_match", 1}}, {}, carol);
  ASSERT_EQ(StatusOf(fresh), "success") << JsonText(fresh);
  EXPECT_EQ(IntAt(Out(fresh), "version"), 2);
  json::object updated = FullOk(id);
  EXPECT_EQ(StringAt(updated, "title"), "v2");
  EXPECT_EQ(StringAt(updated, "updated_by"), "carol");
}

TEST_F(e2e_tools, WaitForAnswersWithTheFirstMatchingLaterEvent) {
  std::string id = tools().Request(
      "wait_for", json::object{{"selector", {{"schema_name", "signal.v1"}, {"any_tags", json::array{"go"}}}},
                               {"timeout_ms", 15000}});
  CreateOk(json::object{{"title", "not this one"}, {"schema_name", "signal.v1"}, {"tags", json::array{"wait"}}});
  json::object go = CreateOk(json::object{{"title", "go"}, {"schema_name", "signal.v1"}, {"tags", json::array{"go"}},
                                          {"context", {{"v", 42}}}});
  json::object r = tools().AwaitResponse(id);
  ASSERT_EQ(StatusOf(r), "success") << JsonText(r);
  json::object event = Out(r);
  EXPECT_EQ(StringAt(event, "breadcrumb_id"), StringAt(go, "id"));
  EXPECT_EQ(StringAt(event, "type"), "breadcrumb.created");
  EXPECT_EQ(event["context"], json::value(json::object{{"v", 42}}));

  // Nothing matching: an error once timeout_ms has passed.
  auto start = std::chrono::steady_clock::now();
  json::object none = Call("wait_for", json::object{{"selector", {{"schema_name", "never.v1"}}}, {"timeout_ms", 200}});
  EXPECT_EQ(StatusOf(none), "error");
  EXPECT_EQ(ErrorCodeOf(none), "unavailable") << JsonText(none);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 200ms);
}

TEST_F(e2e_tools, UnknownToolsAndInvalidInputAreAnsweredWithErrors) {
  std::string id = tools().Request("no_such_tool", json::object{{"x", 1}});
  json::object unknown = tools().AwaitResponse(id);
  EXPECT_EQ(StatusOf(unknown), "error");
  EXPECT_EQ(ErrorCodeOf(unknown), "unknown_tool") << JsonText(unknown);
  EXPECT_EQ(StringAt(ContextOf(unknown), "tool"), "no_such_tool");
  EXPECT_TRUE(HasTag(unknown, "request:" + id) && HasTag(unknown, "tool:no_such_tool")) << JsonText(unknown);

  const std::vector<std::pair<std::pair<std::string, json::object>, std::string>> invalid = {
      {{"sleep", {{"ms", "soon"}}}, "input.ms"},
      {{"sleep", {{"ms", 1}, {"extra", true}}}, "input.extra"},
      {{"breadcrumb_get", {}}, "input.id"},
      {{"wait_for", {{"selector", json::object{}}}}, "input.timeout_ms"},
  };
  for (const auto& [call, field] : invalid) {
    json::object r = Call(call.first, call.second);
    EXPECT_EQ(StatusOf(r), "error") << call.first;
    EXPECT_EQ(ErrorCodeOf(r), "invalid_input") << call.first << ": " << JsonText(r);
    EXPECT_NE(ErrorMessageOf(r).find(field), std::string::npos) << ErrorMessageOf(r) << " should name " << field;
    EXPECT_EQ(StringAt(ContextOf(tools().AwaitExecution(StringAt(TraceOf(r), "caused_by"))), "status"), "failed");
  }
}

// A definition may reuse a built-in under another name without restating its input_schema (the
// default is {"type":"object"}): bad input must then be an error answer, not a dead server.
TEST_F(e2e_tools, ABuiltinReusedWithoutItsInputSchemaSurvivesBadInput) {
  tools().DefineTool({{"name", "nap"}, {"runtime", "builtin"}, {"builtin", "sleep"}});
  json::object ok = Call("nap", json::object{{"ms", 1}});
  EXPECT_EQ(StatusOf(ok), "success") << JsonText(ok);
  json::object r = tools().AwaitResponse(tools().Request("nap", json::object{}), 10s);
  EXPECT_EQ(StatusOf(r), "error") << JsonText(r);
  Response health = client().Get("/health");
  EXPECT_EQ(health.status, 200) << "the server is gone: " << health.Describe();
}

TEST_F(e2e_tools, InvalidDefinitionsAreRefusedWithTheFieldAndWriteNothing) {
  // A definition of the user's own (built-in ones are read-only) to update below.
  tools().DefineTool(json::object{{"name", "mine"}, {"runtime", "builtin"}, {"builtin", "echo"}});
  std::vector<std::string> before = StoreSnapshot();
  json::object echo{{"name", "bad"}, {"runtime", "builtin"}, {"builtin", "echo"}};
  auto with = [&](json::object base, const std::string& key, json::value value) {
    base[key] = std::move(value);
    return base;
  };
  const std::vector<std::pair<json::object, std::string>> cases = {
      {with(echo, "runtime", "docker"), "context.runtime"},
      {{{"name", "bad"}, {"runtime", "process"}}, "context.command"},
      {with(echo, "input_schema", json::object{{"type", "nonsense"}}), "context.input_schema*"},
      {with(echo, "subscriptions",
            {{"selectors", json::array{RequestTrigger("bad"), json::object{{"schema_name", "x.v1"}, {"role", "context"},
                                                                           {"fetch", "nearest"}}}}}),
       "context.subscriptions.selectors[1].fetch"},
      {with(echo, "builtin", "no_such_builtin"), "context.builtin"},
      {with(echo, "name", "bad name!"), "context.name"},
      {{{"runtime", "builtin"}, {"builtin", "echo"}}, "context.name"},
      {with(echo, "command", json::array{"/bin/true"}), "context.command"},
      {with(echo, "timeout_ms", 0), "context.timeout_ms"},
      {with(echo, "subscriptions", {{"selectors", json::array{json::object{{"schema_name", "x.v1"}, {"role", "context"}}}}}),
       "context.subscriptions.selectors"},
      {with(echo, "colour", "red"), "context.colour"},
  };
  for (const auto& [context, field] : cases) {
    json::object body{{"title", "tool bad"}, {"schema_name", "tool.v1"}, {"context", context}};
    EXPECT_TRUE(IsError(client().Post("/breadcrumbs", json::serialize(body)), 422, "validation_failed", field))
        << json::serialize(context);
  }
  json::object elsewhere{{"title", "t"}, {"schema_name", "tool.v1"}, {"path", "elsewhere/bad"}, {"context", echo}};
  EXPECT_TRUE(IsError(client().Post("/breadcrumbs", json::serialize(elsewhere)), 422, "validation_failed", "path"));
  // Requests are checked too.
  json::object no_tool{{"title", "r"}, {"schema_name", "tool.request.v1"}, {"context", {{"input", json::object{}}}}};
  EXPECT_TRUE(IsError(client().Post("/breadcrumbs", json::serialize(no_tool)), 422, "validation_failed", "context.tool"));
  // An update to an invalid definition is refused the same way.
  std::vector<json::object> mine = ListAll("path=" + UrlEncode("tools/mine"));
  ASSERT_EQ(mine.size(), 1u);
  Response patched = client().Patch("/breadcrumbs/" + StringAt(mine[0], "id"),
                                    R"({"context":{"name":"mine","runtime":"process"}})");
  EXPECT_TRUE(IsError(patched, 422, "validation_failed", "context.command"));
  EXPECT_EQ(StoreSnapshot(), before);

  // Nothing of it runs: echo still works, "bad" is unknown.
  EXPECT_EQ(OutputOf(Call("echo", json::object{{"still", true}})), json::value(json::object{{"still", true}}));
  EXPECT_EQ(ErrorCodeOf(Call("bad", json::object{})), "unknown_tool");
}

TEST_F(e2e_tools, AToolTriggeredByItsOwnResponsesAnswersOnce) {
  tools().DefineTool({{"name", "selfie"}, {"runtime", "builtin"}, {"builtin", "echo"}, {"concurrency", 1},
                      {"subscriptions", {{"selectors", json::array{RequestTrigger("selfie"), AnswersOf("selfie")}}}}});
  std::string first = tools().Request("selfie", json::object{{"n", 1}});
  EXPECT_EQ(StatusOf(tools().AwaitResponse(first)), "success");
  std::string fence = tools().Request("selfie", json::object{{"n", 2}});
  EXPECT_EQ(StatusOf(tools().AwaitResponse(fence)), "success");
  auto all = tools().Created("tool.response.v1",
                             [](const json::object& e) { return StringAt(ContextOf(e), "tool") == "selfie"; });
  EXPECT_EQ(all.size(), 2u) << tools().Describe("tool.response.v1");
}

class e2e_tools_depth : public e2e_tools {
 protected:
  std::vector<std::string> ServerArgs() const override { return {"--executor-max-depth", "6"}; }
};

TEST_F(e2e_tools_depth, PingPongEndsWithDepthExceeded) {
  tools().DefineTool({{"name", "ping"}, {"runtime", "builtin"}, {"builtin", "echo"}, {"concurrency", 1},
                      {"subscriptions", {{"selectors", json::array{RequestTrigger("ping"), AnswersOf("pong")}}}}});
  tools().DefineTool({{"name", "pong"}, {"runtime", "builtin"}, {"builtin", "echo"}, {"concurrency", 1},
                      {"subscriptions", {{"selectors", json::array{AnswersOf("ping"),
                                                                   json::object{{"schema_name", "depth.fence.v1"}}}}}}});
  std::string id = tools().Request("ping", json::object{{"ball", 1}});
  std::string trace_id = StringAt(TraceOf(FullOk(tools().RecordIdOf(id))), "trace_id");
  ASSERT_FALSE(trace_id.empty());
  auto in_chain = [&](const json::object& e) { return StringAt(TraceOf(e), "trace_id") == trace_id; };
  json::object refused = tools().AwaitEvent("tool.response.v1", [&](const json::object& e) {
    return in_chain(e) && ErrorCodeOf(e) == "depth_exceeded";
  });
  ASSERT_FALSE(refused.empty());

  // Fence through pong (concurrency 1, seq order): a trigger already at the maximum depth is
  // refused, unrun, and the refusal (deeper still) is dropped by ping.
  json::object fence = CreateOk(json::object{{"title", "fence"}, {"schema_name", "depth.fence.v1"},
                                             {"trace", {{"depth", 6}}}});
  json::object fenced = tools().AwaitResponse(StringAt(fence, "id"));
  EXPECT_EQ(ErrorCodeOf(fenced), "depth_exceeded") << JsonText(fenced);

  // request (depth 0) -> ping 1, pong 2, ..., pong 6 -> ping refuses at 7; nothing after.
  std::vector<json::object> chain = tools().Created("tool.response.v1", in_chain);
  ASSERT_EQ(chain.size(), 7u) << tools().Describe("tool.response.v1");
  for (size_t i = 0; i < chain.size(); ++i) {
    EXPECT_EQ(IntAt(TraceOf(chain[i]), "depth"), static_cast<int64_t>(i + 1));
    EXPECT_EQ(StringAt(ContextOf(chain[i]), "tool"), i % 2 == 0 ? "ping" : "pong");
    EXPECT_EQ(StatusOf(chain[i]), i + 1 < chain.size() ? "success" : "error");
  }
  EXPECT_EQ(StringAt(refused, "breadcrumb_id"), StringAt(chain.back(), "breadcrumb_id"));
  EXPECT_EQ(tools().Created("tool.response.v1", [](const json::object&) { return true; }).size(), 8u);
}

// --- process tools ---------------------------------------------------------------------------

TEST_F(e2e_tools, AProcessToolGetsInputAndContextOnStdinAndAnswersOnFd3) {
  ProcessTool("stdin_echo", WriteScript("stdin_echo.sh", "#!/bin/sh\nexec cat >&3\n"));
  json::object input{{"question", "why"}, {"n", 7}};
  std::string id = tools().Request("stdin_echo", input);
  json::object r = tools().AwaitResponse(id);
  ASSERT_EQ(StatusOf(r), "success") << JsonText(r);
  json::object seen = Out(r);
  EXPECT_EQ(seen["input"], json::value(input));
  ASSERT_TRUE(seen["context"].is_object()) << JsonText(seen);
  const json::object& trigger = seen["context"].as_object().at("trigger").as_object();
  EXPECT_EQ(StringAt(trigger, "id"), tools().RecordIdOf(id));
  EXPECT_EQ(StringAt(trigger, "schema_name"), "tool.request.v1");
  EXPECT_EQ(StringAt(ContextOf(trigger), "tool"), "stdin_echo");
}

TEST_F(e2e_tools, ProcessFailuresAreErrorAnswers) {
  ProcessTool("fails", WriteScript("fails.sh", "#!/bin/sh\ncat >/dev/null\necho 'first line' >&2\n"
                                               "echo 'the disk is on fire' >&2\nexit 3\n"));
  ProcessTool("hangs", WriteScript("hangs.sh", "#!/bin/sh\nexec sleep 30\n"), {{"timeout_ms", 300}});
  ProcessTool("crashes", WriteScript("crashes.sh", "#!/bin/sh\ncat >/dev/null\nkill -SEGV $$\n"));
  ProcessTool("garbles", WriteScript("garbles.sh", "#!/bin/sh\ncat >/dev/null\necho 'not json' >&3\n"));
  std::string fails = tools().Request("fails", json::object{});
  auto start = std::chrono::steady_clock::now();
  std::string hangs = tools().Request("hangs", json::object{});
  std::string crashes = tools().Request("crashes", json::object{});
  std::string garbles = tools().Request("garbles", json::object{});

  json::object r = tools().AwaitResponse(fails);
  EXPECT_EQ(StatusOf(r), "error");
  EXPECT_NE(ErrorMessageOf(r).find("exited with status 3"), std::string::npos) << ErrorMessageOf(r);
  EXPECT_NE(ErrorMessageOf(r).find("the disk is on fire"), std::string::npos) << "stderr tail: " << ErrorMessageOf(r);

  r = tools().AwaitResponse(hangs);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s) << "the 30 s script was not stopped at 300 ms";
  EXPECT_EQ(StatusOf(r), "error");
  EXPECT_EQ(ErrorCodeOf(r), "timeout") << JsonText(r);

  r = tools().AwaitResponse(crashes);
  EXPECT_EQ(StatusOf(r), "error");
  EXPECT_NE(ErrorMessageOf(r).find("SIGSEGV"), std::string::npos) << ErrorMessageOf(r);
  json::object record = tools().AwaitExecution(crashes);
  EXPECT_EQ(StringAt(ContextOf(record), "status"), "failed");
  EXPECT_NE(StringAt(ContextOf(record).at("error").as_object(), "message").find("SIGSEGV"), std::string::npos) << JsonText(record);

  r = tools().AwaitResponse(garbles);
  EXPECT_EQ(StatusOf(r), "error");
  EXPECT_NE(ErrorMessageOf(r).find("not JSON"), std::string::npos) << ErrorMessageOf(r);
}

TEST_F(e2e_tools, AProcessOverItsMemoryLimitFails) {
  std::string python = FindPython3();
  if (python.empty()) GTEST_SKIP() << "no python3 binary";
  std::string script = WriteScript("hog.py",
                                   "import json, os, sys\n"
                                   "mb = json.load(sys.stdin)['input']['mb']\n"
                                   "block = bytearray(mb * 1024 * 1024)\n"
                                   "with os.fdopen(3, 'w') as out:\n"
                                   "    json.dump({'allocated_mb': len(block) // (1024 * 1024)}, out)\n");
  ProcessTool("hog", json::array{json::value(python), json::value(script)}, {{"memory_mb", 100}});
  // Under the limit the script works; over it, it fails and the answer says why.
  json::object small = Call("hog", json::object{{"mb", 10}});
  EXPECT_EQ(OutputOf(small), json::value(json::object{{"allocated_mb", 10}})) << JsonText(small);
  json::object big = Call("hog", json::object{{"mb", 400}});
  EXPECT_EQ(StatusOf(big), "error") << JsonText(big);
  EXPECT_NE(ErrorMessageOf(big).find("memory limit"), std::string::npos) << ErrorMessageOf(big);
  EXPECT_NE(ErrorMessageOf(big).find("MemoryError"), std::string::npos) << ErrorMessageOf(big);
}

TEST_F(e2e_tools, AContextSubscriptionBringsTheLatestMatchingRecord) {
  ProcessTool("page_reader", WriteScript("page_reader.sh", "#!/bin/sh\nexec cat >&3\n"),
              {{"subscriptions", {{"selectors", json::array{RequestTrigger("page_reader"),
                                                           json::object{{"schema_name", "browser.page.context.v1"},
                                                                        {"role", "context"},
                                                                        {"key", "page"},
                                                                        {"fetch", "latest"}}}}}}});
  auto page = [&](const std::string& url) {
    return CreateOk(json::object{{"title", "page"}, {"schema_name", "browser.page.context.v1"}, {"context", {{"url", url}}}});
  };
  page("https://a.example/1");
  json::object second = page("https://a.example/2");
  CreateOk(json::object{{"title", "not a page"}, {"schema_name", "browser.tab.v1"}, {"context", {{"url", "x"}}}});

  std::string id = tools().Request("page_reader", json::object{});
  json::object seen = Out(tools().AwaitResponse(id));
  ASSERT_TRUE(seen["context"].is_object()) << JsonText(seen);
  const json::object& context = seen["context"].as_object();
  ASSERT_TRUE(context.contains("page")) << JsonText(seen);
  EXPECT_EQ(StringAt(context.at("page").as_object(), "id"), StringAt(second, "id"));
  EXPECT_EQ(ContextOf(context.at("page").as_object()), (json::object{{"url", "https://a.example/2"}}));
  EXPECT_EQ(StringAt(context.at("trigger").as_object(), "id"), tools().RecordIdOf(id));

  // Fetched when the request runs: a newer page is what the next request sees.
  json::object third = page("https://a.example/3");
  json::object again = Out(Call("page_reader", json::object{}));
  EXPECT_EQ(StringAt(again["context"].as_object()["page"].as_object(), "id"), StringAt(third, "id")) << JsonText(again);
}

// Each update is followed at once by a request, as a client would: it must use the new definition.
// Requests queued behind a slow run (concurrency 1) when the definition changes or is deleted are
// judged by the definition in force when each was written: none is lost, none answered twice.
// A tool whose own selectors take requests addressed to another name answers them, and the
// unknown-tool responder stays silent: one answer.
TEST_F(e2e_tools, ARequestTakenByAnotherToolsSelectorIsAnsweredOnce) {
  json::object selector{{"schema_name", "tool.request.v1"},
                        {"context_match", json::array{json::object{{"path", "$.tool"}, {"op", "eq"}, {"value", "ghost"}}}}};
  ASSERT_FALSE(tools()
                   .DefineTool({{"name", "catcher"}, {"runtime", "builtin"}, {"builtin", "echo"},
                                {"subscriptions", {{"selectors", json::array{selector}}}}})
                   .empty());
  std::string request = tools().Request("ghost", json::object{{"x", 1}});
  json::object answer = tools().AwaitResponse(request);
  EXPECT_EQ(StatusOf(answer), "success") << JsonText(answer);
  tools().AwaitResponse(tools().Request("echo", json::object{}));  // a fence
  EXPECT_EQ(tools().ResponsesTo(request).size(), 1u);
}

TEST_F(e2e_tools, RequestsWrittenBeforeAReloadOrADeleteAreAnsweredByTheOldDefinition) {
  json::object sleep_tool{{"name", "queued"}, {"runtime", "builtin"}, {"builtin", "sleep"}, {"concurrency", 1}};
  std::string id = StringAt(tools().DefineTool(sleep_tool), "id");
  ASSERT_FALSE(id.empty());
  std::string slow = tools().Request("queued", json::object{{"ms", 700}});
  std::string before_reload = tools().Request("queued", json::object{{"ms", 1}});
  // The new definition takes queued.poke.v1 records only: requests from now on are unknown.
  json::object poked = sleep_tool;
  poked["subscriptions"] = {{"selectors", json::array{json::object{{"schema_name", "queued.poke.v1"}}}}};
  PatchOk(id, json::object{{"context", poked}});
  std::string after_reload = tools().Request("queued", json::object{{"ms", 1}});
  EXPECT_EQ(StatusOf(tools().AwaitResponse(slow)), "success");
  EXPECT_EQ(StatusOf(tools().AwaitResponse(before_reload)), "success") << "written before the reload";
  EXPECT_EQ(ErrorCodeOf(tools().AwaitResponse(after_reload)), "unknown_tool") << "written after the reload";

  PatchOk(id, json::object{{"context", sleep_tool}});
  std::string slow2 = tools().Request("queued", json::object{{"ms", 700}});
  std::string before_delete = tools().Request("queued", json::object{{"ms", 1}});
  ASSERT_EQ(client().Delete("/breadcrumbs/" + id).status, 204);
  std::string after_delete = tools().Request("queued", json::object{{"ms", 1}});
  EXPECT_EQ(StatusOf(tools().AwaitResponse(slow2)), "success");
  EXPECT_EQ(StatusOf(tools().AwaitResponse(before_delete)), "success") << "written before the delete";
  EXPECT_EQ(ErrorCodeOf(tools().AwaitResponse(after_delete)), "unknown_tool") << "written after the delete";
  // A fence, then: exactly one answer each.
  tools().AwaitResponse(tools().Request("echo", json::object{}));
  for (const auto& request : {slow, before_reload, after_reload, slow2, before_delete, after_delete}) {
    EXPECT_EQ(tools().ResponsesTo(request).size(), 1u) << request;
  }
}

TEST_F(e2e_tools, UpdatingADefinitionChangesTheNextRequestAndDeletingItStopsIt) {
  std::string a = WriteScript("v_a.sh", "#!/bin/sh\ncat >/dev/null\necho '{\"script\":\"a\"}' >&3\n");
  std::string b = WriteScript("v_b.sh", "#!/bin/sh\ncat >/dev/null\necho '{\"script\":\"b\"}' >&3\n");
  std::string id = StringAt(tools().DefineTool({{"name", "morph"}, {"runtime", "builtin"}, {"builtin", "echo"}}), "id");
  ASSERT_FALSE(id.empty());
  EXPECT_EQ(OutputOf(Call("morph", json::object{{"ms", 5}})), json::value(json::object{{"ms", 5}}));

  auto redefine = [&](json::object context) {
    context["name"] = "morph";
    PatchOk(id, json::object{{"context", context}});
  };
  redefine({{"runtime", "builtin"}, {"builtin", "sleep"},
            {"input_schema", {{"type", "object"}, {"required", json::array{"ms"}}}}});
  EXPECT_EQ(OutputOf(Call("morph", json::object{{"ms", 5}})), json::value(json::object{{"slept_ms", 5}}));
  // Switching commands back and forth (a stale answer is a race, so it is given several chances).
  json::object process{{"runtime", "process"}, {"env", json::array{"PATH"}}, {"cwd", server().root_dir()}};
  std::vector<std::string> stale;
  for (int i = 0; i < 12; ++i) {
    std::string script = i % 2 == 0 ? "a" : "b";
    process["command"] = json::array{json::value(script == "a" ? a : b)};
    redefine(process);
    json::value out = OutputOf(Call("morph", json::object{}));
    if (out != json::value(json::object{{"script", script}})) {
      stale.push_back("switch " + std::to_string(i) + " to " + script + " answered " + JsonText(out));
    }
  }
  EXPECT_TRUE(stale.empty()) << ::testing::PrintToString(stale);

  // New trigger selector: morph.poke.v1 records, and no longer requests.
  process["subscriptions"] = {{"selectors", json::array{json::object{{"schema_name", "morph.poke.v1"}}}}};
  redefine(process);
  std::string no_longer = tools().Request("morph", json::object{});
  std::string poke = StringAt(CreateOk(json::object{{"title", "poke"}, {"schema_name", "morph.poke.v1"}}), "id");
  json::object poked = tools().AwaitResponse(poke);
  EXPECT_EQ(StringAt(ContextOf(poked), "tool"), "morph");
  EXPECT_EQ(OutputOf(poked), json::value(json::object{{"script", "b"}}));
  EXPECT_EQ(ErrorCodeOf(tools().AwaitResponse(no_longer)), "unknown_tool");

  // Deleted: requests are unknown, pokes go unanswered (fenced by a later poke of a new morph).
  ASSERT_EQ(client().Delete("/breadcrumbs/" + id).status, 204);
  std::string gone = tools().Request("morph", json::object{});
  std::string unanswered = StringAt(CreateOk(json::object{{"title", "poke"}, {"schema_name", "morph.poke.v1"}}), "id");
  EXPECT_EQ(ErrorCodeOf(tools().AwaitResponse(gone)), "unknown_tool");
  tools().DefineTool({{"name", "morph"}, {"runtime", "builtin"}, {"builtin", "echo"}, {"concurrency", 1},
                      {"subscriptions", {{"selectors", json::array{json::object{{"schema_name", "morph.poke.v1"}}}}}}});
  std::string fence = StringAt(CreateOk(json::object{{"title", "poke"}, {"schema_name", "morph.poke.v1"}}), "id");
  EXPECT_EQ(StatusOf(tools().AwaitResponse(fence)), "success");
  EXPECT_TRUE(tools().ResponsesTo(unanswered).empty()) << tools().Describe("tool.response.v1");
  for (const std::string& request : {no_longer, gone}) {
    EXPECT_EQ(tools().ResponsesTo(request).size(), 1u) << request << ": " << tools().Describe("tool.response.v1");
  }
}

}  // namespace
}  // namespace cairn::e2e
