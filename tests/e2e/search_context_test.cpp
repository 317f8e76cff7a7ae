// fetch: "vector" and fetch: "search" subscriptions put the records most similar to the trigger
// into an agent's prompt, as the scripted LLM server sees it.
#include <functional>

#include "session_support.h"

namespace cairn::e2e {
namespace {

// The text of every message of the first of `requests` (chat requests the LLM server got).
std::string FirstPrompt(const std::vector<json::object>& requests) {
  EXPECT_FALSE(requests.empty());
  if (requests.empty()) return "";
  std::string text;
  for (const auto& m : MessagesOf(requests.front())) text += StringAt(m.as_object(), "content") + "\n";
  return text;
}

// Eight log lines of ~300 bytes of context each (far over a 700-token budget) and a runbook; the
// ids of the logs, oldest first.
std::vector<std::string> LogsAndRunbook(const std::function<json::object(const json::value&)>& create) {
  std::vector<std::string> logs;
  for (int i = 0; i < 8; ++i) {
    json::object created = create(json::object{
        {"title", "log " + std::to_string(i)},
        {"schema_name", "log.v1"},
        {"context", json::object{{"line", "log-line-" + std::to_string(i) + " " + std::string(300, 'x')}}}});
    logs.push_back(StringAt(created, "id"));
  }
  create(json::object{{"title", "runbook"}, {"schema_name", "runbook.v1"},
                      {"context", json::object{{"text", "restart the pump first"}}}});
  return logs;
}

// The subscriptions of the budgeted agents: a user.message.v1 for "budgeted" triggers (a session's
// messages are another schema: a session run is started by the session), logs (recent, priority
// 0) and runbook (priority 5) are context.
constexpr const char* kBudgetedSelectors = R"({"selectors": [
      {"schema_name": "user.message.v1", "context_match": [{"path": "$.agent_id", "op": "eq", "value": "budgeted"}]},
      {"role": "context", "key": "logs", "schema_name": "log.v1", "fetch": {"method": "recent", "limit": 8}},
      {"role": "context", "key": "runbook", "schema_name": "runbook.v1", "fetch": "latest", "priority": 5}]})";

// The prompt kept the runbook and the newest logs, dropped the oldest, and `run` (an execution
// view) lists the drop: one entry for "logs" whose ids are the oldest logs, oldest first.
void ExpectBudgetKept(const std::string& prompt, const json::object& run, const std::vector<std::string>& logs) {
  EXPECT_NE(prompt.find("restart the pump first"), std::string::npos) << prompt;  // priority 5: kept
  EXPECT_NE(prompt.find("log-line-7"), std::string::npos) << prompt;              // the newest log stays
  EXPECT_EQ(prompt.find("log-line-0"), std::string::npos) << prompt;              // the oldest went
  // The prompt's context is within the budget's ~4 bytes a token (its JSON is smaller still).
  EXPECT_LT(prompt.size(), 700u * 4 + 1000) << prompt.size();
  const json::value* metadata = run.if_contains("metadata");
  ASSERT_TRUE(metadata && metadata->is_object()) << JsonText(run);
  const json::value* dropped = metadata->as_object().if_contains("context_dropped");
  ASSERT_TRUE(dropped && dropped->is_array() && dropped->as_array().size() == 1) << JsonText(run);
  const json::object& entry = dropped->as_array()[0].as_object();
  EXPECT_EQ(StringAt(entry, "key"), "logs");
  EXPECT_EQ(StringAt(entry, "fetch"), "recent");
  int64_t count = IntAt(entry, "dropped");
  EXPECT_GE(count, 1);
  EXPECT_LT(count, 8);
  EXPECT_EQ(IntAt(entry, "kept"), 8 - count);
  const json::array& ids = entry.at("ids").as_array();
  ASSERT_EQ(static_cast<int64_t>(ids.size()), count);
  for (int64_t i = 0; i < count; ++i) EXPECT_EQ(ids[i].as_string(), logs[i]) << i;
  for (int64_t i = count; i < 8; ++i) {
    EXPECT_NE(prompt.find("log-line-" + std::to_string(i) + " "), std::string::npos) << "kept " << i;
  }
}

class e2e_search_context : public AgentTest {
 protected:
  std::string Prompt() { return FirstPrompt(LlmRequests()); }
  void Notes() {
    for (const char* body : {
             R"({"title":"harbour note","schema_name":"note.v1","context":{"text":"the ferry to Cacilhas leaves the Lisbon harbour hourly"}})",
             R"({"title":"tax note","schema_name":"note.v1","context":{"text":"quarterly VAT filing is due in April"}})",
             R"({"title":"garden note","schema_name":"note.v1","context":{"text":"water the tomatoes every morning"}})"}) {
      CreateOk(json::parse(body));
    }
  }
};

TEST_F(e2e_search_context, FetchVectorPutsTheNearestNotesIntoThePrompt) {
  Script({Rule(json::object{{"last_role", "user"}}, json::object{{"content", "noted"}})});
  DefineAgent(json::object{{"agent_id", "librarian"}, {"system_prompt", "Answer from the notes."},
                           {"subscriptions", json::parse(R"({"selectors": [
      {"schema_name": "user.message.v1", "context_match": [{"path": "$.agent_id", "op": "eq", "value": "librarian"}]},
      {"role": "context", "key": "similar_notes", "schema_name": "note.v1", "fetch": {"method": "vector", "limit": 1}}]})")}});
  Notes();
  ASSERT_TRUE(SearchCaughtUp(client()));
  json::object answer = AwaitAnswer(Say("When does the ferry leave the Lisbon harbour?", "librarian"));
  EXPECT_EQ(StringAt(ContextOf(answer), "status"), "success") << JsonText(answer);
  const std::string prompt = Prompt();
  EXPECT_NE(prompt.find("similar_notes"), std::string::npos) << prompt;
  EXPECT_NE(prompt.find("Cacilhas"), std::string::npos) << prompt;
  EXPECT_EQ(prompt.find("VAT"), std::string::npos) << prompt;  // limit 1: only the nearest
  EXPECT_EQ(prompt.find("tomatoes"), std::string::npos) << prompt;
}

TEST_F(e2e_search_context, FetchSearchPutsFullTextMatchesIntoThePrompt) {
  Script({Rule(json::object{{"last_role", "user"}}, json::object{{"content", "noted"}})});
  DefineAgent(json::object{{"agent_id", "clerk"}, {"system_prompt", "Answer from the notes."},
                           {"subscriptions", json::parse(R"({"selectors": [
      {"schema_name": "user.message.v1", "context_match": [{"path": "$.agent_id", "op": "eq", "value": "clerk"}]},
      {"role": "context", "key": "matching_notes", "schema_name": "note.v1", "fetch": {"method": "search", "limit": 5}}]})")}});
  Notes();
  // Full text needs no worker: the index changed with each write.
  json::object answer = AwaitAnswer(Say("Is VAT filing due soon?", "clerk"));
  EXPECT_EQ(StringAt(ContextOf(answer), "status"), "success") << JsonText(answer);
  const std::string prompt = Prompt();
  EXPECT_NE(prompt.find("matching_notes"), std::string::npos) << prompt;
  EXPECT_NE(prompt.find("quarterly VAT filing"), std::string::npos) << prompt;
  EXPECT_EQ(prompt.find("tomatoes"), std::string::npos) << prompt;  // shares no word with the question
}

// A subscription's CEL `query` computes the search text from the trigger: here one field of it,
// so the other words of the message find nothing. A bad expression is refused when the
// definition is written, naming the field.
TEST_F(e2e_search_context, AQueryExpressionChoosesWhatToSearchFor) {
  const std::string selectors = R"({"selectors": [
      {"schema_name": "user.message.v1", "context_match": [{"path": "$.agent_id", "op": "eq", "value": "clerk"}]},
      {"role": "context", "key": "matching_notes", "schema_name": "note.v1", "fetch": "search", "limit": 5, "query": QUERY}]})";
  auto with_query = [&](const std::string& query) {
    std::string text = selectors;
    text.replace(text.find("QUERY"), 5, query);
    return json::object{{"agent_id", "clerk"}, {"system_prompt", "Answer from the notes."}, {"subscriptions", json::parse(text)}};
  };
  const auto before = StoreSnapshot();
  for (const char* bad : {R"("record.context.(")", R"(7)"}) {
    Response r = client().Post("/breadcrumbs", JsonText(json::object{{"schema_name", "agent.def.v1"}, {"title", "agent"},
                                                                     {"context", with_query(bad)}}));
    EXPECT_TRUE(IsError(r, 422, "validation_failed", "context.subscriptions.selectors[1].query")) << bad << ": " << r.Describe();
  }
  EXPECT_EQ(StoreSnapshot(), before);  // refused: nothing written

  Script({Rule(json::object{{"last_role", "user"}}, json::object{{"content", "noted"}})});
  DefineAgent(with_query(R"("record.context.about")"));
  Notes();
  json::object trigger = CreateOk(json::object{
      {"schema_name", "user.message.v1"},
      {"title", "what about the Lisbon harbour ferry?"},
      {"tags", json::array{"session:s1"}},
      {"context", json::object{{"content", "what about the Lisbon harbour ferry?"}, {"agent_id", "clerk"}, {"about", "VAT"}}}});
  json::object answer = AwaitAnswer(StringAt(trigger, "id"));
  EXPECT_EQ(StringAt(ContextOf(answer), "status"), "success") << JsonText(answer);
  const std::string prompt = Prompt();
  EXPECT_NE(prompt.find("quarterly VAT filing"), std::string::npos) << prompt;
  EXPECT_EQ(prompt.find("Cacilhas"), std::string::npos) << prompt;  // in the message, not in the query
}

// context_budget_tokens bounds the context the LLM sees: the higher-priority section is whole,
// the lower one loses its oldest records, and the execution record lists what was dropped.
TEST_F(e2e_search_context, AContextBudgetKeepsHighPrioritySectionsAndRecordsTheDrop) {
  Script({Rule(json::object{{"last_role", "user"}}, json::object{{"content", "noted"}})});
  std::vector<std::string> logs = LogsAndRunbook([this](const json::value& body) { return CreateOk(body); });
  DefineAgent(json::object{{"agent_id", "budgeted"}, {"context_budget_tokens", 700},
                           {"subscriptions", json::parse(kBudgetedSelectors)}});
  json::object answer = AwaitAnswer(Say("what now?", "budgeted"));
  ASSERT_EQ(StringAt(ContextOf(answer), "status"), "success") << JsonText(answer);
  Response r = client().Get("/executions/" + StringAt(ContextOf(answer), "execution_id"));
  ASSERT_EQ(r.status, 200) << r.Describe();
  ExpectBudgetKept(Prompt(), ObjectOf(r), logs);
}

// A session's run assembles its context the same way, bounded by the same budget.
class e2e_search_context_session : public SessionTest {};

TEST_F(e2e_search_context_session, ASessionRunKeepsItsContextWithinTheBudgetAndRecordsTheDrop) {
  Script({Rule(json::object{{"last_role", "user"}}, json::object{{"content", "noted"}})});
  std::vector<std::string> logs = LogsAndRunbook([this](const json::value& body) { return CreateOk(body); });
  SessionAgent("budgeted", json::object{{"context_budget_tokens", 700}, {"tools", json::array{}},
                                        {"subscriptions", json::parse(kBudgetedSelectors)}});
  std::string sid = NewSessionId("budgeted");
  SessionStream stream(server(), sid);
  ASSERT_TRUE(stream.Open()) << stream.Describe();
  Posted posted = Send(sid, "what now?");
  auto end = stream.AwaitEnd(posted.execution_id);
  ASSERT_TRUE(end.has_value());
  ASSERT_EQ(end->event_type, "execution.completed") << end->Describe();
  ExpectBudgetKept(FirstPrompt(LlmRequests()), GetExecution(posted.execution_id), logs);
}

}  // namespace
}  // namespace cairn::e2e
